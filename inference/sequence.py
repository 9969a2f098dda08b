"""One request's state as it moves waiting -> running -> finished (possibly back to waiting when preempted)."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from enum import Enum, auto
from typing import Any

import torch

from inference.sampling_params import SamplingParams


@dataclass
class TokenLogprob:
    """A sampled token's log-probability under the model and the most likely alternatives, best first."""

    token_id: int
    logprob: float
    top: list[tuple[int, float]]


class SequenceStatus(Enum):
    WAITING = auto()
    RUNNING = auto()
    FINISHED = auto()


_ids = itertools.count()


class Sequence:
    """Token ids (prompt + generated), how many of them have K/V in the cache, and the block table.

    `num_computed_tokens` is the only progress counter: prefill chunks and decode steps both advance
    it, and a sequence samples a new token exactly when a step brings it up to `num_tokens`.
    Preemption by recompute resets it (and the block table) to zero; the tokens are kept.
    """

    def __init__(self, token_ids: list[int], params: SamplingParams, block_size: int) -> None:
        if not token_ids:
            raise ValueError("a prompt must have at least one token")
        self.seq_id = next(_ids)
        self.token_ids = list(token_ids)
        self.num_prompt_tokens = len(token_ids)
        self.params = params
        self.block_size = block_size
        self.status = SequenceStatus.WAITING
        self.num_computed_tokens = 0
        self.num_cached_tokens = 0  # prompt tokens served from the prefix cache at last admission
        self.block_table: list[int] = []
        self.num_hashed_blocks = 0  # leading blocks of block_table registered in the prefix cache
        self.num_preemptions = 0
        self.finish_reason: str | None = None
        self.text = ""
        self.prefix_offset = 0  # incremental detokenization window over the completion (engine._detokenize)
        self.read_offset = 0
        self.shown_chars = 0  # characters of text already streamed
        self.arrival_time = time.perf_counter()
        self.first_token_time: float | None = None
        self.finish_time: float | None = None
        self.generator: torch.Generator | None = None
        if params.seed is not None:
            self.generator = torch.Generator().manual_seed(params.seed)
        self.matcher: Any = None  # xgrammar GrammarMatcher when the params are guided
        self.logprobs: list[TokenLogprob] = []  # one per generated token when params.logprobs is set

    @property
    def num_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def completion_token_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens :]

    @property
    def num_completion_tokens(self) -> int:
        return self.num_tokens - self.num_prompt_tokens

    @property
    def is_finished(self) -> bool:
        return self.status is SequenceStatus.FINISHED

    def num_blocks_for(self, num_tokens: int) -> int:
        return (num_tokens + self.block_size - 1) // self.block_size

    def block_tokens(self, index: int) -> tuple[int, ...]:
        return tuple(self.token_ids[index * self.block_size : (index + 1) * self.block_size])

    def __repr__(self) -> str:
        return (
            f"Sequence(id={self.seq_id}, status={self.status.name}, tokens={self.num_tokens}, "
            f"computed={self.num_computed_tokens}, blocks={self.block_table})"
        )
