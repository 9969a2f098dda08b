"""Builds the engine's C++ extension (csrc/: the fused decode loop and the int8 block kernels) once per
CPU and process, for models/fused_decode.py and layers/int8_blocks.py, which both call into it.

The extension is compiled on first use with torch's cpp_extension (a C++ compiler and ninja; ~35 s
with g++ 12, then cached per CPU, since it is built for the CPU it runs on) in the engine's cache
folder (`extensions/`). If it cannot be built, the caller is told why and keeps its reference path.

Builders take turns on an flock of their own, which the kernel drops when a builder dies. torch's
own lock file (FileBaton: a file that exists while a build runs) survives a builder killed mid-build,
and every later build would then wait for it forever; under the flock, such a file can only be stale,
so it is removed.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import platform
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import torch

from inference.loader.default_model import cache_dir

log = logging.getLogger(__name__)
CSRC = Path(__file__).resolve().parent / "csrc"
SOURCE = CSRC / "decode_layers.cpp"
SOURCES = [SOURCE, CSRC / "int8_blocks.cpp"]  # int8_blocks.h is hashed too: see _cpu_signature


def _cpu_signature() -> str:
    """What the machine code depends on: the CPU's instruction sets, torch's version and the sources (torch
    rebuilds on a changed .cpp but not on a changed header)."""
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    except OSError:
        flags = ""
    sources = b"".join(p.read_bytes() for p in sorted(CSRC.iterdir()) if p.suffix in (".cpp", ".h"))
    return hashlib.sha256(f"{platform.machine()} {flags} {torch.__version__}".encode() + sources).hexdigest()[:12]


@cache
def load_extension() -> tuple[Any | None, str]:
    """The compiled module and "", or None and the reason it is unavailable (built once per process)."""
    if shutil.which("ninja") is None:
        try:
            import ninja  # the PyPI wheel ships the binary; put it where cpp_extension looks

            os.environ["PATH"] = f"{ninja.BIN_DIR}{os.pathsep}{os.environ.get('PATH', '')}"
        except ImportError:
            return _unavailable("ninja is not installed (pip install ninja)")
    if shutil.which(os.environ.get("CXX", "c++")) is None:
        return _unavailable("no C++ compiler on PATH (set CXX or install g++)")
    from torch.utils import cpp_extension

    name = f"inference_decode_layers_{_cpu_signature()}"
    build = cache_dir() / "extensions" / name
    try:
        build.mkdir(parents=True, exist_ok=True)
        with open(build / "build.flock", "w") as turn:
            fcntl.flock(turn, fcntl.LOCK_EX)
            (build / "lock").unlink(missing_ok=True)  # torch's FileBaton, left by a builder that was killed
            module = cpp_extension.load(
                name=name, sources=[str(p) for p in SOURCES], build_directory=str(build),
                extra_cflags=["-O3", "-march=native", "-fopenmp"], extra_ldflags=["-fopenmp"], verbose=False)
    except Exception as exc:  # a compiler error is long; its last line says what failed
        last = str(exc).strip().splitlines()[-1:] or [type(exc).__name__]
        return _unavailable(f"building {SOURCE.name} failed: {last[0]}")
    return module, ""


def _unavailable(why: str) -> tuple[None, str]:
    log.warning("decode steps keep the Python reference path: %s", why)
    return None, why
