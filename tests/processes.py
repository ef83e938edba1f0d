"""Helpers for tests that run parts of the app as separate processes against the test database."""

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.db import connection


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_database_url() -> str:
    db = connection.settings_dict
    credentials = quote(db["USER"]) + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
    if str(db["HOST"]).startswith("/"):
        return f"postgresql://{credentials}@/{db['NAME']}?host={db['HOST']}"
    return f"postgresql://{credentials}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


def start_worker_process(log: Path, queues: str = "ingest", pool: str = "solo") -> subprocess.Popen[bytes]:
    """A real `celery worker` process (solo pool: the job runs in the process a test may kill; the
    prefork pool, with one child, enforces time limits)."""
    env = {**os.environ, "DATABASE_URL": test_database_url(), "MEDIA_ROOT": str(settings.MEDIA_ROOT)}
    command = [sys.executable, "-m", "celery", "-A", "secondbrain", "worker", "--pool", pool, "--concurrency", "1",
               "--queues", queues, "--loglevel", "INFO", "--without-mingle", "--without-gossip",
               "--without-heartbeat"]  # fmt: skip
    with log.open("ab") as handle:
        return subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, stdout=handle, stderr=subprocess.STDOUT)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a worker as its supervisor would (a prefork worker's children go with it)."""
    process.terminate()
    process.wait(timeout=60)


def kill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
