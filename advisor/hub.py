"""Model specs from the Hugging Face Hub, for model ids the catalog does not hold.

Runs when a request names a model outside `advisor/catalog/models.json`. It asks the Hub (endpoint from
`HF_ENDPOINT`, token from `HF_TOKEN` for gated repos) with the `huggingface_hub` client for the repo's
current revision and its safetensors metadata (parameter count per dtype), then reads `config.json` at
that revision. The result is cached in the database (`advisor.HubModel`) with the revision and source
URL, and refreshed only when the Hub reports a new revision; a warm cache answers without a download.
When the Hub cannot answer, `HubUnavailable` says why (offline, gated, missing) so the caller can
fall back (aiconfigurator-core's bundled configs, a renamed catalog checkpoint; advisor.local_models for
configs that never come from the Hub) or name the closest known ids and the routes that work offline.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from typing import Any

from huggingface_hub import HfApi, get_session, hf_hub_url, hf_raise_for_status
from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError
from huggingface_hub.utils._headers import (
    build_hf_headers,  # the public helper, imported from its module for the type checker
)

log = logging.getLogger(__name__)

TIMEOUT_S = 5.0
MAX_CONFIG_BYTES = 1_000_000


class HubUnavailable(Exception):
    """The Hub could not give this model's spec: `reason` is "offline", "gated" or "missing"."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class HubModelCard:
    """What the Hub says about one repo at one revision."""

    repo_id: str
    revision: str
    source: str
    config: dict[str, Any]
    parameters: dict[str, int]  # safetensors metadata: parameter count per stored dtype


def _endpoint() -> str | None:
    return os.environ.get("HF_ENDPOINT") or None


def _token() -> str | None:
    return os.environ.get("HF_TOKEN") or None


def _unavailable(repo_id: str, exc: Exception) -> HubUnavailable:
    if isinstance(exc, GatedRepoError):
        return HubUnavailable("gated", f"{repo_id} is gated on the Hugging Face Hub and HF_TOKEN gives no access to it")
    if isinstance(exc, RepositoryNotFoundError):
        return HubUnavailable("missing", f"the Hugging Face Hub has no model {repo_id}")
    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else None
        if status in (401, 403):
            return HubUnavailable("gated", f"the Hugging Face Hub refused {repo_id} (HTTP {status}); set HF_TOKEN")
        if status == 404:
            return HubUnavailable("missing", f"the Hugging Face Hub has no model {repo_id}")
    return HubUnavailable("offline", f"the Hugging Face Hub could not be reached ({type(exc).__name__})")


def current_revision(repo_id: str) -> tuple[str, dict[str, int]]:
    """(revision sha, safetensors parameters per dtype) of the repo's main branch, from the Hub API."""
    api = HfApi(endpoint=_endpoint(), token=_token())
    try:
        info = api.model_info(repo_id, timeout=TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - every client failure becomes one of three reasons
        raise _unavailable(repo_id, exc) from exc
    safetensors = getattr(info, "safetensors", None)
    parameters = dict(getattr(safetensors, "parameters", None) or {})
    return info.sha or "main", {str(k): int(v) for k, v in parameters.items()}


def fetch_config(repo_id: str, revision: str) -> tuple[dict[str, Any], str]:
    """config.json at `revision` and the URL it was read from."""
    url = hf_hub_url(repo_id, "config.json", revision=revision, endpoint=_endpoint())
    try:
        response = get_session().get(url, headers=build_hf_headers(token=_token()), timeout=TIMEOUT_S,
                                     follow_redirects=True)
        hf_raise_for_status(response)
    except Exception as exc:  # noqa: BLE001 - see current_revision
        raise _unavailable(repo_id, exc) from exc
    if len(response.content) > MAX_CONFIG_BYTES:
        raise HubUnavailable("missing", f"{repo_id}'s config.json is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        config = json.loads(response.content)
    except ValueError as exc:
        raise HubUnavailable("missing", f"{repo_id}'s config.json is not JSON") from exc
    if not isinstance(config, dict):
        raise HubUnavailable("missing", f"{repo_id}'s config.json is not an object")
    public = f"https://huggingface.co/{repo_id}/blob/{revision}/config.json"
    return config, public if _endpoint() is None else url


def model_card(repo_id: str) -> HubModelCard:
    """The Hub's spec of `repo_id`, from the database cache when the revision has not changed."""
    cached = _cached(repo_id)
    try:
        revision, parameters = current_revision(repo_id)
    except HubUnavailable as exc:
        if cached is not None and exc.reason == "offline":
            return cached  # the last revision seen; the answer says the Hub was not asked again
        raise
    if cached is not None and cached.revision == revision:
        return cached
    config, source = fetch_config(repo_id, revision)
    card = HubModelCard(repo_id, revision, source, config, parameters)
    _store(card)
    return card


def _table() -> Any:
    """The cache table's model, or None when Django is not set up (the advisor core runs without it)."""
    from django.core.exceptions import AppRegistryNotReady, ImproperlyConfigured  # noqa: PLC0415

    try:
        from advisor.models import HubModel  # noqa: PLC0415 - needs configured Django settings
    except (AppRegistryNotReady, ImproperlyConfigured) as exc:
        log.info("hub cache unavailable: %s", exc)
        return None
    return HubModel


def _cached(repo_id: str) -> HubModelCard | None:
    from django.db import DatabaseError  # noqa: PLC0415

    table = _table()
    if table is None:
        return None
    try:
        row = table.objects.filter(repo_id=repo_id).first()
    except (DatabaseError, RuntimeError) as exc:  # no database (or none allowed here): nothing cached
        log.info("hub cache unavailable: %s", exc)
        return None
    if row is None:
        return None
    return HubModelCard(row.repo_id, row.revision, row.source_url, dict(row.config), dict(row.parameters))


def _store(card: HubModelCard) -> None:
    from django.db import DatabaseError  # noqa: PLC0415

    table = _table()
    if table is None:
        return
    try:
        table.objects.update_or_create(repo_id=card.repo_id, defaults={
            "revision": card.revision, "source_url": card.source, "config": card.config, "parameters": card.parameters})
    except (DatabaseError, RuntimeError) as exc:
        log.info("hub cache not written: %s", exc)
