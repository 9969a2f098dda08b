"""Generic statement patterns: how papers state a quantity, whatever the quantity is called.

Run with the named rules on every sentence. Where a rule in ontology.extraction.rules knows one
knob ("block size of 16"), these know the shapes every knob and result is stated in, and name the
quantity afterwards through ontology.extraction.naming:
  "<noun phrase> size/length/degree/... (is set to|of|=) N [unit]"      -> a knob and its value
  "reduces <noun phrase> by N%", "N% <noun phrase> reduction"           -> <phrase>_reduction_pct
  "N-way <kind> parallelism", "<kind> parallelism of N"                 -> <kind>_parallel_size
  "<Software> vX.Y.Z"                                                   -> <software>_version
  "FP8/INT4/... precision", "N bits" near KV cache, weights or activations
  "NB activated (parameters)", "context length of 128K tokens", "TTFT below 200ms"
No pattern names a paper, a system or a number from a corpus paper.
"""
from __future__ import annotations

import re

from ontology.extraction.improvements import metric_named
from ontology.extraction.naming import name_quantity, snake
from ontology.extraction.rules import MODEL_FAMILY, N, Rule, _rule
from ontology.extraction.text import Sentence
from ontology.vocabulary import canonical_parameter

NUM = r"\d(?:[\d,]*\d)?(?:\.\d+)?(?:[Kk](?![a-zA-Z]))?"
WORD = r"[A-Za-z][\w-]*"
# A word of a noun phrase: not a preposition, conjunction or the verb of the statement.
NPWORD = (r"(?!(?:the|a|an|our|its|their|this|each|in|of|for|on|with|by|at|to|from|and|or|while|when|that|which|"
          r"than|as|is|are|was|were|"
          r"drops?|falls?|grows?|rises?|uses?|using|has|have|sets?|we|it|extend\w*|increas\w*|reduc\w*|adopt\w*|"
          r"employ\w*|choos\w*|chose|configur\w*|keeps?|kept|makes?|appl(?:y|ies|ied)|enabl\w*|requir\w*|needs?|"
          r"achiev\w*|supports?)\b)[A-Za-z][\w-]*")
HEADS = (r"size|length|degree|budget|threshold|ratio|window|limit|interval|factor|rank|dimension|width|"
         r"depth|count|capacity|timeout|period|fraction|percentage|watermark|stride|temperature|rate")
PCT = rf"{N}\s?%?\s?(?:-|–|to)\s?{N}\s?%|{N}\s?%"  # "29-69%", "10% to 20%", "93.3%"
UNITS = r"tokens?|ms|s|seconds?|GB|MB|KB|GiB|MiB|%|bits?|requests?|layers?|heads?|experts?|steps?|epochs?"
# A noun phrase of up to four words ending in a head noun; "the"/"a" are left out of the phrase.
KNOB_NP = rf"(?P<np>(?:{NPWORD}\s+){{0,3}}?(?:{HEADS}))"
# How a value is tied to its noun phrase: "is set to", "is chosen as", "= ", "of"; a symbol may name the
# quantity before an equals sign ("the compression block size lc = 32").
SETTING = (r"(?:is |are |was |were |be )?(?:set|fixed|chosen|configured|selected|limited|capped|initiali[sz]ed)"
           r" (?:to be|to|as|at)")
CONNECTIVE = rf"of|=|:|{SETTING}|equals?(?: to)?|is|are|was|were|to|as|defaults? to"
CONNECT = (r"\s*(?:\([^)]{0,16}\)\s*)?(?:[a-z]\s*,\s*)?(?:[A-Za-z][A-Za-z0-9]{0,3}\s*(?==))?"
           rf"(?:{CONNECTIVE})?\s*(?:commonly |typically |usually |only |about )?")
# The value is the whole number: not the start of "2.5×", "30%", "7.5e-3" or "7 × 10^-3".
NOT_MORE = r"(?!\d|\.\d|\s?[×x%]|\s?[eE]\s?[-−+]?\s?\d|-[A-Za-z])"
_NOT_A_KNOB = re.compile(r"^(?:sequence|context|prompt|input|output|request) length$|^batch size$|^block size$|"
                         r"^chunk size$|^page size$|^window size$|^model size$", re.IGNORECASE)


def _knob_name(match: re.Match[str], sentence: Sentence) -> str | None:
    phrase = re.sub(r"^(?:the|a|an|our|its|their|each|this)\s+", "", match.group("np"), flags=re.IGNORECASE)
    if _NOT_A_KNOB.match(phrase) or len(phrase) < 4:
        return None  # the named rules state these with their own conditions
    if re.search(r"\b(?:figure|table|section|equation|appendix)\b", phrase, re.IGNORECASE):
        return None
    name = name_quantity(phrase, _UNIT_SUFFIX.get((match.groupdict().get("u") or "").lower(), ""))
    return name.parameter if name else None


# Amounts of memory and times carry their unit in the name, as annotators write them (gpu_memory_gb,
# slo_ttft_ms). Sizes in tokens or blocks carry none. Seconds are left alone: the template-less value
# would keep its number while its unit became ms.
_UNIT_SUFFIX = {"gb": "_gb", "gib": "_gb", "ms": "_ms"}


def _change_name(match: re.Match[str], sentence: Sentence) -> str | None:
    """The metric a percentage change is about: a catalogue metric the words name ("more requests",
    "inference cost"), else the longest tail of the noun phrase the vocabulary knows, else a name
    coined from the whole phrase ("KV cache" -> kv_cache_reduction_pct)."""
    phrase = re.sub(r"^(?:the|a|an|our|its|their)\s+", "", match.group("np").strip(), flags=re.IGNORECASE)
    if not phrase or re.search(r"\b(?:figure|table|section|error|accuracy|loss)\b", phrase, re.IGNORECASE):
        return None
    verb = match.group("dir").lower()
    direction = ("saving" if verb.startswith("sav") else
                 "increase" if re.match(r"increas|improv|boost|rais|higher|more|grow|ris|gain", verb) else "reduction")
    percent = "%" in match.group("v")
    suffix = "_pct" if percent else ""  # "by 2.5×" is a factor, named without the percent suffix
    named = metric_named(f"{verb} {phrase} {direction}".lower()) if percent else None
    if named:
        return named
    words = phrase.split()
    for start in range(1, len(words)):
        tail = name_quantity(f"{' '.join(words[start:])} {direction}", suffix, use_embedding=False)
        if tail and tail.how == "vocabulary":
            return tail.parameter
    name = name_quantity(f"{phrase} {direction}", suffix, use_embedding=percent)
    return name.parameter if name else None


def _level_name(match: re.Match[str], sentence: Sentence) -> str | None:
    """A percentage level ("GPU utilization of 85%", "3% runtime overhead") named by its noun phrase."""
    phrase = match.group("np")
    if re.search(r"\b(?:figure|table|section)\b", phrase, re.IGNORECASE):
        return None
    name = name_quantity(phrase.rstrip("s") if phrase.lower().endswith("overheads") else phrase, "_pct")
    return name.parameter if name else None


def _share_name(match: re.Match[str], sentence: Sentence) -> str | None:
    """A setting stated as a share of something else ("request rate set to 85% of the system capacity")
    -> <quantity>_pct_of_<whole>, the way such settings are named."""
    phrase = re.sub(r"^(?:the|a|an|our|its|their|each|this)\s+", "", match.group("np"), flags=re.IGNORECASE)
    if re.search(r"\b(?:figure|table|section)\b", phrase, re.IGNORECASE) or len(phrase) < 4:
        return None
    quantity, whole = snake(phrase), snake(match.group("of"))
    return canonical_parameter(f"{quantity}_pct_of_{whole}") if quantity and whole else None


def _parallel_name(match: re.Match[str], sentence: Sentence) -> str:
    return canonical_parameter(f"{match.group('kind').lower()}_parallel_size")


def _version_name(match: re.Match[str], sentence: Sentence) -> str | None:
    software = match.group("name")
    if re.fullmatch(r"[A-Z]?\d.*|Version|Release|Table|Figure|Section|Appendix", software):
        return None
    name = name_quantity(software, "_version", use_embedding=False)
    return name.parameter if name else None


def _count_name(match: re.Match[str], sentence: Sentence) -> str | None:
    """'the number of selected blocks is set to 16' -> num_selected_blocks (or its catalogue name)."""
    phrase = match.group("np")
    if re.search(r"\b(?:figure|table|section|times|cases|examples|papers|works)\b", phrase, re.IGNORECASE):
        return None
    name = name_quantity(f"num {phrase}")
    return name.parameter if name else None


# A word before "3.1" that is software only with a release cue in the sentence, and never a model,
# a part of the paper or an ordinary word ("Section 4.2", "Llama 3.1", "around 2.5").
_RELEASE_CUE = re.compile(r"\b(?:implement\w*|built|build|versions?|release|framework|librar\w+|toolkit|install\w*|"
                          r"compiled|driver|software|environment|stack|backend|on top of|based on|us(?:e|es|ed|ing)|"
                          r"run(?:s|ning)?|with)\b", re.IGNORECASE)
_NOT_SOFTWARE = re.compile(rf"^(?:{MODEL_FAMILY}|GPT|Claude|Gemini|Phi|GLM|Figure|Fig|Table|Tab|Section|Sec|Chapter|"
                           r"Subsection|Paragraph|Appendix|Algorithm|Alg|Equation|Eq|Eqn|Theorem|Lemma|Corollary|Definition|Step|Stage|Phase|"
                           r"Version|Release|Level|Line|Listing|Example|Case|Task|Round|Part|Top|Around|About|Over|Under|"
                           r"Only|Up|Nearly|Roughly|Approximately|From|To|And|Or|With|By|Of|In|On|At|For|Than|Is|Are|"
                           r"Was|Were|The|A|An|Score|Rate|Ratio|Speedup|Model|Layer|Block)$",
                           re.IGNORECASE)


def _release_name(match: re.Match[str], sentence: Sentence) -> str | None:
    """'<Software> 2.4.0' in a sentence about the software stack -> <software>_version."""
    software = match.group("name")
    near = sentence.text[max(0, match.start() - 100) : match.end() + 60]
    if _NOT_SOFTWARE.match(software) or not _RELEASE_CUE.search(near):
        return None
    major = int(match.group("v").split(".")[0])
    if major > 25 or re.fullmatch(r"0\.0", match.group("v")) or re.match(r"\s+[A-Z][A-Za-z]", sentence.text[match.end():]):
        return None  # a score ("Easy 66.1") or a section number before its heading ("... Background 2.1 Serving")
    if not (re.search(r".[A-Z]", software) or software[0].isupper()):
        return None  # a lower-case word ("with 2.5") is prose, not a product name
    name = name_quantity(software, "_version", use_embedding=False)
    return name.parameter if name else None


def _precision_name(match: re.Match[str], sentence: Sentence) -> str | None:
    near = sentence.text[max(0, match.start() - 80) : match.end() + 60].lower()
    if not re.search(r"precision|quantiz|format|convert|dtype|data type|store|storage|comput|weights?|"
                     r"activation|kv[- ]?cache", near):
        return None
    return _nearest_cue(sentence, match, (("kv_cache_dtype", r"kv[- ]?cache|key-value"),
                                          ("activation_dtype", r"activation"),
                                          ("weight_dtype", r"weights?\b|parameters"))) or "dtype"


def _nearest_cue(sentence: Sentence, match: re.Match[str], cues) -> str | None:
    """The name whose cue words are closest to the match (80 characters before, 60 after)."""
    best: tuple[int, str] | None = None
    lo = max(0, match.start() - 80)
    window = sentence.text[lo : match.end() + 60].lower()
    for name, pattern in cues:
        for cue in re.finditer(pattern, window):
            start, end = cue.start() + lo, cue.end() + lo
            distance = match.start() - end if end <= match.start() else start - match.end()
            if distance >= 0 and (best is None or distance < best[0]):
                best = (distance, name)
    return best[1] if best else None


def _bits_name(match: re.Match[str], sentence: Sentence) -> str | None:
    return _nearest_cue(sentence, match, (("kv_cache_bits", r"kv[- ]?cache|key-value|\bkeys?\b"),
                                          ("activation_bits", r"activation"),
                                          ("weight_bits", r"weights?\b|parameters")))


def _slo_name(match: re.Match[str], sentence: Sentence) -> str:
    metric = match.group("m").lower()
    return "slo_ttft_ms" if metric in {"ttft", "time to first token", "time-to-first-token"} else "slo_tpot_ms"


def _length_name(match: re.Match[str], sentence: Sentence) -> str:
    return "max_input_len" if match.group("what").lower() in {"prompt", "input"} else "max_seq_len"


STATEMENT_RULES: list[Rule] = [
    _rule("knob_statement", rf"\b{KNOB_NP}{CONNECT}(?P<v>{NUM})(?:\s*(?P<u>{UNITS})\b)?{NOT_MORE}",
          _knob_name, None, 0.55, re.IGNORECASE, prose_only=True, kind="parameter"),
    _rule("ratio_times", rf"\b(?P<np>(?:{NPWORD}\s+){{0,3}}?(?:ratio|factor))\s*(?:of|=|:|is|was|reaches|to)?\s*"
          rf"(?:up to\s+|about\s+|around\s+|over\s+)?(?P<v>{N}\s?[×x])(?!\w)", _knob_name, None, 0.55, re.IGNORECASE,
          prose_only=True, kind="parameter"),
    _rule("draft_tokens", r"(?<![\d.])(?P<v>\d{1,2})\s+(?:draft(?:ed)?|speculative|speculated|candidate|guess(?:ed)?)\s+"
          r"tokens\b", "num_speculative_tokens", "tokens", 0.6, re.IGNORECASE, prose_only=True),
    _rule("expert_count", r"(?<![\d.,])(?P<v>\d{1,4})\s+(?:(?P<q>routed|shared)\s+)?experts\b",
          lambda m, s: f"num_{m.group('q').lower()}_experts" if m.group("q") else "num_experts", None, 0.6,
          prose_only=True, kind="constraint"),
    _rule("weight_activation_bits", r"\bW(?P<v>\d{1,2})A\d{1,2}\b", "weight_bits", "bits", 0.6, kind="parameter"),
    _rule("activation_bits_notation", r"\bW\d{1,2}A(?P<v>\d{1,2})\b", "activation_bits", "bits", 0.6, kind="parameter"),
    _rule("number_of", rf"\bnumber of (?P<np>(?:{NPWORD}\s+){{0,2}}?{NPWORD})(?:\s+[A-Za-z]{{1,3}}\d?(?=\s*=))?\s*"
          r"(?:\([^)]{0,16}\)\s*)?"
          rf"(?:{CONNECTIVE})\s*(?:only |about )?(?P<v>{NUM}){NOT_MORE}", _count_name, None, 0.55, re.IGNORECASE,
          prose_only=True, kind="parameter"),
    _rule("change_by", rf"\b(?P<dir>reduc|lower|cut|decreas|sav|improv|increas|boost|rais)\w*\s+(?:the\s+|its\s+|their\s+)?"
          rf"(?P<np>(?:{NPWORD}\s+){{0,3}}?{NPWORD})\s+by\s+(?:up to\s+|about\s+|over\s+|roughly\s+|nearly\s+)?"
          rf"(?P<v>{PCT})", _change_name, "%", 0.6, re.IGNORECASE),
    _rule("changes_by", rf"\b(?P<np>(?:{NPWORD}\s+){{0,2}}?{NPWORD})\s+(?:is\s+|was\s+|are\s+)?(?P<dir>decreas|reduc|drop|fall|fell|"
          rf"increas|improv|grow|grew|ris|rose)\w*\s+by\s+(?:up to\s+|about\s+|over\s+)?(?P<v>{N}\s?%)",
          _change_name, "%", 0.6, re.IGNORECASE),
    _rule("pct_noun_change", rf"(?<![\d.])(?P<v>{PCT})\s+(?P<np>(?:{NPWORD}\s+){{0,2}}?{NPWORD})\s+"
          rf"(?P<dir>reduction|decrease|improvement|increase|saving|savings|gain)s?\b", _change_name, "%", 0.6,
          re.IGNORECASE),
    _rule("pct_change_in", rf"(?<![\d.])(?P<v>{PCT})\s+(?P<dir>reduction|decrease|improvement|increase|saving|savings|gain)s?"
          rf"\s+(?:in|of|on)\s+(?:the\s+)?(?P<np>(?:{NPWORD}\s+){{0,2}}?{NPWORD})", _change_name, "%", 0.6, re.IGNORECASE),
    _rule("reduced_by_factor", rf"\b(?P<dir>reduc|lower|cut|decreas|shrink|compress)\w*\s+(?:the\s+|its\s+|their\s+)?"
          rf"(?P<np>(?:{NPWORD}\s+){{0,3}}?{NPWORD})\s+by\s+(?:up to\s+|about\s+|over\s+|roughly\s+|nearly\s+)?"
          rf"(?P<v>{N}\s?×|{N}x\b)", _change_name, "x", 0.6, re.IGNORECASE),
    _rule("pct_comparative", rf"(?<![\d.])(?P<v>{N}\s?%)\s+(?P<dir>lower|higher|less|more|fewer|smaller)\s+"
          rf"(?P<np>(?:{NPWORD}\s+){{0,1}}?{NPWORD})", _change_name, "%", 0.55, re.IGNORECASE),
    _rule("pct_level", rf"\b(?P<np>(?:{NPWORD}\s+){{0,2}}?(?:utili[sz]ation|efficiency|hit (?:rate|ratio)|attainment|sparsity|"
          rf"occupancy|acceptance rate))\s+(?:of|is|was|are|were|reaches|reached|at|=|:|to|above|below|over|under|exceeding)\s+"
          rf"(?:about |around |over |up to |nearly |only |roughly )?(?P<v>{N}\s?%)", _level_name, "%", 0.55, re.IGNORECASE),
    _rule("pct_of_whole", rf"\b(?P<np>(?:{NPWORD}\s+){{0,2}}?{NPWORD})\s+(?:is\s+|was\s+|are\s+|were\s+)?(?:{SETTING}|of|at)\s+"
          rf"(?P<v>{N}\s?%)\s+of\s+(?:the\s+|its\s+|their\s+|each\s+)?(?:[a-z-]+\s+){{0,2}}(?P<of>[a-z]+)"
          r"(?=\s*(?:[.,;:)–—]|$)|\s+(?:and|or|while|with|for|in|on|at|by|which|that|when|to)\b)",
          _share_name, "%", 0.55, re.IGNORECASE, prose_only=True, kind="parameter"),
    _rule("pct_overhead", rf"(?<![\d.])(?P<v>{N}\s?%)\s+(?P<np>(?:{NPWORD}\s+){{0,2}}?overheads?)\b", _level_name, "%", 0.55,
          re.IGNORECASE),
    # choices stated in words: a scheduling order, how preempted requests come back, the draft model
    _rule("scheduling_order", r"\b(?P<v>first[- ]come[- ]first[- ]serve[ds]?|FCFS|FIFO|LIFO|round[- ]robin|"
          r"shortest[- ](?:job|remaining[- ]time)[- ]first|SJF|SRPT|earliest[- ]deadline[- ]first|EDF|"
          r"(?:prefill|decode|decoding)[- ](?:first|prioriti[sz]ing|priority))\b(?=[^.;]{0,40}\b(?:schedul|polic|order|"
          r"prioriti|serv))", "scheduling_policy", None, 0.6, re.IGNORECASE, prose_only=True),
    _rule("preemption_by", r"\bpreempt\w*[^.;]{0,60}?\b(?:by|via|through|with|using)\s+(?:the\s+)?"
          r"(?P<v>recomput\w*|swapp?\w*)", "preemption_mode", None, 0.6, re.IGNORECASE, prose_only=True),
    _rule("draft_model_as", r"\b(?:use|uses|used|using|adopt|adopts|employ|employs|choose|chose)\s+(?:the\s+)?"
          r"(?P<v>[A-Za-z][\w.]*(?:-[\w.]+)+|[A-Z][\w.]+)\s+(?:model\s+)?as\s+(?:the|a|our)\s+"
          r"(?:draft(?:er| model)?|small(?:er)? model|speculator)\b", "draft_model", None, 0.6, prose_only=True),
    _rule("draft_model_is", r"\b(?:draft model|drafter)\s+(?:is|was|=|:)\s+(?P<v>[A-Za-z][\w.]*(?:-[\w.]+)+)",
          "draft_model", None, 0.6, re.IGNORECASE, prose_only=True),
    _rule("parallel_way", r"(?<![\d.])(?P<v>\d{1,3})[\s-]*way\s+(?:[\w-]+\s+){0,2}?(?P<kind>tensor|pipeline|expert|data|"
          r"sequence|context)[\s-]*parallel(?:ism)?", _parallel_name, None, 0.75, re.IGNORECASE, kind="parameter"),
    _rule("parallel_of", r"\b(?P<kind>expert|data|sequence|context)[\s-]*parallel(?:ism)?\s*(?:size|degree)?\s*"
          r"(?:of|=|is|:|to)\s*(?P<v>\d{1,3})\b(?![\d.])", _parallel_name, None, 0.7, re.IGNORECASE, kind="parameter"),
    _rule("software_version", r"\b(?P<name>[A-Z][\w+.]*(?:-[A-Za-z][\w+]*)*)\s+(?:v|version\s+)(?P<v>\d+\.\d+(?:\.\d+)?)\b",
          _version_name, None, 0.8),
    _rule("software_release", r"\b(?P<name>[A-Za-z][\w+]*(?:-[A-Za-z][\w+]*)*)\s+(?P<v>\d+\.\d+(?:\.\d+)?)\b"
          r"(?![\d.]|\s?(?:%|×|[xX]\b|[KMGT]?B\b|[mµ]?s\b|[KMG]?Hz|FLOP|\d*(?:\.\d+)?\s?B\b)|-\d)", _release_name, None, 0.65,
          prose_only=True),
    _rule("precision", r"\b(?P<v>FP8|FP16|BF16|FP32|FP4|INT8|INT4|NF4|fp8|fp16|bf16|f16|fp32|int8|int4)\b",
          _precision_name, None, 0.55, prose_only=True, kind="parameter"),
    _rule("bits", r"(?<![\d.])(?P<v>\d{1,2})[\s-]?bits?\b", _bits_name, "bits", 0.6, prose_only=True, kind="parameter"),
    _rule("activated_params", r"(?<![\d.])(?P<v>\d+(?:\.\d+)?)\s?B\s+(?:parameters\s+)?(?:are\s+|is\s+)?activated",
          "activated_params_b", "B params", 0.7),
    _rule("activated_params_after", r"\bactivated\s+param\w*\s+(?:of\s+)?(?:only\s+)?(?P<v>\d+(?:\.\d+)?)\s?B\b",
          "activated_params_b", "B params", 0.7),
    _rule("length_of", rf"\b(?P<what>context|sequence|request|prompt|input)\s+(?:length|window)(?:\s+size)?s?\s+"
          rf"(?:of|up to|is|{SETTING}|(?:(?:is|are|was)\s+)?(?:(?:extended|increased|scaled|grown)\s+)?"
          r"(?:to|from\s+\d[\d,]*[Kk]?(?:\s*tokens)?\s+to))\s+"
          r"(?:up to\s+)?(?P<v>\d[\d,]*[Kk](?!\w)|\d[\d,]*(?=\s*tokens))", _length_name, "tokens", 0.7, re.IGNORECASE),
    _rule("length_before", r"(?<![\d.])(?P<v>\d[\d,]*[Kk])(?:[\s-]tokens?)?[\s-](?P<what>context|sequence|prompt|input)"
          r"[\s-](?:length|window)\b", _length_name, "tokens", 0.65, re.IGNORECASE),
    _rule("slo_compare", rf"\b(?P<m>TTFT|TBT|TPOT|ITL|time to first token|time between tokens|inter-token latency)"
          rf"(?:\s+P\d{{2,3}})?\s*(?:<|≤|<=|below|under|within|of at most|at most|less than)\s*(?P<v>{N}\s?(?:ms|s))\b",
          _slo_name, "ms", 0.7, re.IGNORECASE),
    _rule("tokens_per_iteration", rf"(?<![\d.])(?P<v>{NUM}(?:\s*,\s*{NUM})*(?:,?\s*(?:and|or)\s*{NUM})?)\s+tokens per "
          r"(?:iteration|batch|step|forward pass)", "chunk_size", "tokens", 0.6, re.IGNORECASE, split_list=True,
          kind="parameter"),
    _rule("gpus_set", r"\bnumber of GPUs\b[^.;]{0,40}?(?:is set to|is|of|=)\s*(?P<v>\d{1,5})\b", "gpu_count", "GPUs", 0.7),
]
