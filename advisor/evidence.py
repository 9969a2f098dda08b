"""Evidence attached to each recommendation: the catalog facts it rests on, plus ontology facts.

Runs once per recommendation. Catalog evidence is always there (every catalog entry carries the public
page it comes from). Facts from the ontology (papers, page-anchored quotes) are added when the ontology
app offers `ontology.selectors.evidence_for` and its database answers; the advisor never fails because
that part is missing.
"""
from __future__ import annotations

import logging
from typing import Any

from advisor.planner import Option
from advisor.profiles import profile
from advisor.validation import Request
from ontology.selectors import MAX_QUOTE

log = logging.getLogger(__name__)

def _gpu_fact(req: Request) -> dict[str, Any]:
    g = req.gpu
    peaks = ", ".join(f"{k} {v:g}" for k, v in g.tflops.items())
    return {"source": g.sources[0] if g.sources else "https://developer.nvidia.com/cuda-gpus",
            "quote": f"{g.name}: {g.memory_gib:g} GB, {g.bandwidth_gbs:g} GB/s, dense TFLOPS {peaks}; "
                     f"compute capability {g.compute_capability}", "verified": True}


def _model_fact(req: Request) -> dict[str, Any]:
    m = req.model
    shape = (f"{m.layers} layers, hidden {m.hidden}, {m.heads} heads, {m.kv_heads} KV heads, head_dim {m.head_dim}, "
             f"vocab {m.vocab}, max context {m.max_context}, {m.params_total / 1e9:.2f}B parameters"
             + (f" ({m.params_active / 1e9:.2f}B active)" if m.is_moe else ""))
    return {"source": m.source, "quote": shape, "verified": not m.estimated}


def catalog_evidence(req: Request, opt: Option) -> list[dict[str, Any]]:
    """Facts from the catalogs behind this configuration, each with its public source."""
    eng = profile(opt.engine)
    items = [_gpu_fact(req), _model_fact(req)]
    items.append(_release_fact(opt))
    dtype_rule = eng.dtypes.get(opt.dtype)
    if dtype_rule:
        items.append({"source": dtype_rule.source, "quote": dtype_rule.quote
                      or f"{opt.dtype} needs compute capability >= {dtype_rule.min_cc}", "verified": True})
    if opt.quant.method and opt.quant.source:
        items.append({"source": opt.quant.source, "quote": opt.quant.quote or opt.quant.label, "verified": True})
    batch = _batch_defaults_fact(req, opt)
    if batch:
        items.append(batch)
    return items


def _batch_defaults_fact(req: Request, opt: Option) -> dict[str, Any] | None:
    """The release's own batch defaults on this GPU, when a catalogued release states them."""
    eng = profile(opt.engine)
    seqs, rel = eng.default_with_release("max_num_seqs", opt.version.version, req.gpu)
    if rel is None or rel.defaults_source is None or seqs is None:
        return None
    tokens = rel.default_on("max_num_batched_tokens", req.gpu)
    text = f"{eng.name} {rel.version} defaults on {req.gpu.name}: max_num_seqs {seqs:g}" + (
        f", max_num_batched_tokens {tokens:g}" if tokens is not None else "")
    if rel.version != opt.version.version:
        text += f" (held by {opt.version.version}: no later catalogued release changes them)"
    quoted = f"{text}. {rel.defaults_quote}" if rel.defaults_quote else text
    return {"source": rel.defaults_source, "quote": quoted if len(quoted) <= MAX_QUOTE else text,
            "verified": opt.version.verified}


def _release_fact(opt: Option) -> dict[str, Any]:
    """The release the answer rests on; for a release the catalog lacks, says whose facts stand in."""
    eng, choice = profile(opt.engine), opt.version
    release = choice.release
    build = f"CUDA {choice.cuda or 'host toolkit'} build" + (f" (variant of default {release.cuda})" if choice.variant else "")
    if not choice.verified:
        return {"source": release.source, "verified": False,
                "quote": f"{eng.name} {choice.version} is not in the catalog: facts ({build}) are those of "
                         f"{eng.name} {release.version}, the nearest earlier catalogued release"}
    return {"source": release.source, "quote": release.quote or f"{eng.name} {choice.version}: {build}", "verified": True}


def literature_evidence(req: Request, options: list[Option], limit: int = 3) -> list[dict[str, Any]]:
    """Facts from the literature about this deployment, if the ontology and its database answer.

    Called once per response (it embeds the query), so it costs one lookup, not one per option.
    """
    try:
        from django.db import connection  # noqa: PLC0415 - optional: the core advisor runs without Django

        from ontology.selectors import evidence_for  # noqa: PLC0415

        connection.ensure_connection()
    except Exception:  # noqa: BLE001 - app, settings or database unavailable: catalog evidence only
        return []
    names = sorted({eng_name(o) for o in options})
    formats = sorted({o.quant.label or o.dtype for o in options})
    query = (f"serving {req.model.id} with {', '.join(names)} on {req.gpu.name}: {', '.join(formats)}, "
             f"KV cache, continuous batching, max_model_len, gpu_memory_utilization")
    try:
        facts = evidence_for(query, subjects=[*names, req.model.architecture],
                             parameters=["max_model_len", "gpu_memory_utilization", "max_num_seqs", "block_size"],
                             limit=limit)
    except Exception as exc:  # noqa: BLE001 - a failing lookup must not cost the answer
        log.info("ontology evidence unavailable: %s", exc)
        return []
    return [{"source": f["source"], "quote": f["quote"], "verified": bool(f.get("verified", False))}
            for f in facts or [] if isinstance(f, dict) and f.get("source") and f.get("quote")]


def eng_name(opt: Option) -> str:
    return profile(opt.engine).name
