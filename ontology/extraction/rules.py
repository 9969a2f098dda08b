"""Rule extractors: the regular facts papers state in regular ways.

Run on every sentence of every paper before the LLM (they are cheap and exact): GPU models,
counts and memory, software versions, model sizes, block/chunk/batch sizes, parallelism degrees,
SLOs, bandwidths, and headline improvements ("2-4× higher throughput"). Each rule names a
canonical parameter; the value is the text as stated, so grounding can find it in the quote.
Patterns are written for the field's phrasing in general, never for one paper's sentences.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from ontology.extraction.facts import new_fact
from ontology.extraction.text import Sentence, readable_quote
from ontology.gpus import vocabulary as gpu_vocabulary
from ontology.vocabulary import canonical_parameter, kind_of_name, spec_for

N = r"(?<![\d,.])\d[\d,]*(?:\.\d+)?"  # starts only where a number starts: linear on long digit runs
NK = r"(?<![\d,.])\d[\d,]*(?:\.\d+)?(?:[Kk](?![a-zA-Z]))?"  # "50K tokens per second"
GPU = gpu_vocabulary().pattern(with_brand=True)
SOFTWARE = {
    "cuda_version": r"CUDA(?:\s+[Tt]oolkit)?",
    "pytorch_version": r"P[yY][Tt]orch",
    "flash_attn_version": r"Flash-?Attention(?:-?2)?",
    "vllm_version": r"vLLM",
    "triton_version": r"Triton",
    "transformers_version": r"[Tt]ransformers",
    "tensorrt_llm_version": r"TensorRT-LLM",
    "nccl_version": r"NCCL",
    "python_version": r"Python",
    "driver_version": r"(?:NVIDIA\s+)?[Dd]river",
}
MODEL_FAMILY = (r"(?:OPT|LLaMA|Llama|LLAMA|Mistral|Mixtral|Yi|Falcon|Vicuna|Qwen|GPT-?3|GPT-J|GPT-NeoX|BLOOM|"
                r"Gemma|CodeLlama|DeepSeek|Baichuan|InternLM|ChatGLM|Pythia)")
VERSION = r"\d+\.\d+(?:\.\d+)?"
TIME = rf"{N}\s?(?:ms|s|sec|seconds?|milliseconds?)\b"
_VERB = r"\s*(?:\([^)]{0,12}\)\s*)?(?:of|is|=|:|to|as|was|be|equals?|is set to|are set to|set to)?\s*"


@dataclass(frozen=True)
class Rule:
    """One pattern with a `v` group (the stated value) and the parameter it states."""

    name: str
    pattern: re.Pattern[str]
    parameter: str | Callable[[re.Match[str], Sentence], str | None]
    unit: str | None = None
    confidence: float = 0.8
    split_list: bool = False
    prose_only: bool = False  # needs a real sentence: in table runs the number may belong to another cell
    kind: str | None = None  # the fact kind when the parameter has no template (a coined name)


def _rule(name: str, pattern: str, parameter, unit=None, confidence=0.8, flags=0, split_list=False,
          prose_only=False, kind=None) -> Rule:
    return Rule(name, re.compile(pattern, flags), parameter, unit, confidence, split_list, prose_only, kind)


def looks_like_table(sentence: Sentence) -> bool:
    """Table rows and figure axes come out as runs of numbers; prose has few."""
    tokens = sentence.text.split()
    numeric = sum(1 for token in tokens if re.fullmatch(r"[\d.,%×x()-]+[A-Za-z]{0,2}", token))
    return len(tokens) >= 8 and numeric / len(tokens) > 0.3


def _batch_parameter(match: re.Match[str], _: Sentence) -> str:
    qualifier = (match.group("q") or "").lower()
    if qualifier.startswith("max"):
        return "max_batch_size"
    return f"{qualifier}_batch_size" if qualifier in {"global", "micro", "dense"} else "batch_size"


def _chunk_parameter(match: re.Match[str], _: Sentence) -> str:
    unit = (match.groupdict().get("u") or "").upper()
    return "physical_chunk_size" if unit in {"KB", "MB", "GB"} else "chunk_size"


def _host_memory(match: re.Match[str], sentence: Sentence) -> str | None:
    before = sentence.text[max(0, match.start() - 30) : match.start()]
    return None if re.search(GPU + r"|GPU", before) else "host_memory_gb"


# The choices below read the whole sentence; each is made once per sentence (cached on its text),
# since a long sentence with many matches would otherwise be re-read for every match.
def _bandwidth(match: re.Match[str], sentence: Sentence) -> str | None:
    return _bandwidth_in(sentence.text, match.group("u").lower().startswith("gb/"))


@lru_cache(maxsize=256)
def _bandwidth_in(sentence_text: str, gigabytes: bool) -> str | None:
    text = sentence_text.lower()
    if "pcie" in text and gigabytes:
        return "pcie_bandwidth_gb_s"
    if re.search(r"transfer|transmi|migrat", text) and not re.search(r"network|rdma|infiniband|\bib\b", text):
        return "kv_transfer_bandwidth_gbps"
    if re.search(r"network|rdma|infiniband|\bib\b|inter-?node|cross-?node|\bnic|ethernet|roce|interconnect", text):
        return "network_bandwidth_gbps"
    if "nvlink" in text and gigabytes:
        return "nvlink_bandwidth_gb_s"
    return None


@lru_cache(maxsize=256)
def _states_a_target(sentence_text: str) -> bool:
    return re.search(r"SLO|SLA|deadline|threshold|upper limit|capped|latency (?:target|requirement)",
                     sentence_text) is not None


def _slo_time(match: re.Match[str], sentence: Sentence) -> str | None:
    if not _states_a_target(sentence.text):
        return None
    before = sentence.text[max(0, match.start() - 70) : match.start()]
    hits = [(m.end(), "slo_ttft_ms") for m in re.finditer(r"TTFT|first token", before, re.IGNORECASE)]
    hits += [(m.end(), "slo_tpot_ms") for m in re.finditer(
        r"TPOT|TBT|between tokens|per token|inter-token|ITL", before, re.IGNORECASE)]
    return max(hits)[1] if hits else None


def _tokens_per_s(match: re.Match[str], sentence: Sentence) -> str | None:
    kind = _throughput_kind(sentence.text)
    if kind:
        return kind
    near = sentence.text[max(0, match.start() - 80) : match.start()].lower()
    if re.search(r"generat|decod|output", near):
        return "generation_throughput_tokens_per_s"
    if re.search(r"prefill|prompt|input", near):
        return "prefill_throughput_tokens_per_s"
    return "throughput_tokens_per_s"


@lru_cache(maxsize=256)
def _throughput_kind(sentence_text: str) -> str | None:
    """The kind of throughput the whole sentence settles (an SLO, a peak), or None."""
    text = sentence_text.lower()
    if re.search(r"\bsl[oa]\b", text):
        return "slo_generation_tokens_per_s" if "generat" in text else "slo_prompt_tokens_per_s"
    if re.search(r"optimal|theoretical|peak|upper bound", text):
        return "optimal_throughput_tokens_per_s"
    return None


_NOT_COUNTED = re.compile(r"^(?:values|sizes|lengths|rates|ratios|numbers|times|steps|results|settings|ranges|lens|"
                          r"bits|bytes|seconds|milliseconds|tokens|parameters|percentages|factors|levels)$")


def _swept_count(match: re.Match[str], _: Sentence) -> str | None:
    """num_<noun> for a count swept over a range ("clients ranging from 1 to 32" -> num_clients)."""
    noun = match.group("noun").lower()
    return None if _NOT_COUNTED.match(noun) else canonical_parameter(f"num_{noun}")


def _named(parameter: str, *required: str) -> Callable[[re.Match[str], Sentence], str | None]:
    """The parameter, only when one of `required` (lower-case regexes) is within 80 characters."""

    def pick(match: re.Match[str], sentence: Sentence) -> str | None:
        text = sentence.text[max(0, match.start() - 80) : match.end() + 80].lower()
        return parameter if not required or any(re.search(word, text) for word in required) else None

    return pick


RULES: list[Rule] = [
    # hardware
    # the count is a bare number: "(80GB) GPUs" states memory, not 80 GPUs
    _rule("gpu_count", r"(?<![\w.,×])(?P<v>\d{1,5})(?!\s?(?:[KMGT]i?B|%)(?![A-Za-z]))\s*(?:×\s*|x\s+)?(?:(?:(?!(?:bytes?|bits?|for|of|per|on|in|with|by|and|or|to|"
          r"from|across|than|the|all|between|among)\b)[A-Za-z(][\w()\-]{0,40}|\d+\s?GB)\s+){0,4}GPUs\b",
          "gpu_count", "GPUs", 0.8),
    _rule("gpu_times", rf"(?<![\w.])(?P<v>\d{{1,4}})\s?[x×]\s?{GPU}", "gpu_count", "GPUs", 0.75),
    _rule("gpu_plural", rf"(?<![\w.,])(?P<v>\d{{1,4}})\s+(?:NVIDIA\s+|AMD\s+)?(?=[A-Z])(?:{GPU})s\b", "gpu_count", "GPUs", 0.7),
    _rule("gpu_memory_after", rf"{GPU}(?:[- ]SXM\d?|[- ]PCIe)?[^.;]{{0,25}}?(?<![\d.])(?P<v>\d{{2,3}})\s?GB\b(?!/)",
          "gpu_memory_gb", "GB", 0.8),
    _rule("gpu_memory_before", rf"(?<![\d.])(?P<v>\d{{2,3}})\s?GB\s+{GPU}", "gpu_memory_gb", "GB", 0.8),
    _rule("gpu_memory_hbm", r"(?<![\d.])(?P<v>\d{2,3})\s?GB\s+(?:of\s+)?(?:HBM\d?e?|GPU memory|device memory)",
          "gpu_memory_gb", "GB", 0.75),
    _rule("host_memory", rf"(?<![\d.])(?P<v>{N})\s?(?:GB|TB)\s+(?:of\s+)?(?:DRAM|host memory|CPU memory|main memory|RAM|DDR\d?)",
          _host_memory, "GB", 0.7),
    # software
    *[
        _rule(name, rf"\b{pattern}\s*(?:version\s*|release\s*)?\(?v?(?P<v>{VERSION})\b", name, None, 0.85)
        for name, pattern in SOFTWARE.items()
    ],
    *[
        _rule(f"{name}_reversed", rf"\bv?(?P<v>{VERSION})\s+(?:version|release)\s+of\s+{pattern}", name, None, 0.85)
        for name, pattern in SOFTWARE.items()
    ],
    # models
    _rule("model_size", rf"\b{MODEL_FAMILY}[\s-]*(?:\d(?:\.\d)?[\s-]+)?(?P<v>\d+(?:\.\d+)?)\s?B\b", "model_size_b", "B params", 0.6),
    _rule("model_size_family_list", rf"\b{MODEL_FAMILY}[\s-]*(?:\d(?:\.\d)?[\s-]+)?(?P<v>\d+(?:\.\d+)?B(?:\s*(?:,|/|,?\s*and|,?\s*or)"
          r"\s*\d+(?:\.\d+)?B)+)\b", "model_size_b", "B params", 0.6, split_list=True),
    _rule("model_size_named", r"\b[A-Z][A-Za-z]{1,15}\d?(?:\.\d)?-(?P<v>\d+(?:\.\d+)?)B\b", "model_size_b", "B params", 0.6),
    _rule("model_size_list", r"(?<![\d.])(?P<v>\d+(?:\.\d+)?B(?:\s*,\s*\d+(?:\.\d+)?B){0,20}(?:,?\s*(?:and|or)\s*\d+(?:\.\d+)?B)?)\s+param",
          "model_size_b", "B params", 0.7),
    _rule("model_size_words", r"(?<![\d.])(?P<v>\d+(?:\.\d+)?)(?:\s?B-|\s+billion[\s-])param", "model_size_b", "B params", 0.7),
    _rule("model_memory", rf"(?P<v>{N})\s?GB\s+of\s+memory[^.]{{0,40}}(?:parameters|weights)", "model_memory_gb", "GB", 0.6, prose_only=True),
    # knobs
    # one size, or an enumerated list of them ("batch sizes of 8, 16, and 32": every one is a setting)
    _rule("batch_size", rf"\b(?P<q>max(?:imum|imal)?|global|micro|dense)?[\s-]*batch[\s-]*sizes?{_VERB}"
          r"(?P<v>\d{1,5}(?:\s*,\s*\d{1,5}){0,8},?\s*(?:and|or)\s*\d{1,5}|\d[\d,]*)\b(?!\.\d|%|×)",
          _batch_parameter, None, 0.75, re.IGNORECASE, split_list=True),
    _rule("block_size", rf"\b(?:KV[\s-]*cache\s+)?(?:block|page)[\s-]*sizes?{_VERB}(?P<v>\d+)\b(?!\s?(?:KB|MB|GB|%))",
          "block_size", "tokens", 0.8, re.IGNORECASE),
    _rule("block_tokens", r"\b[Ee]ach (?:page|block|KV block) (?:holds|contains|stores)[^;]{0,60}?(?P<v>\d+) tokens",
          "block_size", "tokens", 0.7),
    _rule("block_of_tokens", r"\b(?:blocks?|pages?) of (?P<v>\d+) tokens", "block_size", "tokens", 0.6),
    _rule("chunk_size", rf"\b(?:token budget|(?:prefill\s+)?chunk[\s-]*sizes?|chunked[\s-]prefill size|max_num_batched_tokens)"
          rf"{_VERB}(?P<v>\d(?:[\d,]*\d)?(?:\s*(?:,|,?\s*and|,?\s*or)\s*\d(?:[\d,]*\d)?)*)(?:\s*(?P<u>tokens|KB|MB|GB)\b)?",
          _chunk_parameter, None, 0.8, re.IGNORECASE, split_list=True),
    _rule("chunk_size_before", r"(?<![\d.])(?P<v>\d+)\s?(?P<u>KB|MB|GB|tokens?)\s+chunk[\s-]*size", _chunk_parameter, None, 0.75),
    _rule("tp_short", r"\bTP\s*(?:size|degree)?\s*(?:=|:|of|is set to|is)?\s*(?P<v>\d{1,2})\b(?!\.\d)", "tensor_parallel_size", "GPUs", 0.75),
    _rule("tp_long", r"\btensor[\s-]*parallel(?:ism)?\s*(?:size|degree)?\s*(?:of|=|is|:|across|with|to)\s*(?P<v>\d{1,2})\b",
          "tensor_parallel_size", "GPUs", 0.75, re.IGNORECASE),
    _rule("tp_across", r"\b(?:across|over|on|onto)\s+(?P<v>\d{1,2})\s+GPUs\s+(?:with|using|via|through|by)\s+tensor[\s-]*"
          r"parallel", "tensor_parallel_size", "GPUs", 0.7, re.IGNORECASE),
    _rule("tp_way", r"(?P<v>\d{1,2})[\s-]*way\s+tensor[\s-]*parallel", "tensor_parallel_size", "GPUs", 0.75, re.IGNORECASE),
    _rule("tp_intra", r"\bintra-?op(?:erator)?(?:\s+parallelism)?\s*(?:degree\s*)?(?:equals|=|of|is|to)\s*(?P<v>\d+(?:\s*,\s*\d+)*(?:,?\s*and\s*\d+)?)",
          "tensor_parallel_size", None, 0.7, re.IGNORECASE),
    _rule("pp_short", r"\bPP\s*(?:size|degree)?\s*(?:=|:|of|is set to|is)?\s*(?P<v>\d{1,2})\b(?!\.\d)", "pipeline_parallel_size", "GPUs", 0.75),
    _rule("pp_long", r"\bpipeline[\s-]*parallel(?:ism)?\s*(?:size|degree)?\s*(?:of|=|is|:|to)\s*(?P<v>\d{1,2})\b",
          "pipeline_parallel_size", "GPUs", 0.75, re.IGNORECASE),
    _rule("pp_stages", r"(?P<v>\d{1,2})\s+pipeline stages", "pipeline_parallel_size", "GPUs", 0.7),
    _rule("max_seq_len", rf"\b(?:max(?:imum)?|longest)\s+(?:sequence|context|input|prompt)\s+length{_VERB}(?:\(e\.g\.,\s*)?(?P<v>\d[\d,]*[Kk]?)",
          "max_seq_len", "tokens", 0.7, re.IGNORECASE),
    _rule("window_size", rf"\b(?:sliding\s+)?window(?:\s+size|\s+length)?{_VERB}(?P<v>\d+)\b(?!\s?(?:%|×|GB|MB))",
          "window_size", "tokens", 0.6, re.IGNORECASE),
    _rule("truncation", r"\b(?:cut|truncat|drop)\w*\s+(?:off\s+)?(?:the\s+)?(?P<where>prompts?\s+to\s+the\s+)?(?:first|last)\s+(?P<v>\d[\d,]*[Kk]?)\s+tokens",
          lambda m, s: "max_input_len" if m.group("where") else "truncation_tokens", "tokens", 0.65),
    _rule("gpu_partitioning", r"(?P<v>NVIDIA MPS|Multi-Process Service|\bMPS\b|\bMIG\b|Multi-Instance GPU)",
          _named("sm_partitioning", r"partition|\bsms?\b|share"), None, 0.6),
    _rule("host_memory_cpu", rf"\b(?:CPUs?|Xeon|EPYC|processors?)\b[^.;]{{0,40}}?(?<![\d.])(?P<v>{N})\s?(?:GB|TB)\s+(?:of\s+)?"
          r"(?:memory|RAM|DRAM)\b", "host_memory_gb", "GB", 0.65),
    _rule("host_memory_range", rf"from (?P<v>{N}\s?GB to {N}\s?GB)", _named("host_memory_gb", r"cpu|host|dram|main memory"), "GB", 0.5),
    _rule("slo_scale", r"\bSLO scales?\s*(?:of|=|is|to)?\s*(?P<v>\d+(?:\.\d+)?)\b", "slo_scale", None, 0.75),
    _rule("slo_time", rf"(?<![\d.])(?P<v>{TIME})", _slo_time, "ms", 0.7),
    _rule("counted", r"(?<![\d.,])(?P<v>\d[\d,]*)\s+(?:LoRA\s+)?(?P<noun>replicas|adapters|threads|clients)\b",
          lambda m, s: {"replicas": "num_replicas", "adapters": "num_adapters", "clients": "num_clients",
                        "threads": "io_threads" if re.search(r"read|i/o|\bio\b|load", s.text, re.I) else None}[m.group("noun")],
          None, 0.6),
    _rule("swept_count", rf"\b(?P<noun>[a-z]{{3,}}s)\s+\(?(?:rang(?:e|es|ing)|var(?:y|ies|ying))\s+from\s+(?P<v>{N}\s*(?:to|-|–)\s*{N})\b",
          _swept_count, None, 0.55, prose_only=True),
    _rule("node_count", r"(?<![\d.,])(?P<v>\d{1,4})(?:\s+|-)(?:GPU\s+|compute\s+)?(?:nodes?|servers?|machines?)\b(?![\w-])",
          "num_nodes", "nodes", 0.6),
    # rates and bandwidths
    _rule("bandwidth", rf"(?<![\d.])(?P<v>{N}(?:\s*[*×]\s*{N})?)\s?(?P<u>Gbps|Gb/s|GB/s|TB/s)", _bandwidth, None, 0.7),
    _rule("tflops", rf"(?<![\d.])(?P<v>{N})\s?TFLOP(?:S|s)?(?:/s)?\b", _named("attention_tflops", "attention", "kernel"), "TFLOP/s", 0.6),
    _rule("tokens_per_s", rf"(?<![\d.])(?P<v>{NK}(?:,\s*{NK})*(?:,?\s*(?:or|and)\s*{NK})?)\s?\(?(?:tokens?|tok)\s?"
          r"(?:/\s?s(?:ec)?\b|per second)", _tokens_per_s, "tokens/s", 0.6),
    _rule("kv_cache_memory", rf"(?<![\d.])(?P<v>{N})\s?GB\b(?!/)", _named("kv_cache_per_request_gb", r"kv[- ]?cache"), "GB", 0.6,
          prose_only=True),
    _rule("memory_freed", rf"\bfrees?\b[^;]{{0,60}}?(?P<v>{N})\s?GB\b", "memory_freed_gb", "GB", 0.6),
]


# A knob's value stated as what the system can do ("can serve 2,000 adapters") is a constraint.
CAPABILITY = re.compile(
    r"\bcan (?:\w+ )?(?:serve|accommodate|support|sustain|handle|scale|process|reach|run)|\breach(?:es|ed)?\b|"
    r"\bachiev|\bas (?:many|large) as\b", re.IGNORECASE)


# ... unless the sentence sets it ("to reach a balance, we set the kernel size to 32").
SETTING_VERB = re.compile(r"\b(?:set|sets|setting|chose|choose|chosen|fix|fixed|configure[ds]?|use|uses|used)\b",
                          re.IGNORECASE)


# A range the experiments sweep ("clients ranging from 1 to 32", "varying the rate from 1 to 8") is a setting.
SWEEP = re.compile(r"\b(?:rang(?:e|es|ing)|var(?:y|ies|ying|ied))\s+(?:\w+\s+)?from\b", re.IGNORECASE)


# Names of results (a speedup, a change, a measured level): constraints whatever verb the sentence uses.
RESULT_NAME = re.compile(r"speedup|_reduction|_improvement|_increase|_gain|_saving|_overhead|_pct$|_version$")


def _kind(default: str, match: re.Match[str], sentence: Sentence) -> str:
    near = sentence.text[max(0, match.start() - 80) : match.end() + 40]
    if default != "parameter" or not CAPABILITY.search(near):
        return default
    return default if SETTING_VERB.search(sentence.text[max(0, match.start() - 80) : match.end()]) else "constraint"


def _values(rule: Rule, text: str) -> Iterator[str]:
    if rule.split_list:
        # a comma before three digits is a thousands separator ("1,024"), not a list
        yield from (value for value in re.split(r"\s*(?:,(?!\d{3}\b)|/|\band\b|\bor\b)\s*", text) if value)
    else:
        yield text


def _fact_kind(rule: Rule, parameter: str, match: re.Match[str], sentence: Sentence) -> str:
    """The template's kind, else the kind the name's shape implies, else the rule's, else a setting verb
    before the value makes it a parameter ("we use 32 threads") and anything else a constraint."""
    before = sentence.text[max(0, match.start() - 80) : match.start()]
    setting = SETTING_VERB.search(before) or SETTING_VERB.search(match.group()) or SWEEP.search(match.group())
    default = kind_of_name(parameter) or rule.kind
    if default is None:
        default = "parameter" if setting else "constraint"
    elif default == "constraint" and setting and spec_for(parameter) is None and not RESULT_NAME.search(parameter):
        default = "parameter"  # "the buffer is set to 4 GB": an amount the paper sets is a knob
    return _kind(default, match, sentence)


def apply_rules(sentences: list[Sentence], subject: str, rules: list[Rule] | None = None) -> list[dict]:
    """Every fact the rules find, one per (parameter, value, page); the plainest sentence is its quote."""
    found: dict[tuple[str, str, int], tuple[bool, dict]] = {}
    for sentence in sentences:
        table = looks_like_table(sentence)
        for rule in RULES if rules is None else rules:
            if table and rule.prose_only:
                continue
            for match in rule.pattern.finditer(sentence.text):
                parameter = rule.parameter(match, sentence) if callable(rule.parameter) else rule.parameter
                if not parameter:
                    continue
                spec = spec_for(parameter)
                unit = rule.unit or match.groupdict().get("u") or (spec.unit if spec else None)
                quote = readable_quote(sentence, match.start(), match.end())
                if quote is None:
                    continue
                for value in _values(rule, match.group("v").strip()):
                    if re.fullmatch(r"0+", value):
                        continue  # axis ticks and table zeros, never a setting
                    key = (parameter, value.replace(" ", ""), sentence.page)
                    if key in found and (found[key][0] <= table) and len(found[key][1]["quote"]) <= len(quote):
                        continue  # keep the prose sentence, then the shorter one
                    kind = _fact_kind(rule, parameter, match, sentence)
                    found[key] = (table, new_fact(kind, subject, parameter, value=value, unit=unit, page=sentence.page,
                                                  quote=quote, confidence=rule.confidence, extractor="rules"))
    return [fact for _, fact in found.values()]
