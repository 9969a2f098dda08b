"""The leave-one-paper-out vocabulary of benchmarks.facts_cv, on tiny written inputs."""
from __future__ import annotations

import json
from pathlib import Path

from benchmarks.facts_cv import exclusive_groups, vocabulary_without


def test_a_name_only_one_paper_uses_is_its_own_and_a_scorer_synonym_joins_papers():
    groups = {"kv_block_size": "block_size", "block_size": "block_size"}
    gold = {"A": [{"parameter": "block_size"}, {"parameter": "lonely_knob"}],
            "B": [{"parameter": "KV-block size"}, {"parameter": "gpu_count"}]}
    assert exclusive_groups(gold, groups) == {"A": {"lonely_knob"}, "B": {"gpu_count"}}


def test_the_fold_vocabulary_loses_the_entry_its_synonyms_and_single_synonyms(tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    spec = {"kind": "parameter", "unit": None, "value_type": "number", "phrases": []}
    (data / "parameters.json").write_text(json.dumps({"lonely_knob": spec, "block_size": spec}))
    (data / "synonyms.json").write_text(json.dumps({"lonely_knob": ["lonely"], "block_size": ["page_size", "odd_alias"]}))
    (data / "gpus.json").write_text("{}")
    removed = vocabulary_without({"lonely_knob", "odd_alias"}, {}, data, tmp_path / "fold")
    assert removed == {"lonely_knob", "lonely", "odd_alias"}
    assert list(json.loads((tmp_path / "fold" / "parameters.json").read_text())) == ["block_size"]
    assert json.loads((tmp_path / "fold" / "synonyms.json").read_text()) == {"block_size": ["page_size"]}
    assert (tmp_path / "fold" / "gpus.json").read_text() == "{}"
