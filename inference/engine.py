"""The engine loop: `step = schedule -> run -> postprocess`, and the `LLM` facade that drives it to completion.

LLMEngine is single-threaded by design; the HTTP server runs it on one loop thread and feeds it
requests through a queue (server.py), so concurrent requests share every forward pass.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence as Seq
from dataclasses import dataclass
from typing import Any, cast

from inference.block_manager import BlockManager
from inference.config import Config, default_device
from inference.guided import GuidedDecoding
from inference.layers import int8_blocks
from inference.loader import LoadedModel, load_model
from inference.model_runner import ModelRunner
from inference.models.fused_decode import enable_fused_decode
from inference.sampling_params import SamplingParams
from inference.scheduler import Scheduler
from inference.sequence import Sequence, SequenceStatus, TokenLogprob
from inference.tokenizer_pool import TokenizerPool


@dataclass
class RequestMetrics:
    ttft_s: float  # arrival -> first generated token
    tpot_s: float  # mean time per output token after the first
    e2e_s: float
    num_prompt_tokens: int
    num_output_tokens: int
    num_cached_tokens: int
    num_preemptions: int


@dataclass
class RequestOutput:
    request_id: int
    prompt_token_ids: list[int]
    text: str
    token_ids: list[int]
    finish_reason: str | None
    metrics: RequestMetrics | None = None
    finished: bool = True
    logprobs: list[TokenLogprob] | None = None  # one per generated token, when the params asked for them


@dataclass
class StepEvent:
    """What one step did to one sequence: its new token (None for a mid-prefill chunk) and text delta."""

    seq: Sequence
    token_id: int | None
    text_delta: str = ""
    finished: bool = False


@dataclass
class EngineStats:
    steps: int = 0
    prompt_tokens: int = 0
    generated_tokens: int = 0
    peak_batch_seqs: int = 0  # most sequences sharing one forward pass
    peak_used_slots: int = 0  # token slots in allocated blocks at the step with most blocks in use
    peak_filled_slots: int = 0  # tokens actually stored in those slots at that step


class LLMEngine:
    def __init__(self, config: Config, loaded: LoadedModel | None = None) -> None:
        self.config = config
        self.loaded = loaded or load_model(config.model, config.torch_dtype, config.device)
        self.model_config = self.loaded.config
        self.loaded.model.prepare_for_inference(config.int8, config.int8_decode and bool(int8_blocks.available().isa))
        # why decode steps run the Python reference layers; "" when the compiled loop runs them
        self.reference_path_reason = (enable_fused_decode(self.loaded.model) if config.fused_decode
                                      else "fused_decode=False")
        self.tokenizer = self.loaded.tokenizer
        self.config.max_model_len = min(config.max_model_len, self.model_config.max_position)
        self.guided = None
        if self.tokenizer is not None:
            self.guided = GuidedDecoding(self.tokenizer, self.model_config.vocab_size, self.model_config.eos_token_ids)
        self.runner = ModelRunner(config, self.loaded.model, self.guided)
        self.block_manager = BlockManager(self.runner.num_blocks, config.block_size, config.enable_prefix_caching)
        self.scheduler = Scheduler(self.block_manager, config.max_num_seqs, config.max_num_batched_tokens)
        self.stats = EngineStats()
        # HTTP threads tokenize while the loop thread detokenizes; HF fast tokenizers are not safe to share
        # across threads without this (their Rust side can raise "Already borrowed"). Long prompts are
        # encoded with private copies instead (tokenizer_pool.py), so they never hold this lock for long.
        self.tokenizer_lock = threading.Lock()
        self.encoders = TokenizerPool(self.tokenizer, self.tokenizer_lock)

    # -- requests ------------------------------------------------------------------------------------
    def tokenize(self, prompt: str | list[int]) -> list[int]:
        if isinstance(prompt, str):
            if self.tokenizer is None:
                raise ValueError("this model has no tokenizer; pass prompts as lists of token ids")
            with self.encoders.lend(len(prompt)) as tokenizer:
                ids: list[int] = tokenizer.encode(prompt, add_special_tokens=True)
                return ids
        if not all(isinstance(t, int) and 0 <= t < self.model_config.vocab_size for t in prompt):
            raise ValueError(f"token ids must be integers in [0, {self.model_config.vocab_size})")
        return list(prompt)

    def chat_prompt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> list[int]:
        """Token ids of `messages` (and the `tools` on offer) rendered with the model's own chat template,
        ready for the assistant turn."""
        if self.tokenizer is None or not getattr(self.tokenizer, "chat_template", None):
            raise ValueError("this model has no chat template; use /v1/completions with a plain prompt")
        chars = sum(len(m["content"]) for m in messages if isinstance(m.get("content"), str))
        with self.encoders.lend(chars) as tokenizer:
            ids = tokenizer.apply_chat_template(messages, tools=tools, tokenize=True, add_generation_prompt=True)
        return list(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids)

    def add_request(self, prompt: str | list[int], params: SamplingParams) -> Sequence:
        token_ids = self.tokenize(prompt)
        if len(token_ids) >= self.config.max_model_len:
            raise ValueError(
                f"prompt has {len(token_ids)} tokens; the limit is max_model_len={self.config.max_model_len} - 1"
            )
        if params.guided and self.guided is None:
            raise ValueError("json_schema and structural_tag need a model with a tokenizer")
        seq = Sequence(token_ids, params, self.config.block_size)
        if self.guided is not None:
            self.guided.attach(seq)
        self.scheduler.add(seq)
        return seq

    def abort(self, seq_id: int) -> bool:
        return self.scheduler.abort(seq_id) is not None

    def reset_prefix_cache(self) -> bool:
        """Forget the cached prompt prefixes (see BlockManager.reset_prefix_cache); False while requests hold blocks."""
        return self.block_manager.reset_prefix_cache()

    def set_prefix_caching(self, enabled: bool) -> bool:
        """Switch prefix caching on or off from a cold cache; False (nothing changed) while requests hold
        blocks. For benchmarks that compare both on one loaded model."""
        if not self.reset_prefix_cache():
            return False
        self.block_manager.enable_prefix_caching = self.config.enable_prefix_caching = enabled
        return True

    def has_unfinished(self) -> bool:
        return self.scheduler.has_unfinished()

    # -- the loop ------------------------------------------------------------------------------------
    def step(self) -> list[StepEvent]:
        out = self.scheduler.schedule()
        if not out.seqs:
            return []
        self._record_kv_usage()
        self.stats.peak_batch_seqs = max(self.stats.peak_batch_seqs, len(out.seqs))
        tokens = self.runner.run(out)
        self.scheduler.postprocess(out)
        now = time.perf_counter()
        events = []
        self.stats.steps += 1
        for seq, n, token in zip(out.seqs, out.num_tokens, tokens, strict=True):
            if seq.num_computed_tokens - n < seq.num_prompt_tokens:
                self.stats.prompt_tokens += min(n, seq.num_prompt_tokens - (seq.num_computed_tokens - n))
            if token is None:
                events.append(StepEvent(seq, None))
                continue
            events.append(self._append_token(seq, token, now))
        self.scheduler.remove_finished()
        return events

    def _append_token(self, seq: Sequence, token: int, now: float) -> StepEvent:
        seq.token_ids.append(token)
        self.stats.generated_tokens += 1
        if seq.first_token_time is None:
            seq.first_token_time = now
        p = seq.params
        reason = None
        grammar_done = self.guided.accept(seq, token) if self.guided is not None else False
        is_stop_token = self.is_stop_token(token, p)
        if is_stop_token or grammar_done:
            reason = "stop"
        elif seq.num_completion_tokens >= p.max_tokens or seq.num_tokens >= self.config.max_model_len:
            reason = "length"
        old_text = seq.text
        if not is_stop_token:
            self._detokenize(seq, flush=reason is not None)
        elif seq.read_offset < seq.num_completion_tokens - 1:
            self._detokenize(seq, flush=True, upto=seq.num_completion_tokens - 1)
        if p.stop:
            text = seq.text
            cut = min((i for i in (text.find(s, max(0, len(old_text) - len(s))) for s in p.stop) if i >= 0), default=-1)
            if cut >= 0:
                seq.text, reason = text[:cut], "stop"
        if reason is not None:
            seq.finish_time = now
            self.scheduler.finish(seq, reason)
        return StepEvent(seq, token, self._visible_delta(seq), reason is not None)

    def _detokenize(self, seq: Sequence, flush: bool, upto: int | None = None) -> None:
        """Extend seq.text by the newest tokens, decoding only a short window (not the whole completion).

        The window starts a few tokens back (prefix_offset) so byte-level BPE pieces merge into the
        same characters a full decode gives; text waits while it ends in a partial UTF-8 character.
        """
        if self.tokenizer is None:
            return
        ids = seq.completion_token_ids[:upto]
        with self.tokenizer_lock:
            before = self.tokenizer.decode(ids[seq.prefix_offset : seq.read_offset], skip_special_tokens=True)
            after = self.tokenizer.decode(ids[seq.prefix_offset :], skip_special_tokens=True)
        if len(after) > len(before) and (flush or not after.endswith("\ufffd")):
            seq.text += after[len(before) :]
            seq.prefix_offset, seq.read_offset = seq.read_offset, len(ids)

    def _visible_delta(self, seq: Sequence) -> str:
        """New text safe to stream: hold back a trailing partial UTF-8 char and a possible stop-string prefix."""
        text = seq.text
        if not seq.is_finished:
            if text.endswith("\ufffd"):
                return ""
            hold = max((len(s) - 1 for s in seq.params.stop), default=0)
            text = text[: len(text) - hold] if hold else text
        delta = text[seq.shown_chars :] if len(text) > seq.shown_chars else ""
        seq.shown_chars += len(delta)
        return delta

    def _record_kv_usage(self) -> None:
        used_blocks = self.block_manager.num_used_blocks
        slots = used_blocks * self.config.block_size
        if slots > self.stats.peak_used_slots:
            # after this step each running sequence holds K/V for its computed tokens plus this step's
            filled = sum(min(s.num_tokens, len(s.block_table) * self.config.block_size) for s in self.scheduler.running)
            self.stats.peak_used_slots, self.stats.peak_filled_slots = slots, filled

    def output(self, seq: Sequence) -> RequestOutput:
        metrics = None
        if seq.first_token_time is not None:
            end = seq.finish_time or time.perf_counter()
            n = seq.num_completion_tokens
            metrics = RequestMetrics(
                ttft_s=seq.first_token_time - seq.arrival_time,
                tpot_s=(end - seq.first_token_time) / (n - 1) if n > 1 else 0.0,
                e2e_s=end - seq.arrival_time,
                num_prompt_tokens=seq.num_prompt_tokens,
                num_output_tokens=n,
                num_cached_tokens=seq.num_cached_tokens,
                num_preemptions=seq.num_preemptions,
            )
        ids = seq.completion_token_ids
        return RequestOutput(seq.seq_id, seq.token_ids[: seq.num_prompt_tokens], seq.text, ids,
                             seq.finish_reason, metrics, seq.status is SequenceStatus.FINISHED,
                             list(seq.logprobs) if seq.params.logprobs is not None else None)

    def is_stop_token(self, token_id: int, params: SamplingParams) -> bool:
        """Whether this token ended its sequence without being part of the text (EOS or a stop token id)."""
        return token_id in params.stop_token_ids or (not params.ignore_eos and token_id in self.model_config.eos_token_ids)


class LLM:
    """Offline batch generation: `LLM(model).generate(prompts, SamplingParams(...))`."""

    def __init__(self, model: str | None = None, device: str | None = None, block_size: int = Config.block_size,
                 max_num_seqs: int = 64, max_num_batched_tokens: int = 512, enable_prefix_caching: bool = True,
                 **kwargs: Any) -> None:
        self.config = Config(model=model, device=device or default_device(), block_size=block_size,
                             max_num_seqs=max_num_seqs,
                             max_num_batched_tokens=max_num_batched_tokens,
                             enable_prefix_caching=enable_prefix_caching, **kwargs)
        self.engine = LLMEngine(self.config)

    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    def generate(self, prompts: str | list[int] | Seq[str | list[int]],
                 params: SamplingParams | Seq[SamplingParams] | None = None) -> list[RequestOutput]:
        """Run all prompts to completion together; outputs come back in prompt order."""
        one = isinstance(prompts, str) or bool(prompts and isinstance(prompts[0], int))
        batch = [cast(str | list[int], prompts)] if one else cast(Seq[str | list[int]], prompts)
        params = params or SamplingParams()
        param_list = list(params) if isinstance(params, Seq) else [params] * len(batch)
        if len(param_list) != len(batch):
            raise ValueError("pass one SamplingParams, or one per prompt")
        seqs: list[Sequence] = []
        try:
            for prompt, sp in zip(batch, param_list, strict=True):
                seqs.append(self.engine.add_request(prompt, sp))
        except ValueError:
            for seq in seqs:  # all or nothing: no half-submitted batch left behind in the queue
                self.engine.abort(seq.seq_id)
            raise
        while self.engine.has_unfinished():
            self.engine.step()
        return [self.engine.output(s) for s in seqs]

    def chat(self, messages: list[dict[str, Any]], params: SamplingParams | None = None) -> RequestOutput:
        return self.generate([self.engine.chat_prompt(messages)], params)[0]
