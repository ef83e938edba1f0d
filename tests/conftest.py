import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.db import connection

from accounts.models import User
from secondbrain.stack import web_command
from tests.factories import ApiClient, make_user
from tests.processes import free_port, test_database_url
from tests.scripted_model import scripted_model  # noqa: F401 — the chat model stand-in, a fixture for every test


@pytest.fixture(autouse=True)
def media_root(settings: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Uploaded files go to a fresh folder per test, where tests can see what was (not) stored."""
    root = tmp_path_factory.mktemp("media")
    settings.MEDIA_ROOT = root
    return root


@pytest.fixture(autouse=True)
def signup_open(settings: Any) -> None:
    """Sign-up is closed by default outside `make run`; the tests that sign up run as under it."""
    settings.SIGNUP_OPEN = True


@pytest.fixture(autouse=True)
def fresh_rate_counts(settings: Any) -> None:
    """Rate counts of this test alone: the counters live in the real Redis, under a prefix of its own."""
    settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}}


@pytest.fixture
def user(db: None) -> User:
    return make_user("alice")


@pytest.fixture
def other_user(db: None) -> User:
    return make_user("mallory")


@pytest.fixture
def api(user: User) -> ApiClient:
    return ApiClient.for_user(user)


@pytest.fixture
def other_api(other_user: User) -> ApiClient:
    return ApiClient.for_user(other_user)


@pytest.fixture
def celery_worker(transactional_db: None) -> Iterator[None]:
    """A real Celery worker consuming the real Redis broker, in a thread of this process."""
    from secondbrain.celery import app

    with start_worker(app, pool="solo", perform_ping_check=False, queues=["ingest", "transcribe"], loglevel="WARNING"):
        yield
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def web_server(celery_worker: None, tmp_path: Path) -> Iterator[str]:
    """The web server `make run` starts (secondbrain/server.py) serving the real ASGI app (HTTP and
    websockets) on the test database."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "SIGNUP_OPEN": "true",  # as in `make run`; the browser tests sign up
    }
    log = (tmp_path / "daphne.log").open("w")
    server = subprocess.Popen(
        web_command("127.0.0.1", port),
        cwd=settings.BASE_DIR,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((tmp_path / "daphne.log").read_text()) from None
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}"
    # Killed, not stopped: daphne's graceful shutdown waits ~3 s for open connections, and nothing
    # of the test's outcome depends on it (the worker fixture then ends its database sessions).
    server.kill()
    server.wait(timeout=20)
    log.close()
