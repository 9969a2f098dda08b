"""Engine profiles: typed data files that refuse unknown keys, and the technique-flag API other apps read."""
from __future__ import annotations

import json

import pytest

from advisor.profiles import (
    ENGINES_DIR,
    ProfileError,
    TechniqueFlag,
    engine_id,
    engine_names,
    load_profile,
    profile,
    technique_flag,
    technique_flags,
)


def _write(tmp_path, data):
    path = tmp_path / "engine.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_every_shipped_profile_loads_and_the_engine_list_is_in_preference_order():
    assert engine_names() == ["vllm", "sglang", "tensorrt-llm", "tgi", "llama.cpp"]
    assert {p.stem for p in ENGINES_DIR.glob("*.json")} == set(engine_names())


def test_a_profile_with_an_unknown_key_is_a_load_error(tmp_path):
    data = json.loads((ENGINES_DIR / "tgi.json").read_text(encoding="utf-8"))
    data["cuda_memory_fraktion"] = 0.9
    with pytest.raises(ProfileError, match="cuda_memory_fraktion"):
        load_profile(_write(tmp_path, data))


def test_an_unknown_key_deep_inside_a_release_is_a_load_error_too(tmp_path):
    data = json.loads((ENGINES_DIR / "vllm.json").read_text(encoding="utf-8"))
    data["releases"][0]["cuda_varaints"] = ["11.8"]
    with pytest.raises(ProfileError, match="cuda_varaints"):
        load_profile(_write(tmp_path, data))


def test_a_fact_without_a_public_source_does_not_load(tmp_path):
    data = json.loads((ENGINES_DIR / "sglang.json").read_text(encoding="utf-8"))
    data["releases"][0]["source"] = "somewhere on the internet"
    with pytest.raises(ProfileError, match="source"):
        load_profile(_write(tmp_path, data))


def test_releases_out_of_order_do_not_load(tmp_path):
    data = json.loads((ENGINES_DIR / "vllm.json").read_text(encoding="utf-8"))
    data["releases"].reverse()
    with pytest.raises(ProfileError, match="oldest first"):
        load_profile(_write(tmp_path, data))


def test_a_renamed_flag_is_answered_per_release():
    old = technique_flag("vllm", "0.6.3", "speculative_decoding")
    new = technique_flag("vllm", "0.10.0", "speculative_decoding")
    assert old == TechniqueFlag("vllm", "--speculative-model", "0.4.1", "0.8.2", old.source)
    assert new.flag == "--speculative-config" and new.since == "0.8.3" and new.until is None
    assert old.source.startswith("https://") and new.source.startswith("https://")


def test_a_release_before_the_switch_existed_has_no_flag():
    assert technique_flag("vllm", "0.4.2", "chunked_prefill") is None
    assert technique_flag("vllm", "0.5.3.post1", "chunked_prefill").flag == "--enable-chunked-prefill"


def test_an_always_on_technique_has_no_flag_to_set_but_is_on():
    assert technique_flag("sglang", None, "prefix_caching") is None
    assert profile("sglang").technique_on("prefix_caching", "0.5.9")
    assert profile("sglang").technique("prefix_caching").off_flag == "--disable-radix-cache"


def test_technique_flags_lists_every_engine_and_spelling():
    flags = technique_flags("speculative_decoding")
    assert [(f.engine, f.flag) for f in flags] == [
        ("vllm", "--speculative-model"), ("vllm", "--speculative-config"), ("tgi", "--speculate")]
    engines = {f.engine for f in technique_flags("multi_lora")}
    assert {"vllm", "tgi"} <= engines


def test_engine_aliases_come_from_the_profiles():
    assert engine_id("TRT-LLM") == "tensorrt-llm"
    assert engine_id("text-generation-inference") == "tgi"
    assert engine_id("Text Generation Inference") == "tgi"
    assert engine_id("banana") is None


def test_defaults_hold_until_a_release_changes_them():
    tgi = profile("tgi")
    assert tgi.default("max_num_seqs", "2.4.1") == 128
    assert profile("vllm").default("max_num_seqs", "0.6.3") == 256


def test_tgi_caches_prefixes_by_default_from_2_3_1_and_says_how_to_turn_it_off():
    tgi = profile("tgi")
    assert [r.version for r in tgi.releases][:2] == ["2.3.1", "2.4.1"]
    assert tgi.technique_on("prefix_caching", "2.4.1") and technique_flag("tgi", "2.4.1", "prefix_caching") is None
    assert "PREFIX_CACHING=0" in tgi.technique("prefix_caching", "2.3.1").off_flag
