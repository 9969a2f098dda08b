"""Builds the tokenizer and chat template from the model's own files, once at load.

GGUF: vocabulary, merges, special tokens and the Jinja chat template are in the file's metadata; they
are read with transformers' GGUF tokenizer converter (reading only metadata, not weights) into a fast
tokenizer. HF folder: its tokenizer.json / tokenizer_config.json. A folder without a tokenizer (the
tiny test models) gives None, and then only token-id prompts are accepted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def load_gguf_tokenizer(path: Path) -> Any:
    from transformers import PreTrainedTokenizerFast
    from transformers.integrations.gguf.gguf_tokenizer_mapping import (
        convert_gguf_tokenizer,
        get_gguf_tokenizer,
    )

    arch, tokenizer_dict, tokenizer_config = get_gguf_tokenizer(str(path))
    backend, _ = convert_gguf_tokenizer(arch, tokenizer_dict)
    return PreTrainedTokenizerFast(tokenizer_object=backend, **tokenizer_config)


def load_folder_tokenizer(folder: Path) -> Any:
    if not any((folder / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")):
        return None
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder))
