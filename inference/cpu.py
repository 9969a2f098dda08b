"""What this CPU computes fast, read from /proc/cpuinfo (no torch import, so any app may ask cheaply)."""
from __future__ import annotations

from functools import cache


@cache
def cpu_flags() -> frozenset[str]:
    """The instruction-set flags of /proc/cpuinfo's first processor (empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            line = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return frozenset()
    return frozenset(line.partition(":")[2].split())


def cpu_has_fast_bf16() -> bool:
    """bf16 matmuls are only fast on CPUs with native bf16 dot products (AVX512-BF16 or AMX)."""
    return bool({"avx512_bf16", "amx_bf16"} & cpu_flags())
