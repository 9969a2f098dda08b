"""Hostile and careless values for the fuzz harness: fixed lists plus seeded random ones.

Every surface draws from here, so a new kind of bad input (a new encoding trick, a new number
form) reaches all of them at once. Randomness is seeded per surface: a failure replays exactly.
"""
from __future__ import annotations

import json
import random

SEED = 20261201

STRINGS = [
    "", " ", "\x00", "a\x00b", "\t\n\r", "\u202e\u200b", "\ud800", "é" * 300, "💥" * 50, "x" * 10_000,
    "1" * 5_000, "-1", "0", "1e309", "-1e309", "NaN", "Infinity", "-0", "9" * 400, "0x10", "1_000",
    "true", "null", "[]", "{}", "../../etc/passwd", "/", "//", "\\", "%00", "%", "%zz", "<script>x</script>",
    "{{ 7*7 }}", "' OR 1=1 --", "astro-ph/0601001", "2309.06180v99999999999999999999", "foo/bar", "A100" * 2000,
    "H100-SXM-80GB", "meta-llama/Llama-3.1-8B-Instruct", "arXiv:" * 1000, "https://127.0.0.1\\@arxiv.org/",
]
NUMBERS = [0, -1, 1, 2**31, 2**63, 10**400, 1e308, -1e308, 0.5, True, False, None]


def rng(surface: str) -> random.Random:
    """A generator seeded for one surface, the same on every run."""
    return random.Random(f"{SEED}:{surface}")


def random_string(r: random.Random, max_len: int = 64) -> str:
    alphabet = "aZ09 ./-_:%@\\\x00\x7f\u00e9\u202e\U0001f4a5\t\n"
    return "".join(r.choice(alphabet) for _ in range(r.randint(0, max_len)))


def values(r: random.Random, count: int) -> list[object]:
    """`count` values: each fixed string and number once (as far as count allows), then random ones."""
    fixed: list[object] = [*STRINGS, *NUMBERS]
    extra = [random_string(r) for _ in range(max(0, count - len(fixed)))]
    return (fixed + extra)[:count] if count >= len(fixed) else r.sample(fixed, count)


def hostile_json_bodies() -> list[tuple[str, bytes, str]]:
    """(label, body, content type) for any endpoint that takes a body."""
    deep = "[" * 100_000 + "]" * 100_000
    return [
        ("empty", b"", "application/json"),
        ("not json", b"{not json", "application/json"),
        ("NaN literal", b'{"a": NaN, "b": Infinity, "c": -Infinity}', "application/json"),
        ("huge number", b'{"a": 1' + b"0" * 5000 + b"}", "application/json"),
        ("deep arrays", deep.encode(), "application/json"),
        ("deep objects", ('{"a":' * 5_000 + "1" + "}" * 5_000).encode(), "application/json"),
        ("3 MB string", json.dumps({"a": "x" * 3_000_000}).encode(), "application/json"),
        ("NUL escape", b'{"a": "x\\u0000y"}', "application/json"),
        ("invalid UTF-8", b'{"a": "\xff\xfe"}', "application/json"),
        ("lone surrogate", b'{"a": "\\ud800"}', "application/json"),
        ("top-level list", b"[1, 2, 3]", "application/json"),
        ("top-level string", b'"text"', "application/json"),
        ("top-level null", b"null", "application/json"),
        ("form body", b"a=1&b=%00", "application/x-www-form-urlencoded"),
        ("xml", b"<?xml version='1.0'?><!DOCTYPE x [<!ENTITY e SYSTEM 'file:///etc/passwd'>]><x>&e;</x>",
         "application/xml"),
        ("many keys", json.dumps({f"k{i}": i for i in range(50_000)}).encode(), "application/json"),
    ]


def field_bodies(r: random.Random, properties: dict[str, dict], count: int) -> list[dict]:
    """Objects with the operation's own field names holding hostile values (beyond its schema)."""
    names = list(properties) or ["value"]
    pool = values(r, 60)
    bodies = []
    for _ in range(count):
        body = {name: r.choice(pool) for name in r.sample(names, r.randint(1, len(names)))}
        if r.random() < 0.2:
            body[r.choice(names)] = {"nested": [r.choice(pool)] * r.randint(0, 3)}
        bodies.append(body)
    return bodies
