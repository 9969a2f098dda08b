"""`python -m inference.bench`: one seeded workload through this engine and its anchors, measured in the same run.

Workload: 16 requests, prompts of 32-256 tokens, outputs of 16-96 tokens (ignore_eos, so every
request produces exactly what it asked for). Printed: useful output tokens/s of this engine, of
transformers `generate` on one static left-padded batch, of transformers one request at a time, of
llama.cpp one request at a time when `llama_cpp` is importable, and of llama.cpp's `llama-server` with
one parallel slot per request against this engine's own server, both over HTTP with every request sent
at once, when a `llama-server` binary is on PATH or named by $LLAMA_SERVER (the CPU server users would
pick; absent, the report says so); the KV cache's waste at its peak;
batch-1 decode tokens/s and its share of the memory-bandwidth bound (weight bytes read per token /
measured copy bandwidth). Not a test: timings depend on the machine and on whatever else runs on it.

When the engine runs its int8 projections (the CPU default where there is no native bf16), the run
also measures the engine with dense weights in transformers' own dtype, and transformers with this
engine's int8 layer swapped into every projection: the engine-vs-transformers ratio can then be read
both as shipped and at equal arithmetic, where only batching and scheduling differ.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import multiprocessing
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from inference.config import QUANTIZATIONS, Config, default_device
from inference.engine import LLMEngine
from inference.layers import int8_blocks
from inference.loader import LoadedModel, load_model, load_weights, resolve_model_path
from inference.models import ModelConfig
from inference.sampling_params import SamplingParams
from inference.timing import timings


@dataclass
class Request:
    prompt: list[int]
    output_len: int


def workload(seed: int, n: int, vocab: int) -> list[Request]:
    rng = random.Random(seed)
    return [Request([rng.randrange(200, min(vocab, 150000)) for _ in range(rng.randint(32, 256))], rng.randint(16, 96))
            for _ in range(n)]


def best_seconds(fn: Callable[[], object], device: str, runs: int = 6) -> float:
    """The fastest of `runs` timed calls (the first one, cold, rarely wins), synchronised on CUDA."""
    return min(timings(fn, runs, sync=lambda: sync(device)))


def copy_bandwidth_gbs(device: str, mib: int = 512) -> float:
    """Bytes moved (read + write) per second by a large tensor copy, best of 6: the machine's streaming bandwidth."""
    src = torch.ones(mib * 2**20 // 4, device=device)
    dst = torch.empty_like(src)
    return 2 * src.numel() * 4 / best_seconds(lambda: dst.copy_(src), device) / 1e9


def read_bandwidth_gbs(device: str, mib: int = 512) -> float:
    """Bytes read per second by a reduction over a large tensor, best of 6 (a read-only stream, for reference)."""
    src = torch.ones(mib * 2**20 // 4, device=device)
    return src.numel() * 4 / best_seconds(src.sum, device) / 1e9


def cpu_ticks() -> list[int] | None:
    """The machine's CPU time counters from /proc/stat (user, nice, system, idle, iowait, irq, softirq,
    steal), or None where there is no /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    return [int(x) for x in fields[1:9]]


def with_steal(run: Callable[[], dict[str, float]]) -> dict[str, float]:
    """`run`'s figures plus `cpu_steal_pct`: the share of the machine's CPU time the hypervisor gave
    to other guests meanwhile. On this project's 2-core VMs it moved between 0 and 49 % within an hour,
    and every figure of a run with much steal is slower by about that much; the bench reports it so a
    reader can tell such a run from a slow engine."""
    before = cpu_ticks()
    figures = run()
    after = cpu_ticks()
    if before and after:
        figures["cpu_steal_pct"] = 100.0 * (after[7] - before[7]) / max(1, sum(after) - sum(before))
    return figures


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


# -- this engine ---------------------------------------------------------------------------------------------

def run_engine(engine: LLMEngine, reqs: list[Request]) -> dict[str, float]:
    """The whole workload at once, from a cold prefix cache (no run is served from an earlier run's K/V)."""
    assert engine.reset_prefix_cache(), "run_engine needs an idle engine"
    seqs = [engine.add_request(r.prompt, SamplingParams(max_tokens=r.output_len, temperature=0, ignore_eos=True))
            for r in reqs]
    engine.stats.peak_used_slots = engine.stats.peak_filled_slots = 0
    t = time.perf_counter()
    while engine.has_unfinished():
        engine.step()
    elapsed = time.perf_counter() - t
    useful = sum(min(s.num_completion_tokens, r.output_len) for s, r in zip(seqs, reqs, strict=True))
    used, filled = engine.stats.peak_used_slots, engine.stats.peak_filled_slots
    return {"tok_s": useful / elapsed, "seconds": elapsed, "useful_tokens": useful,
            "kv_waste_pct": 100.0 * (used - filled) / used if used else 0.0,
            "preemptions": engine.scheduler.num_preemptions}


def paired_rounds(mine_run: Callable[[], dict[str, float]], anchor: Callable[[], dict[str, float]],
                  rounds: int = 3) -> tuple[dict[str, float], dict[str, float], list[float]]:
    """The engine's run and an anchor's, alternated `rounds` times: the pair with the median ratio, and
    every round's ratio. This VM's speed moves by up to 2x within minutes, so one engine run in a fast
    phase against one anchor run in a slow phase (or the reverse) gives a ratio neither would give
    side by side; each ratio here comes from two runs next to each other."""
    pairs = []
    for _ in range(rounds):
        mine = with_steal(mine_run)
        theirs = with_steal(anchor)
        pairs.append((mine["tok_s"] / theirs["tok_s"], mine, theirs))
    _, mine, theirs = sorted(pairs, key=lambda pair: pair[0])[len(pairs) // 2]
    return mine, theirs, [ratio for ratio, _, _ in pairs]


def batch1(engine: LLMEngine, prompt: list[int], rounds: int = 3) -> dict[str, float]:
    """Batch-1 decode speed against the bound set by the bytes of weights one step reads.

    A VM's memory bandwidth drifts by half within minutes (35 to 55 GB/s on the 2-core Zen 4 box), so
    each round measures the bandwidth and then decodes, and the round with the median share is
    reported: speed and bound come from the same moment."""
    device = engine.config.device
    per_token = engine.runner.model.weight_bytes_per_token()
    measured = []
    for _ in range(rounds):
        bandwidth, read_bandwidth = copy_bandwidth_gbs(device), read_bandwidth_gbs(device)
        decode = with_steal(lambda: {"decode_tok_s": batch1_decode(engine, prompt, 48)})
        measured.append({**decode, "share_of_bound": decode["decode_tok_s"] * per_token / (bandwidth * 1e9),
                         "copy_bandwidth_gb_s": bandwidth, "read_bandwidth_gb_s": read_bandwidth})
    median = sorted(measured, key=lambda m: m["share_of_bound"])[len(measured) // 2]
    return {**median, "weight_bytes_per_token": per_token, "bound_tok_s": median["copy_bandwidth_gb_s"] * 1e9 / per_token,
            "share_of_read_bound": median["decode_tok_s"] * per_token / (median["read_bandwidth_gb_s"] * 1e9),
            "rounds": rounds}


def batch1_decode(engine: LLMEngine, prompt: list[int], n: int) -> float:
    """Decode tokens/s of one sequence alone (prefill excluded)."""
    seq = engine.add_request(prompt, SamplingParams(max_tokens=n + 1, temperature=0, ignore_eos=True))
    engine.step()  # prefill + first token
    t = time.perf_counter()
    while engine.has_unfinished():
        engine.step()
    sync(engine.config.device)
    return (seq.num_completion_tokens - 1) / (time.perf_counter() - t)


# -- anchors -------------------------------------------------------------------------------------------------

def hf_static_batch(model: Any, reqs: list[Request], device: str, pad_id: int) -> dict[str, float]:
    """One left-padded batch; generation runs until the longest request is done, only requested tokens count."""
    width = max(len(r.prompt) for r in reqs)
    ids = torch.full((len(reqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, r in enumerate(reqs):
        ids[i, width - len(r.prompt):] = torch.tensor(r.prompt)
        mask[i, width - len(r.prompt):] = 1
    longest = max(r.output_len for r in reqs)
    t = time.perf_counter()
    with torch.inference_mode():
        model.generate(ids.to(device), attention_mask=mask.to(device), max_new_tokens=longest, min_new_tokens=longest,
                       do_sample=False, pad_token_id=pad_id)
    sync(device)
    elapsed = time.perf_counter() - t
    return {"tok_s": sum(r.output_len for r in reqs) / elapsed, "seconds": elapsed}


def hf_one_at_a_time(model: Any, reqs: list[Request], device: str, pad_id: int) -> dict[str, float]:
    t = time.perf_counter()
    with torch.inference_mode():
        for r in reqs:
            ids = torch.tensor([r.prompt], device=device)
            model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=r.output_len,
                           min_new_tokens=r.output_len, do_sample=False, pad_token_id=pad_id)
    sync(device)
    elapsed = time.perf_counter() - t
    return {"tok_s": sum(r.output_len for r in reqs) / elapsed, "seconds": elapsed}


def llama_cpp_one_at_a_time(gguf_path: str, reqs: list[Request], threads: int) -> dict[str, float]:
    from llama_cpp import Llama

    llm = Llama(model_path=gguf_path, n_ctx=512, verbose=False, n_threads=threads)
    t = time.perf_counter()
    for r in reqs:
        llm.reset()
        for produced, _ in enumerate(llm.generate(r.prompt, temp=0.0), start=1):
            if produced >= r.output_len:
                break
    elapsed = time.perf_counter() - t
    return {"tok_s": sum(r.output_len for r in reqs) / elapsed, "seconds": elapsed}


def llama_cpp_anchor(model_path: Path, reqs: list[Request]) -> tuple[dict[str, float] | None, str]:
    """llama.cpp's figures, or None and why not. It runs in a child process: a crash inside llama.cpp
    (seen here: its AMX kernels segfault on a Sapphire Rapids VM with this Q4_K_M file, llama.cpp#20824)
    then costs this anchor, not the whole run."""
    if not model_path.is_file():
        return None, "llama.cpp reads GGUF files, not a Hugging Face folder"
    if importlib.util.find_spec("llama_cpp") is None:
        return None, "llama_cpp not importable"
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            run = pool.submit(llama_cpp_one_at_a_time, str(model_path), reqs, torch.get_num_threads()).result
            return with_steal(run), ""
        except BrokenProcessPool:
            return None, "llama.cpp crashed in its worker process (see its stderr above)"


# -- over HTTP: this server and llama.cpp's, the same workload sent all at once ---------------------------------

LLAMA_SERVER_ENV = "LLAMA_SERVER"


def percentiles(values: list[float], name: str) -> dict[str, float]:
    """p50/p90/p99 of `values` (nearest rank) as {name_p50: ..., ...}; empty when there are none."""
    ordered = sorted(values)
    if not ordered:
        return {}
    return {f"{name}_p{p}": ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] for p in (50, 90, 99)}


def http_workload(url: str, reqs: list[Request], body: Callable[[Request], dict[str, Any]],
                  produced: Callable[[dict[str, Any]], tuple[bool, int | None]],
                  concurrency: int | None = None) -> dict[str, float]:
    """The requests POSTed `concurrency` at a time (default: all at once, one thread each, as concurrent users
    would), streamed: useful tokens/s over the wall time from the first send to the last answer, and each
    request's time to its first token (TTFT) and mean time per later token (TPOT), as percentiles.
    `produced` reads whether an event carries new text, and the request's token count if it states it."""
    import requests as http

    def send(r: Request) -> tuple[int, float, float]:
        start = time.perf_counter()
        first = last = 0.0
        events, total = 0, 0
        with http.post(url, json={**body(r), "stream": True}, timeout=1800, stream=True) as reply:
            reply.raise_for_status()
            for line in reply.iter_lines():
                if not line.startswith(b"data: ") or line == b"data: [DONE]":
                    continue
                text, stated = produced(json.loads(line[6:]))
                if text:
                    last = time.perf_counter()
                    first = first or last
                    events += 1
                total = stated if stated is not None else total
        tokens = total or events
        if not events:  # no text came (a model without a tokenizer): the whole reply counts as the first token
            first = last = time.perf_counter()
        return min(tokens, r.output_len), first - start, (last - first) / max(1, tokens - 1)

    t = time.perf_counter()
    with ThreadPoolExecutor(concurrency or len(reqs)) as pool:
        results = list(pool.map(send, reqs))
    elapsed = time.perf_counter() - t
    useful = sum(u for u, _, _ in results)
    return {"tok_s": useful / elapsed, "seconds": elapsed, "useful_tokens": useful,
            **percentiles([ttft for _, ttft, _ in results], "ttft_s"),
            **percentiles([tpot for _, _, tpot in results], "tpot_s")}


def engine_over_http(engine: LLMEngine, reqs: list[Request], concurrency: int | None = None) -> dict[str, float]:
    """This engine behind its own OpenAI-compatible server on loopback, from a cold prefix cache."""
    from inference.server import InferenceServer

    assert engine.reset_prefix_cache(), "engine_over_http needs an idle engine"
    server = InferenceServer(("127.0.0.1", 0), engine, "bench")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        return http_workload(f"http://127.0.0.1:{server.server_address[1]}/v1/completions", reqs,
                             lambda r: {"prompt": r.prompt, "max_tokens": r.output_len, "temperature": 0,
                                        "ignore_eos": True, "stream_options": {"include_usage": True}},
                             lambda event: (bool(event["choices"] and event["choices"][0]["text"]),
                                            event["usage"]["completion_tokens"] if event.get("usage") else None),
                             concurrency)
    finally:
        server.shutdown()
        server.server_close()


def llama_server_binary() -> str | None:
    """$LLAMA_SERVER, else `llama-server` on PATH, else None."""
    return os.environ.get(LLAMA_SERVER_ENV) or shutil.which("llama-server")


@contextlib.contextmanager
def llama_server(binary: str, gguf: Path, slots: int, threads: int, ctx_per_slot: int = 512) -> Iterator[str]:
    """llama.cpp's server on a free loopback port with `slots` parallel slots (continuous batching); yields
    its base URL once /health answers, stops it afterwards."""
    import requests as http

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([binary, "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port),
                             "--parallel", str(slots), "--ctx-size", str(slots * ctx_per_slot),
                             "--threads", str(threads), "--cont-batching"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {proc.returncode}: "
                                   f"{proc.stderr.read()[-500:] if proc.stderr else ''}")
            with contextlib.suppress(http.RequestException):
                if http.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("llama-server did not answer /health within 300 s")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def llama_server_workload(base: str, reqs: list[Request], concurrency: int | None = None) -> dict[str, float]:
    """The workload through llama-server's native /completion (token-id prompts, greedy, EOS ignored)."""
    return http_workload(f"{base}/completion", reqs,
                         lambda r: {"prompt": r.prompt, "n_predict": r.output_len, "temperature": 0,
                                    "ignore_eos": True, "cache_prompt": False},
                         lambda event: (bool(event.get("content")),
                                        int(event["tokens_predicted"]) if event.get("stop") else None), concurrency)


def llama_server_anchor(engine: LLMEngine, model_path: Path, reqs: list[Request], threads: int,
                        rounds: int = 3, one_slot_requests: int = 4) -> tuple[dict[str, Any] | None, str]:
    """This server against llama.cpp's server on the same GGUF over HTTP, alternated `rounds` times: with one
    slot per request and every request sent at once, then with one slot and the first `one_slot_requests`
    requests sent one after another (what a single user sees); (figures, "") or (None, why it did not run)."""
    binary = llama_server_binary()
    if binary is None:
        return None, f"no llama-server binary (put it on PATH or name it in ${LLAMA_SERVER_ENV})"
    if not model_path.is_file():
        return None, "llama.cpp reads GGUF files, not a Hugging Face folder"
    single = reqs[:one_slot_requests]
    try:
        with llama_server(binary, model_path, slots=len(reqs), threads=threads) as base:
            llama_server_workload(base, reqs[:2])  # warm-up
            mine, theirs, ratios = paired_rounds(lambda: engine_over_http(engine, reqs),
                                                 lambda: llama_server_workload(base, reqs), rounds)
        with llama_server(binary, model_path, slots=1, threads=threads) as base:
            llama_server_workload(base, single[:1], 1)
            mine1, theirs1, ratios1 = paired_rounds(lambda: engine_over_http(engine, single, 1),
                                                    lambda: llama_server_workload(base, single, 1), rounds)
    except (RuntimeError, OSError) as exc:
        return None, f"llama-server failed: {exc}"
    return {"engine_http": mine, "llama_server": theirs, "ratios": ratios, "slots": len(reqs), "binary": binary,
            "one_slot": {"engine_http": mine1, "llama_server": theirs1, "ratios": ratios1, "requests": len(single)}}, ""


def roofline(engine: LLMEngine, model_path: Path | None, batch: int) -> dict[str, float]:
    """The memory-bandwidth roofline of this machine for the model: a decode step reads every weight once,
    so tokens/s <= rows x read bandwidth / bytes per step, for this engine's decode weights and for the
    GGUF file's (what llama.cpp streams), at one row and at `batch` rows (KV-cache reads left out)."""
    bandwidth = read_bandwidth_gbs(engine.config.device) * 1e9
    ours = engine.runner.model.weight_bytes_per_token()
    out = {"read_bandwidth_gb_s": bandwidth / 1e9, "engine_bytes_per_step": ours,
           "engine_bound_tok_s_1": bandwidth / ours, f"engine_bound_tok_s_{batch}": batch * bandwidth / ours}
    if model_path is not None and model_path.is_file():
        gguf = model_path.stat().st_size
        out.update({"gguf_bytes_per_step": gguf, "gguf_bound_tok_s_1": bandwidth / gguf,
                    f"gguf_bound_tok_s_{batch}": batch * bandwidth / gguf})
    return out


def with_int8_projections(model: Any) -> Any:
    """transformers' model with every nn.Linear (not the embedding) replaced, in place, by this engine's int8
    layer: the same int8 arithmetic on both sides, so what remains between them is batching and scheduling."""
    from torch import nn

    from inference.layers.linear import Linear

    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is nn.Linear:
                with torch.device("meta"):
                    layer = Linear(child.in_features, child.out_features, bias=child.bias is not None)
                layer.weight, layer.bias = child.weight, child.bias
                layer.pack(int8=True)
                setattr(parent, name, layer)
    return model


# -- models --------------------------------------------------------------------------------------------------

QWEN25_7B = dict(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                 num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=32768, rope_theta=1e6,
                 rms_norm_eps=1e-6, tie_word_embeddings=False)


def random_model(dims: dict[str, Any], dtype: torch.dtype, device: str, name: str) -> tuple[LoadedModel, Any]:
    """A random-weight Qwen2 of the given dimensions, shared by this engine and the transformers anchor."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from inference.loader import empty_model

    with torch.device(device):  # built directly in the compute dtype: a float32 7B would not fit 24 GiB of RAM
        hf = Qwen2ForCausalLM._from_config(Qwen2Config(**dims), dtype=dtype).eval()
    cfg = ModelConfig(architecture="qwen2", hidden_size=dims["hidden_size"], num_layers=dims["num_hidden_layers"],
                      num_heads=dims["num_attention_heads"], num_kv_heads=dims["num_key_value_heads"],
                      intermediate_size=dims["intermediate_size"], vocab_size=dims["vocab_size"],
                      rms_norm_eps=dims["rms_norm_eps"], rope_theta=dims["rope_theta"],
                      max_position=dims["max_position_embeddings"], attention_bias=True,
                      tie_word_embeddings=dims["tie_word_embeddings"])
    net = empty_model(cfg, dtype, device)
    load_weights(net, ((k.removeprefix("model."), v) for k, v in hf.state_dict().items()))
    return LoadedModel(net, cfg, None, name), hf


def hf_from_gguf(model: str | None, dtype: torch.dtype, device: str) -> Any:
    """transformers on the same weights in the same dtype: GGUF unpacked to a dense model, like this engine does."""
    from transformers import AutoModelForCausalLM, GgufConfig

    path = resolve_model_path(model)
    if path.is_file():
        hf = AutoModelForCausalLM.from_pretrained(
            path.parent, gguf_file=path.name, dtype=dtype, quantization_config=GgufConfig(dequantize=True))
    else:
        hf = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    return hf.to(device).eval()  # type: ignore[arg-type]  # transformers types .to as a decorator wrapper


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m inference.bench", description=__doc__)
    p.add_argument("--model", default=None, help="GGUF or HF folder (default: the packaged Qwen2.5-Coder-0.5B)")
    p.add_argument("--device", default=default_device(), help="cpu or cuda[:N] (default: $INFRAWIKI_DEVICE or cpu)")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--quantization", default="auto", choices=QUANTIZATIONS)
    p.add_argument("--no-fused-decode", action="store_true", help="decode through the Python layers (the reference)")
    p.add_argument("--random-7b", action="store_true", help="random weights with Qwen2.5-7B dimensions (for GPUs)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads for every run (default: torch's); 1 avoids OpenMP stalls on a busy machine")
    p.add_argument("--requests", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-num-batched-tokens", type=int, default=512)
    p.add_argument("--skip-anchors", action="store_true", help="only this engine (no transformers runs)")
    p.add_argument("--llama-server-only", action="store_true",
                   help="of the anchors, only llama.cpp's server (16 slots and 1 slot, over HTTP)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    def engine_config(quantization: str, dtype: str = args.dtype) -> Config:
        return Config(model=args.model, device=args.device, dtype=dtype, quantization=quantization,
                      fused_decode=not args.no_fused_decode,
                      max_num_seqs=args.requests, max_num_batched_tokens=args.max_num_batched_tokens,
                      kv_cache_memory_gib=1.0, seed=args.seed)

    config = engine_config(args.quantization)
    dtype = config.torch_dtype
    hf = None
    if args.random_7b:
        loaded, hf = random_model(QWEN25_7B, dtype, args.device, "random-qwen2.5-7b")
    else:
        loaded = load_model(args.model, dtype, args.device)
    engine = LLMEngine(config, loaded)
    reqs = workload(args.seed, args.requests, loaded.config.vocab_size)
    weights = ("int8 weights, float32 activations" if config.int8 else str(dtype).removeprefix("torch.") + (
        f", int8 blocks for calls of <= {int8_blocks.max_rows()} rows ({int8_blocks.kernel_choice().isa})"
        if config.int8_decode else ""))
    results: dict[str, Any] = {"model": loaded.name, "device": args.device, "dtype": str(dtype).removeprefix("torch."),
                               "weights": weights, "threads": torch.get_num_threads(), "requests": len(reqs),
                               "useful_output_tokens": sum(r.output_len for r in reqs),
                               "decode_path": f"python layers ({engine.reference_path_reason})" if engine.reference_path_reason
                               else "compiled C++ layer loop"}
    def say(*parts: object) -> None:
        if not args.json:
            print(*parts, flush=True)

    say(f"model {loaded.name} on {args.device} ({weights}, {results['threads']} threads): {len(reqs)} requests, "
        f"{results['useful_output_tokens']} useful output tokens; decode steps through the {results['decode_path']}")
    run_engine(engine, reqs[:2])  # warm-up (allocator, kernels)
    if args.skip_anchors or args.llama_server_only:
        results["engine"] = with_steal(lambda: run_engine(engine, reqs))
    else:  # transformers' static batch is the headline anchor: measured in rounds alternating with the engine
        hf = hf or hf_from_gguf(args.model, dtype, args.device)
        pad = loaded.config.eos_token_ids[0] if loaded.config.eos_token_ids else 0
        results["engine"], results["hf_static_batch"], results["static_batch_ratios"] = paired_rounds(
            lambda: run_engine(engine, reqs), lambda: hf_static_batch(hf, reqs, args.device, pad))
        say(f"  transformers static batch: {results['hf_static_batch']['tok_s']:.1f} tok/s (median-ratio round; "
            f"ratios {', '.join(f'{x:.2f}' for x in results['static_batch_ratios'])})")
    say(f"  this engine: {results['engine']['tok_s']:.1f} tok/s")
    if (not args.skip_anchors or args.llama_server_only) and not args.random_7b:
        results["llama_server"], why = llama_server_anchor(engine, resolve_model_path(args.model), reqs,
                                                           torch.get_num_threads())
        if why:
            results["llama_server_skipped"] = why
    if not args.random_7b:
        results["roofline"] = roofline(engine, resolve_model_path(args.model), len(reqs))
    prompt = reqs[0].prompt[:32]
    results["batch1"] = batch1(engine, prompt)
    if config.int8 and not args.random_7b:  # the same engine, dense weights in the anchors' dtype: equal arithmetic
        del engine
        dense = LLMEngine(engine_config("none", dtype=results["dtype"]))
        run_engine(dense, reqs[:2])
        results["engine_dense"] = run_engine(dense, reqs)
        say(f"  this engine, dense {results['dtype']} weights: {results['engine_dense']['tok_s']:.1f} tok/s")
        results["batch1_dense"] = batch1(dense, prompt)
        del dense
    if not args.skip_anchors and not args.llama_server_only:
        results["hf_one_at_a_time"] = with_steal(lambda: hf_one_at_a_time(hf, reqs, args.device, pad))
        if not args.random_7b:
            results["llama_cpp_one_at_a_time"], why = llama_cpp_anchor(resolve_model_path(args.model), reqs)
            if why:
                results["llama_cpp_skipped"] = why
        if config.int8:
            results["hf_static_batch_int8"] = hf_static_batch(with_int8_projections(hf), reqs, args.device, pad)
    report(results, args.json)
    return 0


def report(r: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(r, indent=2))
        return
    e = r["engine"]
    print("summary")
    print(f"  {'this engine (' + r['weights'] + ')':34s} {e['tok_s']:8.1f} tok/s  ({e['seconds']:.1f} s, "
          f"{e['preemptions']} preemptions{steal(e)})")
    ratio_rows = (("hf_static_batch", "transformers static batch"), ("hf_one_at_a_time", "transformers one at a time"),
                  ("llama_cpp_one_at_a_time", "llama.cpp one at a time"))
    for key, label in ratio_rows:
        if key in r:
            if r[key] is None:
                print(f"  {label:34s}  (skipped: {r['llama_cpp_skipped']})")
                continue
            print(f"  {label:34s} {r[key]['tok_s']:8.1f} tok/s  ({r[key]['seconds']:.1f} s{steal(r[key])}) -> engine is "
                  f"{e['tok_s'] / r[key]['tok_s']:.2f}x")
            if key == "hf_static_batch":
                print(f"  {'':34s} (the median of {len(r['static_batch_ratios'])} rounds alternating with the engine: "
                      f"{', '.join(f'{x:.2f}x' for x in r['static_batch_ratios'])})")
    if "llama_server" in r:
        if r["llama_server"] is None:
            print(f"  {'llama.cpp server, parallel slots':34s}  (skipped: {r['llama_server_skipped']})")
        else:
            ls = r["llama_server"]
            mine, theirs = ls["engine_http"], ls["llama_server"]
            print(f"  {'this server over HTTP':34s} {mine['tok_s']:8.1f} tok/s  ({mine['seconds']:.1f} s{steal(mine)})")
            print(f"  {'llama.cpp server, ' + str(ls['slots']) + ' slots':34s} {theirs['tok_s']:8.1f} tok/s  "
                  f"({theirs['seconds']:.1f} s{steal(theirs)}) -> this server is {mine['tok_s'] / theirs['tok_s']:.2f}x "
                  f"(rounds: {', '.join(f'{x:.2f}x' for x in ls['ratios'])})")
            print(f"  {'':34s} TTFT/TPOT: {latency(mine)} (this server), {latency(theirs)} (llama.cpp)")
            one = ls["one_slot"]
            print(f"  {'one slot, ' + str(one['requests']) + ' requests in turn':34s} this server "
                  f"{one['engine_http']['tok_s']:.1f} tok/s, llama.cpp {one['llama_server']['tok_s']:.1f} tok/s -> "
                  f"{one['engine_http']['tok_s'] / one['llama_server']['tok_s']:.2f}x (rounds: "
                  f"{', '.join(f'{x:.2f}x' for x in one['ratios'])})")
            print(f"  {'':34s} TTFT/TPOT: {latency(one['engine_http'])} (this server), "
                  f"{latency(one['llama_server'])} (llama.cpp)")
    if "engine_dense" in r:
        d = r["engine_dense"]
        print("  at equal arithmetic:")
        print(f"    {'engine, dense ' + r['dtype']:32s} {d['tok_s']:8.1f} tok/s  ({d['seconds']:.1f} s)" + (
              f" -> {d['tok_s'] / r['hf_static_batch']['tok_s']:.2f}x transformers static batch ({r['dtype']})"
              if "hf_static_batch" in r else ""))
        if "hf_static_batch_int8" in r:
            h = r["hf_static_batch_int8"]
            print(f"    {'transformers static batch, int8':32s} {h['tok_s']:8.1f} tok/s  ({h['seconds']:.1f} s) -> int8 engine "
                  f"is {e['tok_s'] / h['tok_s']:.2f}x")
    if "roofline" in r:
        rf = r["roofline"]
        n = r["requests"]
        print(f"  roofline at {rf['read_bandwidth_gb_s']:.1f} GB/s read bandwidth: this engine's decode reads "
              f"{rf['engine_bytes_per_step'] / 1e6:.0f} MB a step -> <= {rf['engine_bound_tok_s_1']:.1f} tok/s at 1 row, "
              f"{rf[f'engine_bound_tok_s_{n}']:.0f} at {n}" + (
                  f"; the GGUF ({rf['gguf_bytes_per_step'] / 1e6:.0f} MB, what llama.cpp streams) -> "
                  f"{rf['gguf_bound_tok_s_1']:.1f} and {rf[f'gguf_bound_tok_s_{n}']:.0f}" if "gguf_bytes_per_step" in rf else ""))
    print(f"  {'KV-cache waste at peak':34s} {e['kv_waste_pct']:8.2f} %  (allocated but unused slots)")
    for key, label in (("batch1", r["weights"]), ("batch1_dense", f"dense {r['dtype']}")):
        if key in r:
            b = r[key]
            print(f"  batch-1 decode, {label}: {b['decode_tok_s']:.1f} tok/s; bound {b['bound_tok_s']:.1f} tok/s = "
                  f"{b['copy_bandwidth_gb_s']:.1f} GB/s copy bandwidth / {b['weight_bytes_per_token'] / 1e6:.0f} MB weights "
                  f"per token -> {100 * b['share_of_bound']:.0f}% of bound ({100 * b['share_of_read_bound']:.0f}% of the "
                  f"{b['read_bandwidth_gb_s']:.1f} GB/s read-only stream{steal(b)})")
    print("  (copy bandwidth counts bytes read + written, as STREAM's copy does; batch-1 is the median of "
          f"{r['batch1']['rounds']} rounds, each measuring the bandwidth right before it decodes)")
    sys.stdout.flush()


def latency(figures: dict[str, float]) -> str:
    """"TTFT p50 a / p90 b s, TPOT p50 c / p90 d ms" from an HTTP run's percentiles."""
    return (f"TTFT p50 {figures['ttft_s_p50']:.2f} / p90 {figures['ttft_s_p90']:.2f} s, "
            f"TPOT p50 {1000 * figures['tpot_s_p50']:.0f} / p90 {1000 * figures['tpot_s_p90']:.0f} ms")


def steal(figures: dict[str, float]) -> str:
    """", cpu steal N %" when the run measured it."""
    return f", cpu steal {figures['cpu_steal_pct']:.0f} %" if "cpu_steal_pct" in figures else ""


if __name__ == "__main__":
    sys.exit(main())
