"""Reading a repository's issues for reports from people who run the code (crashes, OOMs, slowdowns).

Used by the "community feedback" sub-score: a repository whose users file "OOM on A100" or "hangs
after 2 hours" issues is being run for real, which is what the digest readers care about.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from papers.scoring.text_rules import HARDWARE

FIELD_REPORT = re.compile(
    r"\b(OOM|out of memory|CUDA error|illegal memory access|segfault|segmentation fault|crash(?:es|ed|ing)?|"
    r"hangs?|hanging|freez(?:e|es|ing)|deadlock|memory leak|NaNs?|(?:high|increased) latency|throughput (?:drop|regression)|"
    r"slow(?:er|down)?|in production|production (?:use|deployment|traffic)|deployed)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class FieldReport:
    title: str
    url: str
    signal: str
    hardware: str

    def __str__(self) -> str:
        on = f" on {self.hardware}" if self.hardware else ""
        return f'"{self.title}" ({self.signal}{on}) {self.url}'.strip()


def _signal(issue: dict, title: str, text: str) -> str:
    """What marks the issue as a field report; the crawler's own verdict ("matched") when it gave one,
    since it saw the issue body, which CodeRepo.production_signals does not keep."""
    if issue.get("matched"):
        return ", ".join(str(m) for m in issue["matched"])
    hit = FIELD_REPORT.search(title) or FIELD_REPORT.search(text)
    return hit.group(1).lower() if hit else ""


def field_reports(issues: tuple[dict, ...]) -> list[FieldReport]:
    """Issues (not pull requests) whose title or body reports a failure or use in the field."""
    reports = []
    for issue in issues:
        pull = issue.get("pull_request")
        if isinstance(pull, dict) and any(pull.values()):  # old recordings give issues an all-null stub
            continue
        title = str(issue.get("title") or "")
        text = f"{title}\n{issue.get('body') or ''}"
        signal = _signal(issue, title, text)
        if not signal:
            continue
        gpu = HARDWARE.search(text)
        url = str(issue.get("html_url") or issue.get("url") or "")
        reports.append(FieldReport(title.strip(), url, signal, gpu.group(1) if gpu else ""))
    return reports
