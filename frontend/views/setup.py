"""The saved setup (POST /setup/): a person's GPU, count, CUDA, engine and version, model and workload,
so every paper page can say whether the paper applies to it (advisor.applicability). A signed-in
person's setup is kept with their account (advisor.services.save_setup) and follows them to any
browser; an anonymous visitor's lives in their session until it ends."""
from __future__ import annotations

import re
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.views.decorators.http import require_POST

from advisor import selectors as advisor_selectors
from advisor import services as advisor_services
from frontend.views.next_url import next_url

SESSION_KEY = "saved_setup"


class SetupForm(forms.Form):
    gpu = forms.CharField(max_length=80, label="GPU", help_text="e.g. L4, A100-SXM4-80GB")
    gpu_count = forms.IntegerField(min_value=1, max_value=1024, initial=1, label="GPUs")
    cuda = forms.CharField(max_length=10, required=False, label="CUDA (driver)")
    engine = forms.CharField(max_length=40, required=False, help_text="e.g. vllm")
    engine_version = forms.CharField(max_length=32, required=False, label="Engine version")
    model = forms.CharField(max_length=200, required=False, help_text="Hugging Face model id")
    prompt_tokens = forms.IntegerField(min_value=1, max_value=1_048_576, required=False, label="Prompt tokens")
    output_tokens = forms.IntegerField(min_value=1, max_value=131_072, required=False, label="Output tokens")
    concurrency = forms.IntegerField(min_value=1, max_value=4096, required=False)

    def clean_cuda(self) -> str:
        value = self.cleaned_data["cuda"].strip()
        if value and not re.fullmatch(r"\d{1,2}\.\d{1,2}", value):
            raise forms.ValidationError("write the CUDA version as major.minor, e.g. 12.4")
        return value


def saved_setup(request: HttpRequest) -> dict[str, Any] | None:
    """The setup this visitor saved (with their account when signed in, else in the session), or None."""
    if request.user.is_authenticated:
        kept = advisor_selectors.saved_setup(request.user)
        if kept is not None:
            return kept
    setup = request.session.get(SESSION_KEY)
    return setup if isinstance(setup, dict) else None


@require_POST
def save_setup(request: HttpRequest) -> HttpResponse:
    """Save (or with `clear`, forget) the visitor's setup, then go back to the page they came from."""
    back = next_url(request, "/")
    if request.POST.get("clear"):
        request.session.pop(SESSION_KEY, None)
        if request.user.is_authenticated:
            advisor_services.forget_setup(request.user)
        return HttpResponseRedirect(back)
    form = SetupForm(request.POST)
    if form.is_valid():
        setup = {k: v for k, v in form.cleaned_data.items() if v not in (None, "")}
        if request.user.is_authenticated:
            advisor_services.save_setup(request.user, setup)
        else:
            request.session[SESSION_KEY] = setup
        return HttpResponseRedirect(back + "#applies")
    request.session[f"{SESSION_KEY}_errors"] = {k: [str(e) for e in v] for k, v in form.errors.items()}
    return HttpResponseRedirect(back + "#applies")
