"""`manage.py send_digest [--dry-run] [--user EMAIL]`: send the due weekly digests now.

Normally Celery beat does this weekly; the command is for operators. --dry-run prints, for each
due subscriber (or the one named by --user, due or not), the message they would get, and sends
and changes nothing. An address with no subscription is previewed as a new subscriber with
all topics and no minimum score.
"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from papers.digest.emails import digest_message
from papers.digest.selectors import build_digest
from papers.digest.services import due_subscriptions, send_due_digests
from papers.models import Subscription


class Command(BaseCommand):
    help = "Send the weekly digest to every due subscriber (or print it with --dry-run)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="print the digests; send nothing")
        parser.add_argument("--user", metavar="EMAIL", help="only this subscriber")

    def handle(self, *args, **options) -> None:
        now = timezone.now()
        email = options["user"]
        if options["dry_run"]:
            self._preview(now, email)
            return
        if email and not Subscription.objects.filter(email=email.strip().lower()).exists():
            raise CommandError(f"{email} is not subscribed; subscribe at /digest/ first", returncode=2)
        report = send_due_digests(now, email)
        self.stdout.write(str(report))
        if report.failed:
            raise CommandError(f"failed for {', '.join(report.failed)}; recorded, will be retried")

    def _preview(self, now, email: str | None) -> None:
        if email:
            address = email.strip().lower()
            subscription = Subscription.objects.filter(email=address).first()
            if subscription is None:
                self.stdout.write(f"({address} is not subscribed: preview with all topics, no minimum score)")
                subscription = Subscription(email=address, confirmed_at=now)
            subscriptions = [subscription]
        else:
            subscriptions = list(due_subscriptions(now))
            if not subscriptions:
                self.stdout.write("no subscriber is due; use --user EMAIL to preview anyone's digest")
        for subscription in subscriptions:
            digest = build_digest(subscription, now)
            message = digest_message(digest)
            self.stdout.write(f"To: {', '.join(message.to)}\nSubject: {message.subject}\n")
            for name in ("List-Unsubscribe", "List-Unsubscribe-Post"):
                self.stdout.write(f"{name}: {message.extra_headers[name]}")
            self.stdout.write("\n" + message.body)
