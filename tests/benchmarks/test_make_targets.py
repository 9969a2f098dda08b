"""Every `make bench-*` target starts as make starts it: `python -m <module>` in a plain shell, with no
Django settings in the environment. The benchmarks' own tests call their functions inside pytest's
configured Django, so only this catches a module that cannot even be imported on its own."""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bench_modules() -> dict[str, str]:
    """make target -> the module its recipe runs with `$(PY) -m`."""
    text = (ROOT / "Makefile").read_text()
    return dict(re.findall(r"^(bench-[\w-]+):.*\n\t\$\(PY\) -m ([\w.]+)", text, flags=re.MULTILINE))


def test_every_benchmark_target_answers_help_from_a_plain_shell():
    modules = bench_modules()
    assert {"bench-parse", "bench-advisor", "bench-extraction", "bench-perf-accuracy", "bench-inference"} <= set(modules)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    runs = {target: subprocess.Popen([sys.executable, "-m", module, "--help"], cwd=ROOT, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for target, module in sorted(set(modules.items()))}
    failed = {}
    for target, run in runs.items():
        out, _ = run.communicate(timeout=300)
        if run.returncode != 0 or "usage:" not in out:
            failed[target] = out.strip().splitlines()[-1:] or [f"exit {run.returncode}"]
    assert not failed, failed
