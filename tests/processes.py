"""Helpers for tests that run parts of the app as separate processes against the test database."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.db import connection

from secondbrain import stack


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


def app_env(**overrides: str) -> dict[str, str]:
    """The environment of an app process on the test database and media folder."""
    return {**os.environ, "DATABASE_URL": test_database_url(), "MEDIA_ROOT": str(settings.MEDIA_ROOT), **overrides}


def start_worker_process(
    log: Path, queues: str = "ingest", pool: str = "solo", env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """A real `celery worker` process (solo pool: the job runs in the process a test may kill; the
    prefork pool, with one child, enforces time limits)."""
    command = [sys.executable, "-m", "celery", "-A", "secondbrain", "worker", "--pool", pool, "--concurrency", "1",
               "--queues", queues, "--loglevel", "INFO", "--without-mingle", "--without-gossip",
               "--without-heartbeat"]  # fmt: skip
    with log.open("ab") as handle:
        return subprocess.Popen(
            command, cwd=settings.BASE_DIR, env=env or app_env(), stdout=handle, stderr=subprocess.STDOUT
        )


def web_process(env: dict[str, str], log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The web server `make run` starts (secondbrain/server.py), with its socket options and sign-up open
    unless `env` says otherwise; (process, base URL) once it answers."""
    port = free_port()
    with log_path.open("ab") as log:
        server = subprocess.Popen(
            stack.web_command("127.0.0.1", port),
            cwd=settings.BASE_DIR, env={"SIGNUP_OPEN": "true", **env}, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    # /healthz answers whatever the settings (a production env's https redirect and allowed hosts).
    while request(f"{url}/healthz")[0] != 200:
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise RuntimeError(log_path.read_text())
        time.sleep(0.2)
    return server, url


def redis_process(port: int, log_path: Path) -> subprocess.Popen[bytes]:
    """A Redis server of the test's own (nothing saved to disk), once it answers."""
    with log_path.open("ab") as log:
        server = subprocess.Popen(
            [str(stack.redis_executable()), "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
            cwd=log_path.parent, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + 20
    while not stack.redis_answers(port):
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise RuntimeError(log_path.read_text())
        time.sleep(0.1)
    return server


def request(url: str, *, token: str | None = None, body: Any = None, method: str | None = None) -> tuple[int, Any]:
    """(status, parsed JSON or text) of one HTTP request; a refused or reset connection is status 0."""
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
    data = json.dumps(body).encode() if body is not None else None
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data, headers, method=method), timeout=120) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    except OSError as error:
        return 0, repr(error)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode(errors="replace")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a worker as its supervisor would (a prefork worker's children go with it)."""
    process.terminate()
    process.wait(timeout=60)


def kill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
