"""/upload/: an editor brings a paper as a PDF from the browser.

The same service as `import_pdfs` (papers.services.imports): identified, stored once by sha256,
parsed and searchable before the page answers; its extraction is queued on the `extract` queue so
a slow LLM never holds the web request. The parse itself runs in a child process under a page cap,
an inflated-size cap and PDF_PARSE_TIMEOUT_S (papers.pdf.bounded), shorter than gunicorn's worker
timeout: a hostile file is answered with its reason and the spooled copy is always removed, instead
of the worker being killed mid-request. Anonymous users are sent to log in; others get 403.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from frontend.forms import PdfUploadForm
from infrawiki.permissions import is_editor
from papers.services import import_pdf, queue_extraction

_STALE_SPOOL_S = 3600  # far past any upload's life (PDF_PARSE_TIMEOUT_S, gunicorn's 60 s)


def _sweep(spool: Path) -> None:
    """Remove spooled uploads left by a request that never finished (a worker killed or restarted
    mid-upload cannot run its own cleanup); each upload still removes its own copy when it ends."""
    cutoff = time.time() - _STALE_SPOOL_S
    for leftover in spool.glob("*.pdf"):
        try:
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()
        except FileNotFoundError:
            continue  # another request swept it first


@login_required
def upload_pdf(request: HttpRequest) -> HttpResponse:
    if not is_editor(request.user):
        raise PermissionDenied("Only editors can upload papers.")
    form = PdfUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["pdf"]
        spool = Path(settings.DATA_DIR) / "uploads"
        spool.mkdir(parents=True, exist_ok=True)
        _sweep(spool)
        with tempfile.NamedTemporaryFile(dir=spool, suffix=".pdf") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
            handle.flush()
            outcome = import_pdf(Path(handle.name), llm=None, file_name=upload.name, extract=False)
        if outcome.status == "failed":
            form.add_error("pdf", outcome.reason)
        elif outcome.status == "duplicate":
            messages.info(request, f"{upload.name} is already stored as {outcome.arxiv_id}.")
            return redirect("frontend:paper", arxiv_id=outcome.arxiv_id)
        else:
            queued = queue_extraction(outcome.paper_id)
            note = (" Its facts are being extracted." if queued else
                    " Extraction could not be queued (is the worker running?); run `manage.py extract_papers "
                    f"{outcome.arxiv_id}`.")
            if outcome.reason:
                messages.warning(request, outcome.reason)
            messages.success(request, f"{upload.name} stored as {outcome.arxiv_id} and searchable.{note}")
            return redirect("frontend:paper", arxiv_id=outcome.arxiv_id)
    return render(request, "frontend/upload.html", {"form": form, "max_mb": settings.PDF_MAX_BYTES // 2**20},
                  status=400 if form.errors else 200)

