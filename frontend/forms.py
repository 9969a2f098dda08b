"""Forms of the browser pages: the advisor request and the fact editor.

The advisor form turns labelled fields into the request dict of the advisor contract (DESIGN.md);
its own validation is only about shapes (numbers are numbers), the advisor judges the meaning.
"""
from __future__ import annotations

from typing import Any

from django import forms

from advisor.profiles import engine_names, profile


def engine_choices() -> list[tuple[str, str]]:
    """The engine picker: the advisor's one engine list, read when the form is built."""
    return [("", "any engine (let the advisor choose)"), *((eid, profile(eid).name) for eid in engine_names())]

_OPTIONAL_INT = {"required": False, "min_value": 1}


class AdvisorForm(forms.Form):
    gpu = forms.CharField(label="GPU", max_length=80, help_text="e.g. A100-SXM4-40GB, L4, H100 80GB")
    gpu_count = forms.IntegerField(label="Number of GPUs", min_value=1, max_value=64, initial=1)
    cuda = forms.CharField(label="CUDA version the driver supports", max_length=10, required=False,
                           help_text="as nvidia-smi shows it, e.g. 12.1")
    model = forms.CharField(label="Model", max_length=200, help_text="Hugging Face id, e.g. meta-llama/Llama-3.1-8B-Instruct")
    engine = forms.ChoiceField(label="Engine", choices=engine_choices, required=False)
    engine_version = forms.CharField(label="Engine version", max_length=40, required=False)
    max_context = forms.IntegerField(label="Longest context (tokens)", **_OPTIONAL_INT)
    prompt_tokens = forms.IntegerField(label="Prompt tokens per request", initial=1024, **_OPTIONAL_INT)
    output_tokens = forms.IntegerField(label="Output tokens per request", initial=256, **_OPTIONAL_INT)
    concurrency = forms.IntegerField(label="Concurrent requests", initial=16, **_OPTIONAL_INT)
    p95_ttft_ms = forms.FloatField(label="p95 time to first token (ms)", required=False, min_value=0)
    p95_tpot_ms = forms.FloatField(label="p95 time per output token (ms)", required=False, min_value=0)
    p95_latency_ms = forms.FloatField(label="p95 end-to-end latency (ms)", required=False, min_value=0)
    min_throughput_tok_s = forms.FloatField(label="Minimum throughput (tokens/s)", required=False, min_value=0)

    def advisor_request(self) -> dict[str, Any]:
        """The advisor contract's request body built from the cleaned fields."""
        c = self.cleaned_data
        return {
            "gpu": c["gpu"].strip(),
            "gpu_count": c["gpu_count"],
            "cuda": c["cuda"].strip() or None,
            "model": c["model"].strip(),
            "engine": c["engine"] or None,
            "engine_version": c["engine_version"].strip() or None,
            "max_context": c["max_context"],
            "workload": {k: c[k] for k in ("prompt_tokens", "output_tokens", "concurrency") if c[k] is not None},
            "sla": {k: c[k] for k in ("p95_ttft_ms", "p95_tpot_ms", "p95_latency_ms", "min_throughput_tok_s")},
        }


class FactEditForm(forms.Form):
    """What an editor may correct on a fact; the note goes into the revision log."""

    subject = forms.CharField(max_length=200)
    parameter = forms.CharField(max_length=120)
    value = forms.CharField(max_length=200, required=False)
    unit = forms.CharField(max_length=30, required=False)
    condition = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    effect = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    page = forms.IntegerField(min_value=1, required=False)
    note = forms.CharField(label="Why (kept in the history)", max_length=500, required=False)

    def changes(self) -> dict[str, Any]:
        """Edited fields only (the note is not a field of the fact)."""
        return {k: v for k, v in self.cleaned_data.items() if k != "note"}
