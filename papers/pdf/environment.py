"""The environment a paper reports for its experiments: GPU models, counts and memory, CUDA,
PyTorch and serving-engine versions, interconnects — found by rules in experiment-setup sentences.

Rules, not a model: each finding keeps the page and sentence it came from, so the advisor and the
ontology can cite it. Mentions outside setup-like sentences (related work, motivation) are ignored.
"""
from __future__ import annotations

import re
from typing import Any

from ontology.selectors import MAX_QUOTE, gpu_vocabulary

_SETUP = re.compile(
    r"\b(experiments?|evaluat\w*|conduct\w*|testbed|equipped|each node|nodes?\b|cluster|setup|configured|"
    r"hardware|performed|we (?:use|run|ran|measure|test|deploy)\w*|run on|runs on|server)\b",
    re.IGNORECASE,
)
_WORDS = {"a": 1, "one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "six": 6, "eight": 8, "sixteen": 16}
_COUNT = r"(?:(?P<count>\d{1,4}|one|two|three|four|six|eight|sixteen|single|a)\s*(?:×|x|\*)?\s*)?"
_GPU = re.compile(
    _COUNT
    + r"(?:(?P<pre_mem>\d{2,3})\s?GB\s+)?"
    rf"(?:(?:{gpu_vocabulary().brand_pattern()}|DGX|SXM4?)[\s-]+){{0,2}}(?:(?P<pre_mem2>\d{2,3})\s?GB\s+)?"
    rf"(?P<model>{gpu_vocabulary().pattern()})\b"
    r"(?:[\s-]*(?:SXM\d?|PCIe))?(?:[\s-]*(?:\(|with\s+)?(?P<mem>\d{2,3})\s?G(?:B)?\b)?",
)
_CUDA = re.compile(r"\bCUDA\s*(?:version\s*|toolkit\s*)?v?(\d{1,2}\.\d{1,2}(?:\.\d+)?)")
_TORCH = re.compile(r"\bPyTorch\s*(?:version\s*)?v?(\d\.\d{1,2}(?:\.\d+)?)")
_ENGINE = re.compile(
    r"\b(vLLM|TensorRT-LLM|SGLang|DeepSpeed-(?:MII|FastGen|Inference)|FasterTransformer|TGI|LightLLM|LMDeploy)"
    r"(?:\s*\(?\s*(?:v|version\s*)(\d+\.\d+(?:\.\d+)?))?"
)
_INTERCONNECT = re.compile(r"\b(NVLink|NVLINK|NVSwitch|InfiniBand|PCIe(?:\s?Gen\s?\d)?|RoCE|RDMA)\b")
_SENTENCE = re.compile(r"(?<=[.;])\s+(?=[A-Z(])")


def _sentences(page_texts: list[str]):
    for page_no, text in enumerate(page_texts, start=1):
        flat = " ".join(text.split())
        for sentence in _SENTENCE.split(flat):
            if 20 <= len(sentence) <= 600:
                yield page_no, sentence


def _count(raw: str | None) -> int | None:
    if not raw:
        return None
    value = _WORDS.get(raw.lower()) if not raw.isdigit() else int(raw)
    return value if value and value <= 100_000 else None


def find_environment(page_texts: list[str]) -> dict[str, Any]:
    """GPUs, software versions and interconnects from experiment-setup sentences, each with its source."""
    gpus: dict[tuple, dict[str, Any]] = {}
    cuda: set[str] = set()
    torch: set[str] = set()
    engines: dict[str, str | None] = {}
    interconnects: set[str] = set()
    for page_no, sentence in _sentences(page_texts):
        cuda.update(_CUDA.findall(sentence))
        torch.update(_TORCH.findall(sentence))
        if not _SETUP.search(sentence):
            continue
        for match in _GPU.finditer(sentence):
            model = match.group("model").replace(" ", "")
            mem = match.group("mem") or match.group("pre_mem") or match.group("pre_mem2")
            key = (model, int(mem) if mem else None, _count(match.group("count")))
            gpus.setdefault(key, {"model": model, "memory_gb": key[1], "count": key[2], "page": page_no,
                                  "quote": sentence[:MAX_QUOTE]})
        for name, version in _ENGINE.findall(sentence):
            if version or name not in engines:
                engines[name] = version or None
        interconnects.update(m.upper() if m.upper() == "NVLINK" else m for m in _INTERCONNECT.findall(sentence))
    return {
        "gpus": list(gpus.values()),
        "gpu_models": sorted({g["model"] for g in gpus.values()}),
        "cuda": sorted(cuda),
        "pytorch": sorted(torch),
        "engines": [{"name": n, "version": v} for n, v in sorted(engines.items())],
        "interconnects": sorted({"NVLink" if i == "NVLINK" else i for i in interconnects}),
    }
