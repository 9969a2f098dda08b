"""One-time preparation before `make run` serves: migrate, collect static files, load the bundled seed list and knowledge pack.

Runs on every `make run`; each step is idempotent, so a second run changes nothing.
"""
from __future__ import annotations

import os


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "infrawiki.settings")
    import django
    from django.conf import settings
    from django.core.management import call_command

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    call_command("load_seed")
    call_command("load_knowledge_pack")
    call_command("score_papers")  # unchanged papers keep their score, so this is cheap after the first run
    _prepare_broker()
    _start_work()
    print(f"InfraWiki data in {settings.DATA_DIR}; web UI at {settings.SITE_URL}/", flush=True)


def _prepare_broker() -> None:
    """Create the embedded broker's tables once, before several workers start and race to do it."""
    from infrawiki.celery import app

    with app.connection_for_write() as connection, connection.channel() as channel:
        for queue in app.conf.task_queues:
            queue(channel).declare()  # the first declaration creates kombu's tables


def _start_work() -> None:
    """Queue the resume task, so a first run crawls (and fetches waiting PDFs) as soon as the crawl
    worker is up instead of at the nightly crawl; offline, it records that and retries by itself."""
    from papers.tasks import resume_work_task

    resume_work_task.delay()


if __name__ == "__main__":
    main()
