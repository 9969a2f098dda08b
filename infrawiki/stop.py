"""`make stop`: end what `make run` started — the process manager with every process of the
Procfile, then the embedded PostgreSQL — and say what was stopped. Data stays under the data dir.

`make run` records the process manager's pid in DATA_DIR/run.pid; PostgreSQL records its own in
pgdata/postmaster.pid. Both are signalled the way they document: SIGTERM makes honcho stop its
processes and exit, SIGINT is PostgreSQL's "fast" shutdown (sessions end, data is flushed).
"""
from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

RUN_PID = "run.pid"


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_and_wait(pid: int, sig: signal.Signals, timeout_s: float) -> bool:
    """Send `sig` to `pid`; True once it has exited (SIGKILL after `timeout_s`)."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return not _alive(pid)


def stop_all(data_dir: Path) -> list[str]:
    """Stop the `make run` processes and the embedded database under `data_dir`; what was stopped."""
    stopped = []
    run_pid = _read_pid(data_dir / RUN_PID)
    if run_pid is not None and _alive(run_pid):
        _signal_and_wait(run_pid, signal.SIGTERM, timeout_s=30)  # honcho stops each process, then itself
        stopped.append(f"the web server, workers and LLM server (process manager pid {run_pid})")
    (data_dir / RUN_PID).unlink(missing_ok=True)
    pg_pid = _read_pid(data_dir / "pgdata" / "postmaster.pid")
    if pg_pid is not None and _alive(pg_pid):
        _signal_and_wait(pg_pid, signal.SIGINT, timeout_s=60)
        stopped.append(f"the embedded PostgreSQL (pid {pg_pid})")
    return stopped


def main() -> None:
    data_dir = Path(os.environ.get("INFRAWIKI_DATA_DIR") or Path(__file__).resolve().parent.parent / ".infrawiki")
    stopped = stop_all(data_dir.resolve())
    print("stopped " + " and ".join(stopped) if stopped else f"nothing was running from {data_dir}")
    sys.exit(0)


if __name__ == "__main__":
    main()
