"""Turns the logits of the sampling positions into next tokens: greedy, temperature, top-k, top-p, seeds."""

from __future__ import annotations

import torch

from inference.sampling_params import SamplingParams
from inference.sequence import Sequence, TokenLogprob


def sample(logits: torch.Tensor, params: list[SamplingParams], generators: list[torch.Generator | None],
           default_generator: torch.Generator) -> list[int]:
    """logits: [S, V] float32 (already masked by any grammar). One token id per row.

    Greedy rows share one argmax; sampled rows draw with their own seeded generator when the request
    has a seed, so its output does not depend on what else was batched with it.
    """
    # max(dim).indices is argmax with the same first-index tie rule, ~30 % faster on CPU over 151,936 logits
    tokens = logits.max(dim=-1).indices.tolist()
    for i, p in enumerate(params):
        if p.greedy:
            continue
        row = logits[i] / p.temperature
        if 0 < p.top_k < row.numel():
            kth = torch.topk(row, p.top_k).values[-1]
            row = row.masked_fill(row < kth, float("-inf"))
        probs = torch.softmax(row, dim=-1)
        if p.top_p < 1.0:
            sorted_probs, order = probs.sort(descending=True)
            cumulative = sorted_probs.cumsum(0)
            drop = cumulative - sorted_probs > p.top_p  # keep the smallest set whose mass reaches top_p
            sorted_probs[drop] = 0.0
            probs = torch.zeros_like(probs).scatter_(0, order, sorted_probs)
        # Exponential-race sampling: argmax(p / E), E ~ Exp(1), draws index i with probability p_i and
        # is ~50x faster than torch.multinomial over a 150k vocabulary on CPU.
        noise = torch.empty_like(probs).exponential_(generator=generators[i] or default_generator)
        tokens[i] = int((probs / noise).argmax())
    return tokens


def record_logprobs(seqs: list[Sequence], logprobs: torch.Tensor, tokens: list[int]) -> None:
    """Append each sequence's sampled token, its log-probability and its top alternatives (rows of `logprobs`)."""
    most = max(s.params.logprobs or 0 for s in seqs)
    top_values, top_ids = logprobs.topk(most, dim=-1) if most else (logprobs[:, :0], logprobs[:, :0].long())
    for row, (seq, token) in enumerate(zip(seqs, tokens, strict=True)):
        k = seq.params.logprobs or 0
        top = list(zip(top_ids[row, :k].tolist(), top_values[row, :k].tolist(), strict=True))
        seq.logprobs.append(TokenLogprob(token, float(logprobs[row, token]), top))
