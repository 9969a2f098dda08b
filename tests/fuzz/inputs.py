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


def _multipart(fields: dict[str, bytes], boundary: str = "fuzzBOUNDARY") -> bytes:
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode() + value + b"\r\n"
             for name, value in fields.items()]
    return b"".join(parts) + f"--{boundary}--\r\n".encode()


def encoded_bodies(field: str) -> list[tuple[str, bytes, str]]:
    """(label, body, content type): one of an operation's own fields (so the body reaches its view)
    written in encodings and content types a JSON API does not expect."""
    name = field.encode()
    multipart = "multipart/form-data; boundary=fuzzBOUNDARY"
    as_json = json.dumps({field: "out of memory"}).encode()
    return [
        ("multipart NUL", _multipart({field: b"x\x00y"}), multipart),
        ("multipart lone surrogate (CESU bytes)", _multipart({field: b"\xed\xa0\x80"}), multipart),
        ("multipart invalid UTF-8", _multipart({field: b"\xff\xfe"}), multipart),
        ("multipart NUL in the name", _multipart({field + "\x00": b"x"}), multipart),
        ("multipart without boundary", _multipart({field: b"x"}), "multipart/form-data"),
        ("*/* with NUL escape", json.dumps({field: "x\u0000y"}).encode(), "*/*"),
        ("*/* form", name + b"=x", "*/*"),
        ("application/* json", as_json, "application/*"),
        ("text/plain json", as_json, "text/plain"),
        ("missing content type", as_json, ""),
        ("latin-1 declared form", name + b"=\xff\xfe\x80", "application/x-www-form-urlencoded; charset=latin-1"),
        ("unknown charset form", name + b"=x", "application/x-www-form-urlencoded; charset=no-such-codec"),
        ("form, invalid UTF-8", name + b"=\xff\xfe", "application/x-www-form-urlencoded"),
        ("form, lone surrogate", name + b"=%ED%A0%80", "application/x-www-form-urlencoded"),
        ("json lone surrogate", f'{{"{field}": "\\ud800"}}'.encode(), "application/json"),
        ("json lone surrogate key", b'{"\\udfff": "x"}', "application/json"),
        ("json, latin-1 declared", f'{{"{field}": "\xe9"}}'.encode("latin-1"), "application/json; charset=latin-1"),
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
