"""Periodic jobs run when their *_CRON setting says, read in cron's field order; a bad line stops the start."""
from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from celery.schedules import crontab
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from infrawiki.env import env_cron
from tests.conftest import ROOT
from tests.infrawiki.test_settings import CLEAN_ENV, run_check

START = datetime(2026, 1, 28, 12, 0, tzinfo=UTC)  # a Wednesday at noon, days before a month ends
JOBS = {"nightly-crawl": "CRAWL_CRON", "nightly-github": "GITHUB_CRON", "nightly-rescore": "RESCORE_CRON",
        "weekly-digest": "DIGEST_CRON"}


def next_runs(schedule: crontab, count: int = 4, start: datetime = START) -> list[str]:
    """The next `count` times Celery beat would run `schedule` after `start`, as ISO strings."""
    runs, last = [], start
    for _ in range(count):
        schedule.nowfun = lambda at=last: at
        last = last + schedule.remaining_estimate(last)
        runs.append(last.strftime("%a %Y-%m-%d %H:%M"))
    return runs


def test_by_default_the_digest_goes_out_every_monday_at_eight_in_every_month():
    assert next_runs(settings.CELERY_BEAT_SCHEDULE["weekly-digest"]["schedule"]) == [
        "Mon 2026-02-02 08:00", "Mon 2026-02-09 08:00", "Mon 2026-02-16 08:00", "Mon 2026-02-23 08:00"]


@pytest.mark.parametrize(("job", "expected"), [
    ("nightly-crawl", ["Thu 2026-01-29 02:00", "Fri 2026-01-30 02:00", "Sat 2026-01-31 02:00", "Sun 2026-02-01 02:00"]),
    ("nightly-github", ["Thu 2026-01-29 02:30", "Fri 2026-01-30 02:30", "Sat 2026-01-31 02:30", "Sun 2026-02-01 02:30"]),
    ("nightly-rescore", ["Thu 2026-01-29 03:30", "Fri 2026-01-30 03:30", "Sat 2026-01-31 03:30", "Sun 2026-02-01 03:30"]),
])
def test_by_default_the_nightly_jobs_run_every_day_of_every_month(job, expected):
    assert next_runs(settings.CELERY_BEAT_SCHEDULE[job]["schedule"]) == expected


def test_custom_cron_lines_set_each_schedule_in_cron_field_order():
    custom = {"CRAWL_CRON": "15 1 * * *", "GITHUB_CRON": "0 */12 * * *", "RESCORE_CRON": "0 4 1 * *",
              "DIGEST_CRON": "30 9 * * fri"}
    script = (
        "import json, django; django.setup()\n"
        "from django.conf import settings\n"
        "from celery.schedules import crontab\n"
        "from tests.infrawiki.test_schedules import next_runs\n"
        "print(json.dumps({job: next_runs(entry['schedule']) for job, entry in settings.CELERY_BEAT_SCHEDULE.items()\n"
        "                  if isinstance(entry['schedule'], crontab)}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**CLEAN_ENV, "DJANGO_SETTINGS_MODULE": "infrawiki.settings", **custom})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == {
        "nightly-crawl": ["Thu 2026-01-29 01:15", "Fri 2026-01-30 01:15", "Sat 2026-01-31 01:15", "Sun 2026-02-01 01:15"],
        "nightly-github": ["Thu 2026-01-29 00:00", "Thu 2026-01-29 12:00", "Fri 2026-01-30 00:00", "Fri 2026-01-30 12:00"],
        "nightly-rescore": ["Sun 2026-02-01 04:00", "Sun 2026-03-01 04:00", "Wed 2026-04-01 04:00", "Fri 2026-05-01 04:00"],
        "weekly-digest": ["Fri 2026-01-30 09:30", "Fri 2026-02-06 09:30", "Fri 2026-02-13 09:30", "Fri 2026-02-20 09:30"],
    }


@pytest.mark.parametrize(("value", "message"), [
    ("0 8 * *", "expected 5 fields"),
    ("0 8 * * 1 2026", "expected 5 fields"),
    ("61 8 * * 1", "minute '61' is invalid"),
    ("0 25 * * 1", "hour '25' is invalid"),
    ("0 8 32 * *", "day_of_month '32' is invalid"),
    ("0 8 * 13 *", "month_of_year '13' is invalid"),
    ("0 8 * * 7", "day_of_week '7' is invalid"),
    ("x 8 * * 1", "minute 'x' is invalid"),
    ("0 8 1 * 1", "restricts both day_of_month and day_of_week"),
])
def test_a_bad_cron_line_is_refused_naming_the_variable_and_the_field(monkeypatch, value, message):
    monkeypatch.setenv("DIGEST_CRON", value)
    with pytest.raises(ImproperlyConfigured, match=message) as error:
        env_cron("DIGEST_CRON", "0 8 * * 1")
    assert str(error.value).startswith("DIGEST_CRON=")


@pytest.mark.parametrize("name", list(JOBS.values()))
def test_a_bad_cron_line_in_any_schedule_stops_the_start(name):
    result = run_check(**{name: "0 8 * * 1 extra"})
    assert result.returncode != 0
    assert name in result.stderr and "expected 5 fields" in result.stderr
