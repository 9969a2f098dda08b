"""Honest verdicts: an answer that misses the SLA says which term fails, by how much, and what would meet it."""
from __future__ import annotations

from advisor.services import recommend

L4 = {"gpu": "NVIDIA L4", "cuda": "12.4", "model": "meta-llama/Llama-3.1-8B-Instruct",
      "workload": {"prompt_tokens": 2048, "output_tokens": 256, "concurrency": 32}}


def test_no_sla_is_its_own_verdict():
    out = recommend(L4)
    assert out["verdict"]["status"] == "no_sla" and out["verdict"]["failing"] == []


def test_a_missed_sla_names_the_term_the_prediction_and_the_margin():
    out = recommend({**L4, "sla": {"p95_ttft_ms": 100, "p95_latency_ms": 10**7}})
    v = out["verdict"]
    assert v["status"] == "misses_sla"
    assert [f["term"] for f in v["failing"]] == ["p95_ttft_ms"]
    best = out["recommendations"][0]
    failing = v["failing"][0]
    assert failing["predicted"] == best["estimates"]["ttft_p95_ms"]
    assert failing["over_by_pct"] == round(100 * (failing["predicted"] - 100) / 100, 1)
    assert "p95 time to first token" in v["summary"] and best["engine"] in v["summary"]
    assert v["would_meet"] and v["summary"] in out["warnings"]


def test_the_closest_option_comes_first_when_none_meets():
    out = recommend({**L4, "sla": {"p95_ttft_ms": 100}})
    margins = [max((r["estimates"]["ttft_p95_ms"] - 100) / 100, 0) for r in out["recommendations"]]
    assert margins[0] == min(margins)


def test_what_would_meet_it_is_checked_by_simulation():
    out = recommend({**L4, "sla": {"p95_ttft_ms": 400}})
    lowered = [a for a in out["verdict"]["would_meet"] if a.startswith(("at most", "prompts of at most"))]
    assert lowered, out["verdict"]
    words = lowered[0].split()
    workload = ({**L4["workload"], "concurrency": int(words[2])} if words[0] == "at" else
                {**L4["workload"], "prompt_tokens": int(words[4])})
    again = recommend({**L4, "workload": workload, "sla": {"p95_ttft_ms": 400},
                       "engine": out["recommendations"][0]["engine"]})
    assert any(r["meets_sla"] for r in again["recommendations"])


def test_an_sla_met_is_met():
    out = recommend({**L4, "sla": {"p95_latency_ms": 10**7}})
    assert out["verdict"]["status"] == "meets_sla" and out["recommendations"][0]["meets_sla"]
