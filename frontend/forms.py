"""Forms of the browser pages: the advisor request and the fact editor.

The advisor form turns labelled fields into the request dict of the advisor contract (DESIGN.md);
its own validation is only about shapes (numbers are numbers), the advisor judges the meaning.
"""
from __future__ import annotations

import json
from typing import Any

from django import forms
from django.conf import settings

from advisor.selectors import MAX_CONFIG_BYTES as MAX_CONFIG_CHARS
from advisor.selectors import engine_names, openapi_schema, profile


def engine_choices() -> list[tuple[str, str]]:
    """The engine picker: the advisor's one engine list, read when the form is built."""
    return [("", "any engine (let the advisor choose)"), *((eid, profile(eid).name) for eid in engine_names())]


def _limits(section: str | None, name: str) -> dict[str, Any]:
    """Bounds of one request field, read from the advisor request model's schema (one home for limits)."""
    schema = openapi_schema()
    prop = (schema["properties"][section]["properties"] if section else schema["properties"])[name]
    out: dict[str, Any] = {}
    if "maxLength" in prop:
        out["max_length"] = prop["maxLength"]
    if "minimum" in prop:
        out["min_value"] = prop["minimum"]
    if "maximum" in prop:
        out["max_value"] = prop["maximum"]
    return out


def _int(label: str, section: str | None, name: str, **kwargs: Any) -> forms.IntegerField:
    return forms.IntegerField(label=label, required=kwargs.pop("required", False), **_limits(section, name), **kwargs)


def _float(label: str, section: str | None, name: str) -> forms.FloatField:
    return forms.FloatField(label=label, required=False, **_limits(section, name))


def _text(label: str, name: str, **kwargs: Any) -> forms.CharField:
    return forms.CharField(label=label, required=kwargs.pop("required", False), **_limits(None, name), **kwargs)


WORKLOAD_FIELDS = ("prompt_tokens", "output_tokens", "concurrency", "shared_prefix_tokens", "lora_adapters", "request_rate")
SLA_FIELDS = ("p95_ttft_ms", "p95_tpot_ms", "p95_latency_ms", "min_throughput_tok_s")


class AdvisorForm(forms.Form):
    gpu = _text("GPU", "gpu", required=True, help_text="e.g. A100-SXM4-40GB, L4, H100 80GB")
    gpu_count = _int("Number of GPUs", None, "gpu_count", required=True, initial=1)
    cuda = _text("CUDA version the driver supports", "cuda", help_text="as nvidia-smi shows it, e.g. 12.1")
    model = _text("Model", "model", required=True,
                  help_text="Hugging Face id, e.g. meta-llama/Llama-3.1-8B-Instruct, or the path of a model folder "
                            "or config.json on this server (below the folders in ADVISOR_MODEL_DIRS)")
    model_config = forms.CharField(
        label="Model config.json (optional)", required=False, max_length=MAX_CONFIG_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text="paste the model's config.json when neither the catalog nor the Hugging Face Hub has the model")
    engine = forms.ChoiceField(label="Engine", choices=engine_choices, required=False)
    engine_version = _text("Engine version", "engine_version")
    max_context = _int("Longest context (tokens)", None, "max_context")
    prompt_tokens = _int("Prompt tokens per request", "workload", "prompt_tokens", initial=1024)
    output_tokens = _int("Output tokens per request", "workload", "output_tokens", initial=256)
    concurrency = _int("Concurrent requests", "workload", "concurrency", initial=16)
    shared_prefix_tokens = _int("Tokens every request shares (system prompt)", "workload", "shared_prefix_tokens")
    lora_adapters = _int("LoRA adapters served", "workload", "lora_adapters")
    request_rate = _float("Arrival rate (requests/s, Poisson; empty: a closed loop of the concurrent users)",
                          "workload", "request_rate")
    p95_ttft_ms = _float("p95 time to first token (ms)", "sla", "p95_ttft_ms")
    p95_tpot_ms = _float("p95 time per output token (ms)", "sla", "p95_tpot_ms")
    p95_latency_ms = _float("p95 end-to-end latency (ms)", "sla", "p95_latency_ms")
    min_throughput_tok_s = _float("Minimum throughput (tokens/s)", "sla", "min_throughput_tok_s")

    def clean_model_config(self) -> dict[str, Any] | None:
        text = self.cleaned_data["model_config"].strip()
        if not text:
            return None
        try:
            config = json.loads(text)
        except (ValueError, RecursionError):
            raise forms.ValidationError("This is not JSON: paste the whole config.json file.") from None
        if not isinstance(config, dict):
            raise forms.ValidationError("A config.json is a JSON object ({...}).")
        return config

    def advisor_request(self) -> dict[str, Any]:
        """The advisor contract's request body built from the cleaned fields."""
        c = self.cleaned_data
        return {
            "gpu": c["gpu"].strip(),
            "gpu_count": c["gpu_count"],
            "cuda": c["cuda"].strip() or None,
            "model": c["model"].strip(),
            **({"model_config": c["model_config"]} if c["model_config"] else {}),
            "engine": c["engine"] or None,
            "engine_version": c["engine_version"].strip() or None,
            "max_context": c["max_context"],
            "workload": {k: c[k] for k in WORKLOAD_FIELDS if c[k] is not None},
            "sla": {k: c[k] for k in SLA_FIELDS},
        }


MAX_VERSION = 2**31 - 1  # a fact's version is a PostgreSQL integer; a larger one is no version we gave out


class FactReviewForm(forms.Form):
    """Verify or reject: an optional note and the version of the fact the page showed (absent on
    an old page, where the review is not checked against a version)."""

    note = forms.CharField(max_length=500, required=False)
    version = forms.IntegerField(min_value=1, max_value=MAX_VERSION, required=False)


class FactEditForm(forms.Form):
    """What an editor may correct on a fact; the note goes into the revision log.

    The page carries what it was opened with: each field's value then (Django's hidden initial
    inputs) and the fact's version. Only the fields the person changed are written, and only onto
    that version: a page opened before someone else's save never reverts that save.
    """

    subject = forms.CharField(max_length=200, show_hidden_initial=True)
    parameter = forms.CharField(max_length=120, show_hidden_initial=True)
    value = forms.CharField(max_length=200, required=False, show_hidden_initial=True)
    unit = forms.CharField(max_length=30, required=False, show_hidden_initial=True)
    condition = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, show_hidden_initial=True)
    effect = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, show_hidden_initial=True)
    page = forms.IntegerField(min_value=1, required=False, show_hidden_initial=True)
    note = forms.CharField(label="Why (kept in the history)", max_length=500, required=False)
    version = forms.IntegerField(min_value=1, max_value=MAX_VERSION, widget=forms.HiddenInput)

    FACT_FIELDS = ("subject", "parameter", "value", "unit", "condition", "effect", "page")

    @classmethod
    def opened_on(cls, fact) -> FactEditForm:
        """The form as a page shows it for `fact` now."""
        return cls(initial={**{name: getattr(fact, name) for name in cls.FACT_FIELDS}, "version": fact.version})

    def changes(self) -> dict[str, Any]:
        """The fields the person changed from what the page showed (the note is not a field of the fact)."""
        return {name: self.cleaned_data[name] for name in self.changed_data if name in self.FACT_FIELDS}

    def reopened_on(self, fact) -> FactEditForm:
        """This form as if opened on `fact` now: the fields the person changed keep their values, the
        others show the current ones; the current values become the originals and the current
        version the one a second save is checked against."""
        data = self.data.copy()
        changed = self.changes()
        for name in self.FACT_FIELDS:
            value = getattr(fact, name)
            data[self.add_initial_prefix(name)] = "" if value is None else str(value)
            if name not in changed:
                data[name] = data[self.add_initial_prefix(name)]
        data["version"] = str(fact.version)
        return type(self)(data)


class PdfUploadForm(forms.Form):
    """An editor's PDF for papers.services.imports; the size cap is the download cap (PDF_MAX_BYTES)."""

    pdf = forms.FileField(label="PDF file", help_text="A paper as a PDF with a text layer.")

    def clean_pdf(self):
        upload = self.cleaned_data["pdf"]
        if upload.size > settings.PDF_MAX_BYTES:
            raise forms.ValidationError(
                f"The file is {upload.size:,} bytes; the limit is {settings.PDF_MAX_BYTES:,} (PDF_MAX_BYTES).")
        if not upload.read(1024).lstrip().startswith(b"%PDF-"):
            raise forms.ValidationError("This is not a PDF (it does not start with %PDF-).")
        upload.seek(0)
        return upload
