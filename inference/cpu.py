"""What this CPU computes fast, read from /proc/cpuinfo (no torch import, so any app may ask cheaply)."""
from __future__ import annotations

from functools import cache


@cache
def cpu_has_fast_bf16() -> bool:
    """bf16 matmuls are only fast on CPUs with native bf16 dot products (AVX512-BF16 or AMX)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags
