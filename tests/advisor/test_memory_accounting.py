"""Each engine release's memory accounting (advisor/catalog/memory_accounting.json): validated on load, chosen by
release, and applied by the sizing (vLLM's profiled sampler pass, SGLang's static fraction, TGI's wiggle room)."""
from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError

from advisor import memory_accounting
from advisor.catalog import CATALOG_DIR, gpus
from advisor.model_specs import resolve_model
from advisor.sizing import plan_memory


def _plan(engine, version, **kw):
    args = dict(bits=16, method=None, kv_bytes=2, tp=1, pp=1, utilization=0.9, wanted_len=8192, required_len=1280,
                fixed_len=None, max_num_seqs=1024, batched_tokens=8192)
    args.update(kw)
    return plan_memory(resolve_model("meta-llama/Llama-3.1-8B-Instruct")[0], gpus()["h100-sxm5-80gb"],
                       acct=memory_accounting.line(engine, version), **args)


def test_every_line_cites_a_public_source_for_its_terms():
    acct = memory_accounting.accounting()
    for lines in [*acct.engines.values(), [acct.default]]:
        for line in lines:
            assert "KV budget" in {c.term for c in line.sources}
            assert all(c.url.startswith("https://github.com/") for c in line.sources)


def test_a_release_takes_the_newest_line_at_or_below_it():
    assert memory_accounting.line("vllm", "0.2.2").since == "0.1.0"
    assert memory_accounting.line("vllm", "0.2.5").since == "0.2.5"
    assert memory_accounting.line("vllm", "0.6.3").since == "0.2.6"
    assert memory_accounting.line("vllm", "0.11.0").since == "0.8.0"
    assert memory_accounting.line("vllm", "0.19.0").since == "0.12.0"
    assert memory_accounting.line("tgi", "3.2.0").fraction_scale == 0.93
    assert memory_accounting.line("tensorrt-llm", "1.0.0") == memory_accounting.accounting().default


def test_a_constant_not_fitted_on_dev_or_lines_out_of_order_are_refused():
    raw = json.loads((CATALOG_DIR / "memory_accounting.json").read_text())
    bad = json.loads(json.dumps(raw))
    bad["engines"]["vllm"][0]["constant_gib"] = 0.5
    with pytest.raises(ValidationError, match="only ever fitted"):
        memory_accounting.Accounting.model_validate(bad)
    bad = json.loads(json.dumps(raw))
    bad["engines"]["vllm"].reverse()
    with pytest.raises(ValidationError, match="oldest first"):
        memory_accounting.Accounting.model_validate(bad)


def test_a_citation_that_hides_how_far_it_was_checked_is_refused():
    raw = json.loads((CATALOG_DIR / "memory_accounting.json").read_text())
    citations = [c for line in raw["engines"]["vllm"] for c in line["sources"]]
    code = next(c for c in citations if c["basis"] == "code")
    assumption = next(c for c in citations if c["basis"] == "assumption")
    cases = [
        ({**code, "quote": ""}, "quotes its source"),
        ({**code, "url": re.sub(r"/blob/v[^/]+/", "/blob/main/", code["url"])}, "not a branch"),
        ({**code, "verified": False}, "says why"),
        ({**assumption, "verified": True, "unverified_because": ""}, "never verified"),
    ]
    for citation, message in cases:
        with pytest.raises(ValidationError, match=message):
            memory_accounting.Citation.model_validate(citation)
    bad = json.loads(json.dumps(raw))
    next(line for line in bad["engines"]["vllm"] if line.get("fitted_on") == "dev")["fitted_on"] = ""
    with pytest.raises(ValidationError, match="go together"):
        memory_accounting.Accounting.model_validate(bad)


def test_unverified_claims_are_few_and_each_says_why():
    acct = memory_accounting.accounting()
    citations = [c for lines in [*acct.engines.values(), [acct.default]] for line in lines for c in line.sources]
    unverified = [c for c in citations if not c.verified]
    assert all(len(c.unverified_because) > 20 for c in unverified)
    assert len(unverified) < len(citations) / 3


def test_the_v1_sampler_pass_grows_with_max_num_seqs_and_v0_barely_does():
    v1 = [_plan("vllm", "0.19.0", max_num_seqs=n).kv_cache_gib for n in (256, 1024)]
    v0 = [_plan("vllm", "0.6.3", max_num_seqs=n).kv_cache_gib for n in (256, 1024)]
    assert v1[0] - v1[1] > 1.0  # 768 more rows x 128,256 logits x ~18 bytes
    assert v0[0] - v0[1] < 0.5


def test_vllm_0_2_5_holds_tensor_parallel_all_reduce_inputs_of_the_profile_and_its_neighbours_do_not():
    """vllm#2031 (0.2.5) read the device's used memory while all-reduce inputs waited on NCCL's stream; 0.2.6 set
    TORCH_NCCL_AVOID_RECORD_STREAMS=1, and up to 0.2.4 only torch's allocated peak counted (no non-torch memory)."""
    model = resolve_model("meta-llama/Llama-3.1-8B-Instruct")[0]
    held = {v: _plan("vllm", v, tp=2).activation_gib - _plan("vllm", v, tp=1).activation_gib
            for v in ("0.2.4", "0.2.5", "0.2.7")}
    every_input = (2 * model.layers + 1) * 8192 * model.hidden * 2 / 2**30  # 8,192 profiled tokens x 16-bit hidden
    share = memory_accounting.line("vllm", "0.2.5").allreduce_held_share
    forward_tp_gain = held["0.2.7"]  # the MLP activations halve with TP 2 in every release
    assert 0 < share <= 1
    assert held["0.2.5"] - forward_tp_gain == pytest.approx(share * every_input, rel=1e-6)
    assert held["0.2.4"] == pytest.approx(forward_tp_gain)
    one_gpu = {v: _plan("vllm", v) for v in ("0.2.4", "0.2.7")}
    assert one_gpu["0.2.4"].kv_cache_gib - one_gpu["0.2.7"].kv_cache_gib == pytest.approx(0.2, abs=1e-6)


def test_sglang_keeps_back_its_static_fraction_of_what_the_context_left_and_profiles_nothing():
    acct, usable = memory_accounting.line("sglang", "0.4.0"), gpus()["h100-sxm5-80gb"].usable_gib
    plan = _plan("sglang", "0.4.0", utilization=0.88)
    assert plan.activation_gib == 0
    assert acct.fraction_after_overhead and acct.non_torch_gib > 0
    assert plan.kv_cache_gib == pytest.approx(
        0.88 * (usable - acct.non_torch_gib) - plan.weights_gib - acct.constant_gib, abs=0.01)
    # with tensor parallelism the distributed init's memory is outside the fraction too
    tp2 = _plan("sglang", "0.4.0", utilization=0.88, tp=2)
    assert tp2.kv_cache_gib == pytest.approx(
        0.88 * (usable - acct.non_torch_gib - acct.multi_gpu_extra_gib) - tp2.weights_gib - acct.constant_gib, abs=0.01)


def test_tgi_3_3_applies_its_wiggle_room_to_the_memory_fraction():
    v2, v33 = _plan("tgi", "2.4.1", utilization=1.0), _plan("tgi", "3.3.0", utilization=1.0)
    usable = gpus()["h100-sxm5-80gb"].usable_gib
    assert v33.budget_gib == pytest.approx(0.90 * usable)
    assert v2.kv_cache_gib == pytest.approx(0.95 * (usable - v2.weights_gib - v2.activation_gib - 0.2), abs=0.01)
