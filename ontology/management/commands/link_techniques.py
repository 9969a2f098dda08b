"""`python manage.py link_techniques`: re-link every live fact to the techniques of the current vocabulary.

Run after ontology/data/techniques.json changes, or after facts were loaded by a path that did not go
through ontology.services.store_facts. Facts whose techniques a person set are left as they are.
"""
from __future__ import annotations

from django.core.management.base import BaseCommand

from ontology.models import HIDDEN_STATUSES, Fact
from ontology.services import link_facts

BATCH = 1000


class Command(BaseCommand):
    help = "Link every fact to the serving techniques its text or parameter names (ontology/data/techniques.json)."

    def handle(self, *args, **options) -> None:
        facts = Fact.objects.exclude(status__in=HIDDEN_STATUSES).order_by("pk")
        created = total = 0
        for start in range(0, facts.count(), BATCH):
            batch = list(facts[start:start + BATCH])
            created += link_facts(batch)
            total += len(batch)
        self.stdout.write(f"{total} facts checked, {created} technique links made")
