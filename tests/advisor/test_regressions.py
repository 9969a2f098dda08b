"""advisor.regressions: a failure the text says began with an update gets the release that worked."""
from __future__ import annotations

import pytest

from advisor import regressions
from advisor.diagnose import diagnose
from advisor.error_text import recognise

# llama.cpp issue 23903, as its reporter filled the form
BROKEN_AND_GOOD = ("broken version: 9426 (1738129) / last known good version: 9246 (871b0b7); 1x NVIDIA GeForce RTX "
                   "5070 Ti (16 GB, SM_120 / Blackwell); cudaMalloc failed: out of memory / failed to allocate compute "
                   "pp buffers")
# lmstudio-bug-tracker issue 1370
AFTER_UPDATE = ("LM Studio 0.3.37\nModel loading fails after update to  Lamma.cpp (Windows) v1.103.0\nFailed to load "
                "the model\nError loading model.\n(Exit code: 18446744072635812000). Unknown error.")


@pytest.mark.parametrize("text, good", [
    (BROKEN_AND_GOOD, "9246"),
    (AFTER_UPDATE, None),
    ("vllm 0.9.0 fails with this while it worked with 0.8.5: RuntimeError: CUDA error", "0.8.5"),
    ("Since upgrading to 0.4.2 the server crashes; the previous version works.", None),
])
def test_an_update_that_broke_it_is_read_with_the_release_that_worked(text: str, good: str | None):
    assert regressions.regressed(text)
    assert regressions.last_good(text) == good
    back, forward = regressions.actions(text, recognise(text))
    assert back["direction"] == "downgrade" and back["value"] == good and back["source"].startswith("https://")
    assert forward["direction"] == "upgrade" and forward["value"] is None


@pytest.mark.parametrize("text", [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "Please update to the latest version of vLLM",  # an update asked for, not one that broke it
    "RuntimeError: version 0.5.0 does not support this model",
    "It works with 2 GPUs but hangs with 4: NCCL watchdog timeout",  # a count, not a release
])
def test_no_account_of_a_broken_update_gets_no_downgrade(text: str):
    assert not regressions.regressed(text)
    assert regressions.actions(text, recognise(text)) == []


@pytest.mark.django_db
def test_diagnose_answers_a_regression_with_the_release_that_worked_in_its_top_three():
    result = diagnose(BROKEN_AND_GOOD)
    top = [a for f in result["findings"][:3] for a in f["actions"]]
    assert ("llama.cpp", "downgrade", "9246") in {(a["engine"], a["direction"], a["value"]) for a in top}
    assert any(f["kind"] == "regression" for f in result["findings"][:3])
