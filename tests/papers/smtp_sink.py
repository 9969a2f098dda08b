"""A real SMTP server on loopback (aiosmtpd) that keeps every message it receives, for email tests.

Test modules import `smtp_server_fixture` (the fixture is named `smtp_server`); tests point Django's SMTP backend at it, so the whole SMTP conversation happens for real.
"""
from __future__ import annotations

import email
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.policy import default

import pytest
from aiosmtpd.controller import Controller


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    message: EmailMessage

    def part(self, content_type: str) -> str:
        found = self.message.get_body(preferencelist=(content_type.split("/")[1],))
        assert found is not None and found.get_content_type() == content_type, f"no {content_type} part"
        return found.get_content()


@dataclass
class Sink:
    port: int
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server, session, envelope):  # aiosmtpd handler hook
        message = email.message_from_bytes(envelope.original_content or envelope.content, policy=default)
        with self.lock:
            self.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos), message))
        return "250 OK"

    def to(self, address: str) -> list[Received]:
        return [r for r in self.received if address in r.rcpt_tos]


@pytest.fixture(name="smtp_server")
def smtp_server_fixture(settings) -> Iterator[Sink]:
    """Starts the server on a free loopback port and points EMAIL_* settings at it."""
    sink = Sink(port=free_port())
    controller = Controller(sink, hostname="127.0.0.1", port=sink.port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", sink.port
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 10
    settings.SITE_URL = "http://testserver"
    try:
        yield sink
    finally:
        controller.stop()
