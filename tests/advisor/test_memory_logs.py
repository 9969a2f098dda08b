"""The KV-cache sizing against real vLLM start-up logs (benchmarks/data/vllm_startup_logs.json)."""
from __future__ import annotations

from benchmarks.memory_model import by_version, logs, report, size


def test_every_log_cites_its_thread_and_quotes_the_lines_it_uses():
    entries = logs()
    assert len({e["id"] for e in entries}) == len(entries)
    for e in entries:
        assert e["url"].startswith("https://github.com/") and e["lines"] and e["split"] in {"dev", "heldout"}
        assert all(0 < len(line) <= 300 for line in e["lines"])
        assert e["kv_tokens"] > 0


def test_the_advisor_is_closer_than_the_naive_formula_on_every_log():
    rows = [size(e) for e in logs()]
    assert all(r.error(r.advisor) < r.error(r.naive) for r in rows), [(r.id, r.advisor, r.naive, r.observed) for r in rows]
    figures = report(rows)
    assert figures["heldout"]["advisor_median"] < figures["heldout"]["naive_median"]


def test_the_log_set_meets_the_issue_target_and_every_release_beats_the_naive_formula():
    rows = [size(e) for e in logs()]
    assert len(rows) >= 20 and {r.split for r in rows} == {"dev", "heldout"}
    figures = report(rows)
    assert figures["heldout"]["advisor_median"] <= 0.15 and figures["all"]["advisor_median"] <= 0.15, figures
    for version, f in by_version(rows).items():
        assert f["advisor_median"] < f["naive_median"], (version, f)
