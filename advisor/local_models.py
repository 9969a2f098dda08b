"""Model configs that do not come from the Hugging Face Hub: a local folder, the request itself, or
aiconfigurator-core's bundled copies.

Runs when a request names a model the catalog lacks, so that an air-gapped cluster or a private
checkpoint can still be sized:
- `"model": "/models/x"` (a model folder, or the path of its config.json) is read from this machine's
  disk. The `advise` CLI reads any path its user can; the web form and the API read only below the
  folders listed in ADVISOR_MODEL_DIRS, so a request cannot probe the server's file system;
- `"model_config": {...}` carries the checkpoint's config.json in the request;
- when the Hub cannot be reached, the ~100 config.json files aiconfigurator-core ships
  (`aiconfigurator_core/model_configs/`) answer for the models they cover.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import metadata, util
from pathlib import Path
from typing import Any

MAX_CONFIG_BYTES = 1_000_000
BUNDLE_PACKAGE = "aiconfigurator-core"
ROUTES = ('give the path of a local model folder or config.json as "model", or the config.json object as '
          '"model_config"')


class LocalConfigError(ValueError):
    """A local config could not be used: `hint` says what to do instead."""

    def __init__(self, error: str, hint: str) -> None:
        super().__init__(error)
        self.hint = hint


def is_path(model: str) -> bool:
    """Whether "model" names a file-system path rather than a Hugging Face id (ids never start so)."""
    return model.startswith(("/", "./", "../", "~"))


def _parse(text: bytes, where: str) -> dict[str, Any]:
    if len(text) > MAX_CONFIG_BYTES:
        raise LocalConfigError(f"{where} is larger than {MAX_CONFIG_BYTES:,} bytes", "give the model's config.json")
    try:
        config = json.loads(text)
    except (ValueError, RecursionError):
        raise LocalConfigError(f"{where} is not JSON", "give the model's config.json") from None
    if not isinstance(config, dict):
        raise LocalConfigError(f"{where} is not a JSON object", "give the model's config.json")
    return config


def read_path(model: str, allowed: Sequence[Path] | None) -> tuple[dict[str, Any], str]:
    """(config.json, its file URL) for a model folder or a config.json path.

    `allowed`: the folders the path must lie below (symlinks resolved); None admits any path."""
    given = Path(model).expanduser()
    target = (given / "config.json" if given.is_dir() else given).resolve()
    if allowed is not None:
        roots = [Path(root).expanduser().resolve() for root in allowed]
        if not any(target.is_relative_to(root) for root in roots):
            where = ", ".join(str(r) for r in roots) if roots else "none are set"
            raise LocalConfigError(
                f"'{model}' is not below a folder this server reads model configs from ({where})",
                "the server's operator lists such folders in ADVISOR_MODEL_DIRS; or put the config.json object in "
                '"model_config", or use the advise command on the machine that holds the model')
    if target.name != "config.json":
        raise LocalConfigError(f"'{model}' is neither a model folder nor a config.json file",
                               "give the folder that holds the model's config.json, or the file itself")
    try:
        text = target.read_bytes()[: MAX_CONFIG_BYTES + 1]
    except OSError as exc:
        raise LocalConfigError(f"cannot read {target}: {exc.strerror or exc}",
                               "check the path (a model folder or its config.json)") from None
    return _parse(text, str(target)), target.as_uri()


def request_config(config: dict[str, Any]) -> dict[str, Any]:
    """The `model_config` object of a request, bounded like a file would be."""
    return _parse(json.dumps(config).encode(), '"model_config"')


def bundled_config(model_id: str) -> tuple[dict[str, Any], str] | None:
    """aiconfigurator-core's bundled config.json for `model_id` and where it was read, if it ships one.

    Imported lazily: the package is optional at run time and only consulted offline."""
    spec = util.find_spec("aiconfigurator_core")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model_configs"
    name = model_id.strip().replace("/", "--")
    candidates = {p.name.lower(): p for p in folder.glob("*_config.json") if not p.name.endswith("_hf_quant_config.json")}
    path = candidates.get(f"{name}_config.json".lower())
    if path is None:
        return None
    source = f"{BUNDLE_PACKAGE} {metadata.version(BUNDLE_PACKAGE)}: aiconfigurator_core/model_configs/{path.name}"
    return _parse(path.read_bytes(), source), source
