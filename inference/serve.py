"""Entry point: `python -m inference.serve --model PATH --port 8000` starts the OpenAI-compatible server."""

from __future__ import annotations

import argparse
import sys

from inference.config import QUANTIZATIONS, Config, default_device
from inference.engine import LLMEngine
from inference.request_limits import ServerLimits
from inference.server import InferenceServer


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m inference.serve", description=__doc__)
    p.add_argument("--model", default=None, help="GGUF file or HF folder; default: the packaged Qwen2.5-Coder-0.5B GGUF")
    p.add_argument("--served-model-name", default=None, help="name reported by /v1/models (default: from the model)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--device", default=default_device(), help="cpu or cuda[:N] (default: $INFRAWIKI_DEVICE or cpu)")
    p.add_argument("--dtype", default=Config.dtype, choices=["auto", "float32", "bfloat16", "float16"])
    p.add_argument("--quantization", default=Config.quantization, choices=QUANTIZATIONS,
                   help="int8: W8A8 projections on the CPU; auto: int8 where the CPU lacks native bf16 and --dtype is auto")
    p.add_argument("--block-size", type=int, default=Config.block_size)
    p.add_argument("--max-num-seqs", type=int, default=Config.max_num_seqs)
    p.add_argument("--max-num-batched-tokens", type=int, default=Config.max_num_batched_tokens)
    p.add_argument("--max-model-len", type=int, default=Config.max_model_len)
    p.add_argument("--kv-cache-memory-gib", type=float, default=Config.kv_cache_memory_gib)
    p.add_argument("--no-prefix-caching", action="store_true")
    p.add_argument("--no-fused-decode", action="store_true",
                   help="run decode steps through the Python layers instead of the compiled CPU loop")
    p.add_argument("--max-body-bytes", type=int, default=None,
                   help=f"larger request bodies get 413 unread (default: $INFRAWIKI_LLM_MAX_BODY_BYTES or "
                        f"{ServerLimits.max_body_bytes})")
    p.add_argument("--request-timeout", type=float, default=None,
                   help=f"seconds a request may take to arrive, and an idle connection may stay open (default: "
                        f"$INFRAWIKI_LLM_REQUEST_TIMEOUT_S or {ServerLimits.request_timeout_s:g})")
    p.add_argument("--max-schema-bytes", type=int, default=None,
                   help=f"largest JSON schema or tool list a request may ask to compile (default: "
                        f"$INFRAWIKI_LLM_MAX_SCHEMA_BYTES or {ServerLimits.max_schema_bytes})")
    p.add_argument("--verbose", action="store_true", help="log every HTTP request")
    return p


def server_limits(args: argparse.Namespace) -> ServerLimits:
    """The flags given, the environment's values (ServerLimits.from_env) for the rest."""
    env = ServerLimits.from_env()
    return ServerLimits(
        max_body_bytes=env.max_body_bytes if args.max_body_bytes is None else args.max_body_bytes,
        request_timeout_s=env.request_timeout_s if args.request_timeout is None else args.request_timeout,
        max_schema_bytes=env.max_schema_bytes if args.max_schema_bytes is None else args.max_schema_bytes)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        limits = server_limits(args)
        config = Config(model=args.model, device=args.device, dtype=args.dtype, quantization=args.quantization,
                        block_size=args.block_size,
                        max_num_seqs=args.max_num_seqs, max_num_batched_tokens=args.max_num_batched_tokens,
                        max_model_len=args.max_model_len, kv_cache_memory_gib=args.kv_cache_memory_gib,
                        enable_prefix_caching=not args.no_prefix_caching, fused_decode=not args.no_fused_decode)
        engine = LLMEngine(config)
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # requests may also name the model as it was given here ("default" when omitted): INFRAWIKI_MODEL says the same
    alias = args.model or "default"
    server = InferenceServer((args.host, args.port), engine, args.served_model_name or engine.loaded.name, args.verbose,
                             aliases=(alias,), limits=limits)
    print(f"inference server: model {server.model_name} on {args.device}, "
          f"listening on http://{args.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
