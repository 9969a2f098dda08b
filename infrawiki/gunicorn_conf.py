"""gunicorn settings for the web process (`gunicorn --config python:infrawiki.gunicorn_conf`).

Each worker loads the sentence-embedding model once, right after it boots, instead of inside the
first search or advisor request (which then took many seconds and timed out under load).
"""
from __future__ import annotations

import os

bind = f"127.0.0.1:{os.environ.get('INFRAWIKI_PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
timeout = 60  # covers the one-off model load at boot on a busy 2-core machine
graceful_timeout = 10
accesslog = "-"


def post_worker_init(worker) -> None:
    import torch

    from ontology.embeddings import embed_one

    # Several workers share the cores; one torch thread each avoids oversubscribing them.
    torch.set_num_threads(1)
    embed_one("warm-up")
