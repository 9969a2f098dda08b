"""`make stop` ends what `make run` started: the Procfile's processes and the embedded PostgreSQL.

The test starts a real embedded PostgreSQL under a fresh data dir and the process manager with the
exact command line of the `run` recipe (read from `make -n run`), on a small Procfile of sleeping
processes (the real one loads models for minutes); then runs `make stop` for that data dir.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil

from tests.conftest import ROOT, wait_until


def _start_embedded_postgres(data_dir: Path) -> int:
    code = ("import sys; from pathlib import Path; from infrawiki.runtime import embedded_database_url; "
            "embedded_database_url(Path(sys.argv[1]))")
    subprocess.run([sys.executable, "-c", code, str(data_dir)], cwd=ROOT, check=True, timeout=180)
    return int((data_dir / "pgdata" / "postmaster.pid").read_text().split()[0])


def _run_recipe_line(env: dict) -> str:
    plan = subprocess.run(["make", "-n", "run"], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    [line] = [line for line in plan.stdout.splitlines() if "honcho start" in line]
    return line


def test_make_stop_stops_the_process_manager_its_processes_and_the_embedded_database(tmp_path):
    data_dir = tmp_path / "data"
    procfile = tmp_path / "Procfile"
    procfile.write_text(f"one: {sys.executable} -c 'import time; time.sleep(600)'\ntwo: sleep 600\n")
    env = {**os.environ, "INFRAWIKI_DATA_DIR": str(data_dir), "PROCFILE": str(procfile)}
    pg_pid = _start_embedded_postgres(data_dir)
    manager = subprocess.Popen(["sh", "-c", _run_recipe_line(env)], cwd=ROOT, env=env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        children = wait_until(lambda: len(psutil.Process(manager.pid).children(recursive=True)) >= 2 and
                              psutil.Process(manager.pid).children(recursive=True), 60, "honcho's processes")
        assert int((data_dir / "run.pid").read_text()) == manager.pid  # the recipe recorded honcho itself
        stop = subprocess.run(["make", "stop"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert stop.returncode == 0, stop.stderr
        assert "PostgreSQL" in stop.stdout and "process manager" in stop.stdout
        assert manager.wait(timeout=5) is not None
        for process in [*children, psutil.Process(pg_pid) if psutil.pid_exists(pg_pid) else None]:
            assert process is None or not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
        assert not psutil.pid_exists(pg_pid)
        again = subprocess.run(["make", "stop"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert again.returncode == 0 and "nothing was running" in again.stdout
    finally:
        if manager.poll() is None:
            os.killpg(manager.pid, 9)
        if psutil.pid_exists(pg_pid):
            os.kill(pg_pid, 9)
