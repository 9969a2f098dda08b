"""Runs one engine step on the device: flat batch in, sampled tokens out.

Owns the KV cache tensors (allocated once, bound to every attention layer) and turns a
SchedulerOutput into tensors: token ids, absolute positions, cache slots, block tables, and the rows
whose logits are needed (the last token of each sequence that samples this step — the output head,
the biggest matmul of a small model, runs for those rows only).
"""

from __future__ import annotations

import torch

from inference.config import Config
from inference.guided import GuidedDecoding
from inference.layers.attention import AttentionMetadata, PrefillChunk
from inference.layers.sampler import record_logprobs, sample
from inference.models import DecoderForCausalLM
from inference.scheduler import SchedulerOutput


def kv_bytes_per_block(model: DecoderForCausalLM, block_size: int, dtype: torch.dtype) -> int:
    c = model.cfg
    return 2 * c.num_layers * block_size * c.num_kv_heads * c.head_dim * torch.empty((), dtype=dtype).element_size()


class ModelRunner:
    def __init__(self, config: Config, model: DecoderForCausalLM, guided: GuidedDecoding | None) -> None:
        self.config = config
        self.model = model
        self.guided = guided
        self.device = torch.device(config.device)
        self.dtype = config.torch_dtype
        c = model.cfg
        if any(attn.k_cache is not None for attn in model.attention_layers()):
            # a second engine would re-point the layers at its own cache, under the first engine's block
            # tables: wrong K/V, or reads past the end of the cache
            raise ValueError("this model already serves another LLMEngine (its layers hold that engine's KV cache); "
                             "load the model again for a second engine")
        per_block = kv_bytes_per_block(model, config.block_size, self.dtype)
        self.num_blocks = config.num_kvcache_blocks or max(
            int(config.kv_cache_memory_gib * 2**30) // per_block, -(-config.max_model_len // config.block_size)
        )
        shape = (c.num_layers, self.num_blocks, config.block_size, c.num_kv_heads, c.head_dim)
        self.k_cache = torch.zeros(shape, dtype=self.dtype, device=self.device)
        self.v_cache = torch.zeros(shape, dtype=self.dtype, device=self.device)
        for i, attn in enumerate(model.attention_layers()):
            attn.k_cache, attn.v_cache = self.k_cache[i], self.v_cache[i]
        self.default_generator = torch.Generator().manual_seed(config.seed)
        self.keep_logits = False  # tests compare every sampled row against a reference model
        self.kept_logits: dict[int, list[torch.Tensor]] = {}

    def prepare(self, out: SchedulerOutput) -> tuple[torch.Tensor, torch.Tensor, AttentionMetadata, torch.Tensor]:
        bs = self.config.block_size
        ids: list[int] = []
        positions: list[int] = []
        slots: list[int] = []
        prefills: list[PrefillChunk] = []
        decode_rows: list[int] = []
        decode_tables: list[list[int]] = []
        decode_lens: list[int] = []
        logits_rows: list[int] = []
        for i, (seq, n) in enumerate(zip(out.seqs, out.num_tokens, strict=True)):
            start, end = seq.num_computed_tokens, seq.num_computed_tokens + n
            row = len(ids)
            ids.extend(seq.token_ids[start:end])
            positions.extend(range(start, end))
            table = seq.block_table
            slots.extend(table[p // bs] * bs + p % bs for p in range(start, end))
            if n == 1 and start > 0:
                decode_rows.append(row)
                decode_tables.append(table[: seq.num_blocks_for(end)])
                decode_lens.append(end)
            else:
                blocks = torch.tensor(table[: seq.num_blocks_for(end)], dtype=torch.long, device=self.device)
                prefills.append(PrefillChunk(row, n, end, blocks))
            if out.samples(i):
                logits_rows.append(row + n - 1)
        meta = AttentionMetadata(torch.tensor(slots, dtype=torch.long, device=self.device), prefills)
        if decode_rows:
            width = max(len(t) for t in decode_tables)
            padded = [t + [0] * (width - len(t)) for t in decode_tables]
            meta.decode_rows = torch.tensor(decode_rows, dtype=torch.long, device=self.device)
            meta.decode_block_tables = torch.tensor(padded, dtype=torch.long, device=self.device)
            key_pos = torch.arange(width * bs, device=self.device)
            lens = meta.decode_context_lens = torch.tensor(decode_lens, dtype=torch.long, device=self.device)
            padding = key_pos.unsqueeze(0) >= lens.unsqueeze(1)
            meta.decode_bias = torch.zeros(padding.shape, device=self.device).masked_fill_(padding, float("-inf"))[:, None]
        def as_tensor(xs: list[int]) -> torch.Tensor:
            return torch.tensor(xs, dtype=torch.long, device=self.device)

        return as_tensor(ids), as_tensor(positions), meta, as_tensor(logits_rows)

    @torch.inference_mode()
    def forward(self, out: SchedulerOutput) -> torch.Tensor:
        """Float32 logits on the CPU, one row per sampling sequence (in scheduling order)."""
        ids, positions, meta, logits_rows = self.prepare(out)
        logits: torch.Tensor = self.model(ids, positions, meta, logits_rows)
        return logits.float().cpu()

    def run(self, out: SchedulerOutput) -> list[int | None]:
        """One token per scheduled sequence that reached its last token this step, else None."""
        logits = self.forward(out)
        sampling = [seq for i, seq in enumerate(out.seqs) if out.samples(i)]
        if self.keep_logits:
            for seq, row in zip(sampling, logits, strict=True):
                self.kept_logits.setdefault(seq.seq_id, []).append(row.clone())
        wanted = [i for i, s in enumerate(sampling) if s.params.logprobs is not None]
        # the model's own distribution, before any grammar mask (vLLM's default "raw" logprobs too)
        logprobs = torch.log_softmax(logits[wanted], dim=-1) if wanted else None
        if self.guided is not None:
            self.guided.mask_logits(sampling, logits)
        tokens = sample(logits, [s.params for s in sampling], [s.generator for s in sampling], self.default_generator)
        if logprobs is not None:
            record_logprobs([sampling[i] for i in wanted], logprobs, [tokens[i] for i in wanted])
        it = iter(tokens)
        return [next(it) if out.samples(i) else None for i in range(len(out.seqs))]
