"""`python manage.py crawl_github [--repo OWNER/NAME ...]`: refresh repository health from GitHub.

Without --repo, every known repository. A rate-limited repository is handed to the Celery task
fetch_repo_task with the countdown GitHub announced; the other repositories still run.
"""
from __future__ import annotations

import requests
from django.core.management.base import BaseCommand

from papers.clients.github import RateLimited
from papers.services.github import repos_to_sync, sync_repo


class Command(BaseCommand):
    help = "Fetch stars, forks, licence, CI and production signals of GitHub repositories."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--repo", nargs="+", default=[], help="OWNER/NAME (default: all known repos)")
        parser.add_argument("--no-queue", action="store_true", help="do not queue retries of rate-limited repos")

    def handle(self, *args, repo=(), no_queue=False, **options) -> None:
        from papers.tasks import fetch_repo_task

        for full_name in repo or repos_to_sync():
            try:
                report = sync_repo(full_name)
            except requests.RequestException as exc:
                self.stderr.write(f"{full_name}: GitHub unreachable ({exc}); try again later")
                continue
            except RateLimited as exc:
                self.stderr.write(f"{full_name}: rate limited; retrying in {exc.wait_s} s")
                if not no_queue:
                    fetch_repo_task.apply_async(args=[full_name], countdown=exc.wait_s)
                continue
            if report.error:
                self.stderr.write(f"{full_name}: {report.error}")
                continue
            changed = ", ".join(report.changed) or "not modified"
            linked = f"; linked papers {', '.join(report.linked_papers)}" if report.linked_papers else ""
            self.stdout.write(f"{report.full_name}: {changed}{linked}")
