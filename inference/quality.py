"""How far a lossy weight path moves the model's next-token distributions from a reference engine.

When and why: int8 paths (`quantization="int8"`, `"int8_decode"`) are faster but lossy, and whether one
becomes a default is a decision about this number, not about speed alone. The reference engine (dense
weights) writes a greedy continuation of each prompt; the candidate is then fed the very same prefixes
(teacher forcing, so one early disagreement does not derail every later step) and at each step the two
next-token distributions are compared: KL(reference || candidate) and whether their top tokens agree.
`python -m inference.profile --quality` prints it; tests/inference/test_int8.py asserts on it.

Caveat for `int8_decode`: each teacher-forced step computes only the 1-8 tokens past the prefix cache's last
full block, and calls of more rows than the kernel's limit (`int8_blocks.max_rows()`: 4 for AVX2, 64 for
AMX, 512 for VNNI) run on the dense weights, so where that limit is 4 part of the steps measure no int8 at
all and the figure is a lower bound on its loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from inference.engine import LLM
from inference.sampling_params import SamplingParams

# A fixed set of prompts of realistic length (prompts of a handful of tokens are a known worst case for
# int8: see inference/README.md), one of code and two chat prompts like the extraction's.
PROMPTS = (
    "import heapq\n\n\ndef dijkstra(graph: dict[str, dict[str, int]], source: str) -> dict[str, int]:\n"
    '    """Shortest distance from source to every reachable node (non-negative edge weights)."""\n',
    "<|im_start|>system\nYou are a careful assistant for engineers who deploy language models.<|im_end|>\n"
    "<|im_start|>user\nList three ways continuous batching changes LLM serving throughput.<|im_end|>\n"
    "<|im_start|>assistant\n",
    "<|im_start|>system\nExtract every configuration parameter and its value from the passage as JSON.<|im_end|>\n"
    "<|im_start|>user\nWe serve the model with a maximum batch size of 64 and a KV-cache block size of 16 "
    "tokens; increasing the batch size to 128 raised throughput by 1.4x at the cost of 30% higher p99 "
    "latency.<|im_end|>\n<|im_start|>assistant\n",
)


@dataclass(frozen=True)
class Quality:
    """Per-step comparison over every prompt's continuation."""

    steps: int
    mean_kl: float  # KL(reference || candidate) in nats, averaged over steps
    max_kl: float
    top1_agreement: float  # share of steps whose most likely token is the same

    def __str__(self) -> str:
        return (f"mean KL {self.mean_kl:.4f} (worst step {self.max_kl:.3f}), top-1 agreement "
                f"{100 * self.top1_agreement:.1f} % over {self.steps} steps")


def next_token_logits(llm: LLM, token_ids: list[int]) -> torch.Tensor:
    """The float32 logits `llm` samples its next token from after `token_ids` (prefix-cached, so cheap to repeat)."""
    llm.engine.runner.keep_logits = True
    llm.engine.runner.kept_logits.clear()
    llm.generate([token_ids], SamplingParams(max_tokens=1, temperature=0))
    return next(iter(llm.engine.runner.kept_logits.values()))[0]


def reference_continuation(llm: LLM, prompt: str | list[int], n: int) -> tuple[list[list[int]], list[torch.Tensor]]:
    """`llm`'s greedy continuation of `prompt`: the prefixes to feed a candidate and the logits after each."""
    llm.engine.runner.keep_logits = True
    out = llm.generate([prompt], SamplingParams(max_tokens=n, temperature=0, ignore_eos=True))[0]
    rows = llm.engine.runner.kept_logits.pop(out.request_id)
    return [out.prompt_token_ids + out.token_ids[:i] for i in range(n)], rows


def compare(candidate: LLM, continuations: list[tuple[list[list[int]], list[torch.Tensor]]]) -> Quality:
    """The candidate fed every reference prefix, against the reference's logits there."""
    kls: list[float] = []
    agree = 0
    for prefixes, ref_rows in continuations:
        for prefix, ref_row in zip(prefixes, ref_rows, strict=True):
            row = next_token_logits(candidate, prefix)
            kls.append(torch.nn.functional.kl_div(row.log_softmax(-1), ref_row.log_softmax(-1), log_target=True,
                                                  reduction="sum").item())
            agree += int(row.argmax() == ref_row.argmax())
    if not kls:
        raise ValueError("no steps to compare: give at least one continuation of at least one token")
    return Quality(len(kls), sum(kls) / len(kls), max(kls), agree / len(kls))
