"""One GPU-name vocabulary: loaded and checked once, and every recogniser of GPU names reads it."""
from __future__ import annotations

import json
import re
import time

import pytest

from advisor.catalog import gpus as catalog_gpus
from ontology.extraction.rules import apply_rules
from ontology.extraction.text import sentences
from ontology.gpus import DATA_FILE, GpuVocabularyError, parse_vocabulary, vocabulary
from papers.pdf.environment import find_environment
from papers.scoring.text_rules import HARDWARE

# Names that only some of the four recognisers knew before they shared one vocabulary.
ONCE_SCATTERED = ["H20", "B100", "B200", "GH200", "A6000", "A10G", "L40S", "H800", "RTX 4090", "RTX 3090 Ti", "MI300X"]


def _raw() -> dict:
    return json.loads(DATA_FILE.read_text(encoding="utf-8"))


def test_the_vocabulary_holds_the_union_of_names_each_recogniser_knew():
    names = vocabulary().names()
    assert set(ONCE_SCATTERED) <= set(names)
    assert all(vocabulary().sources[m.vendor].startswith("https://") for m in vocabulary().models)


@pytest.mark.parametrize("name", ONCE_SCATTERED)
def test_the_pdf_environment_finder_reports_every_vocabulary_gpu_in_a_setup_sentence(name):
    env = find_environment([f"All experiments run on a server with 8 NVIDIA {name} GPUs and CUDA 12.1."])
    assert env["gpu_models"] == [name.replace(" ", "")]
    assert env["gpus"][0]["count"] == 8


@pytest.mark.parametrize("name", ONCE_SCATTERED)
def test_the_rule_extractor_reads_gpu_memory_after_every_vocabulary_gpu(name):
    facts = apply_rules(sentences([f"Each node has one {name} GPU with 48GB memory."]), "Sys")
    assert ("gpu_memory_gb", "48") in {(f["parameter"], f["value"]) for f in facts}


@pytest.mark.parametrize("name", ONCE_SCATTERED)
def test_the_scoring_rules_count_every_vocabulary_gpu_as_real_hardware(name):
    hit = HARDWARE.search(f"We evaluate on {name} GPUs.")
    assert hit and hit.group(1) == name


def test_brand_words_and_written_together_spellings_are_the_same_gpu():
    assert HARDWARE.search("on an NVIDIA GeForce RTX4090").group(1) == "NVIDIA GeForce RTX4090"
    assert vocabulary().canonical("rtx4090") == "RTX 4090"
    assert vocabulary().find("8x H100, then the A100-SXM4 and an RTX 3090 Ti") == ["H100", "A100", "RTX 3090 Ti"]
    assert vocabulary().canonical("A1000") is None


def test_every_gpu_in_the_advisor_catalog_has_its_name_in_the_vocabulary():
    missing = [g.name for g in catalog_gpus().values() if not vocabulary().find(g.name)]
    assert missing == []


@pytest.mark.parametrize(("change", "message"), [
    (lambda raw: raw.update(extra=1), "expected exactly the keys"),
    (lambda raw: raw["models"].append({"name": "A100", "vendor": "NVIDIA"}), "repeats 'A100'"),
    (lambda raw: raw["models"].append({"name": "Z9", "vendor": "Acme"}), "vendor 'Acme' is not under 'vendors'"),
    (lambda raw: raw["models"].append({"name": "A(100", "vendor": "NVIDIA"}), "is not a model name"),
    (lambda raw: raw["models"].append({"name": "Z9", "vendor": "NVIDIA", "memory": 80}), "exactly the keys 'name'"),
    (lambda raw: raw["vendors"]["NVIDIA"].update(source="nvidia.com"), "https:// URL"),
])
def test_a_malformed_vocabulary_file_fails_on_load_naming_the_file_and_the_entry(change, message):
    raw = _raw()
    change(raw)
    with pytest.raises(GpuVocabularyError, match=message) as error:
        parse_vocabulary(raw)
    assert "gpus.json" in str(error.value)


@pytest.mark.parametrize("text", ["RTX " * 25_000, "NVIDIA " * 15_000, "A1" * 50_000, "1" * 100_000,
                                  "NVIDIA-Tesla-" * 8_000 + "H1"])
def test_gpu_name_matching_stays_linear_on_long_adversarial_text(text):
    pattern = vocabulary().pattern(with_brand=True)
    started = time.process_time()
    list(re.finditer(pattern, text))
    HARDWARE.findall(text)
    vocabulary().find(text)
    # linear matching of 100k characters takes milliseconds; a quadratic pattern would take minutes
    assert time.process_time() - started < 2.0
