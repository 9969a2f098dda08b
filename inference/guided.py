"""Guided decoding: `SamplingParams(json_schema=...)` constrains each sampled token so the output is schema-valid JSON.

Why xgrammar: it compiles a JSON schema into a pushdown automaton over the model's own tokenizer
vocabulary and precomputes, per automaton state, which tokens are always/never allowed, so producing
the next-token mask costs microseconds rather than a scan of the 150k-token vocabulary in Python. It
is the structured-output backend vLLM and SGLang use, handles byte-level BPE tokens that straddle JSON
syntax, and knows the stop tokens, so "the JSON is complete" and "the model may stop" coincide.
A request's matcher lives on its Sequence; masking happens in the model runner right before
sampling and the matcher advances in the engine after it. When the grammar is complete, the sequence
finishes, so the output always parses (unless max_tokens cuts it short: finish_reason "length").
Schemas compile to compact JSON (no free whitespace between tokens): otherwise a weak model can emit
whitespace until max_tokens and never close the object. A structural tag (xgrammar's format for
"free text, where these tags must wrap schema-valid JSON") is what tool calls compile to (server.py).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

import torch

from inference.sampling_params import SamplingParams
from inference.sequence import Sequence


class _Compiling:
    """One cache entry: the grammar (or the error) of one spec, ready once `done` is set."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.grammar: Any = None
        self.error: ValueError | None = None


class GuidedDecoding:
    """Compiles schemas (cached by their canonical JSON) and masks logits for guided sequences.

    Compiling happens outside the cache's lock: a schema that takes a minute to compile holds up only
    the requests that asked for that same schema (they wait for the one compilation), never those whose
    grammar is cached or compiles quickly. xgrammar's compiler is safe to call from several threads and
    releases the GIL while it works. The cache keeps the `CACHE_SIZE` most recently used specs (errors
    too: a spec that failed once fails again).
    """

    CACHE_SIZE = 256

    def __init__(self, tokenizer: Any, vocab_size: int, stop_token_ids: list[int]) -> None:
        self.tokenizer = tokenizer
        self.vocab_size = vocab_size
        self.stop_token_ids = stop_token_ids
        self._compiler: Any = None  # xgrammar's GrammarCompiler, built on first use
        self._compiler_lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], _Compiling] = OrderedDict()
        self._lock = threading.Lock()  # guards _cache only, never held while compiling

    def _get_compiler(self) -> Any:
        import xgrammar as xgr

        with self._compiler_lock:
            if self._compiler is None:
                info = xgr.TokenizerInfo.from_huggingface(
                    self.tokenizer, vocab_size=self.vocab_size, stop_token_ids=self.stop_token_ids or None
                )
                self._compiler = xgr.GrammarCompiler(info, max_threads=2)
            return self._compiler

    def compile(self, schema: dict[str, Any] | bool) -> Any:
        """Compile once per distinct schema; raises ValueError for a schema xgrammar rejects."""
        return self._compiled("json_schema", schema)

    def compile_params(self, params: SamplingParams) -> Any:
        """The compiled grammar a request's params ask for (None when unguided); ValueError when it cannot compile."""
        if params.structural_tag is not None:
            return self._compiled("structural_tag", params.structural_tag)
        if params.json_schema is not None:
            return self._compiled("json_schema", params.json_schema)
        return None

    def _compiled(self, kind: str, spec: Any) -> Any:
        # Key order is kept: a schema's property order is the order the model must write the fields in.
        key = (kind, json.dumps(spec))
        with self._lock:
            entry = self._cache.get(key)
            mine = entry is None
            if entry is None:
                entry = self._cache[key] = _Compiling()
            self._cache.move_to_end(key)
        if mine:
            try:
                compiler = self._get_compiler()
                entry.grammar = (compiler.compile_json_schema(key[1], any_whitespace=False)
                                 if kind == "json_schema" else compiler.compile_structural_tag(key[1]))
            except Exception as exc:  # xgrammar's errors subclass RuntimeError or ValueError; any other must not unguide
                entry.error = ValueError(f"{kind} cannot be compiled: {exc}")
            finally:
                entry.done.set()
                self._evict()
        else:
            entry.done.wait()
        if entry.error is not None:
            raise entry.error
        return entry.grammar

    def _evict(self) -> None:
        """Drop the least recently used finished entries beyond CACHE_SIZE (ones still compiling stay)."""
        with self._lock:
            for key in [k for k, e in self._cache.items() if e.done.is_set()][: max(0, len(self._cache) - self.CACHE_SIZE)]:
                del self._cache[key]

    def attach(self, seq: Sequence) -> None:
        import xgrammar as xgr

        grammar = self.compile_params(seq.params)
        if grammar is not None:
            seq.matcher = xgr.GrammarMatcher(grammar)

    def mask_logits(self, seqs: list[Sequence], logits: torch.Tensor) -> None:
        """Set logits of tokens the grammar forbids to -inf, in place (rows aligned with `seqs`)."""
        import xgrammar as xgr

        rows = [i for i, s in enumerate(seqs) if s.matcher is not None]
        if not rows:
            return
        bitmask = xgr.allocate_token_bitmask(len(seqs), self.vocab_size)
        for i in rows:
            seqs[i].matcher.fill_next_token_bitmask(bitmask, i)
        xgr.apply_token_bitmask_inplace(logits, bitmask, vocab_size=self.vocab_size, indices=rows)

    @staticmethod
    def accept(seq: Sequence, token_id: int) -> bool:
        """Advance the sequence's matcher; True when the grammar is complete (the sequence should stop)."""
        if seq.matcher is None:
            return False
        if not seq.matcher.accept_token(token_id):
            raise RuntimeError(f"guided decoding: token {token_id} was sampled but the grammar rejects it")
        return bool(seq.matcher.is_terminated())
