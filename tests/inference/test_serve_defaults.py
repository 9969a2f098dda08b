"""`python -m inference.serve` starts the engine with the engine's own defaults unless told otherwise."""
from __future__ import annotations

from inference.config import Config
from inference.serve import build_parser


def test_the_server_defaults_are_the_engine_config_defaults():
    args = build_parser().parse_args([])
    assert (args.block_size, args.max_num_seqs, args.max_num_batched_tokens, args.max_model_len) == (
        Config.block_size, Config.max_num_seqs, Config.max_num_batched_tokens, Config.max_model_len)
