import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import SyncToAsync
from celery.contrib.testing.worker import start_worker
from celery.worker import state as worker_state
from django.db import close_old_connections, connection

from accounts.models import User
from secondbrain import rls
from tests.factories import ApiClient, make_user
from tests.processes import app_env, web_process
from tests.scripted_model import scripted_model  # noqa: F401 — the chat model stand-in, a fixture for every test


@pytest.fixture(autouse=True)
def media_root(settings: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Uploaded files go to a fresh folder per test, where tests can see what was (not) stored."""
    root = tmp_path_factory.mktemp("media")
    settings.MEDIA_ROOT = root
    return root


@pytest.fixture(autouse=True)
def no_scope_left_behind() -> Iterator[None]:
    """The test's own database work (factories, assertions, fixtures' teardown) is the login role's:
    a unit of work that leaves its row-level security scope behind fails the test that ran it."""
    yield
    assert rls.current() is rls.PRIVILEGED, f"a row-level security scope was left set: {rls.current()!r}"


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

    # A job still running when the test ends (a slow transcription on a loaded machine) is waited
    # for. Should it outlast that, celery raises and leaves its "terminate" flag set, and every later
    # test's worker would stop as it starts while the fixture waits for it for ever: a hang of the
    # whole run instead of one failure. The flag is cleared whatever happens.
    try:
        with start_worker(
            app, pool="solo", perform_ping_check=False, queues=["ingest", "transcribe"], loglevel="WARNING",
            shutdown_timeout=180,
        ):  # fmt: skip
            yield
    finally:
        worker_state.should_terminate = None
    # Channels' test communicator makes its own closing a no-op, so the connection its consumers
    # used on the thread they all share stays open; ended below, it would fail the next test's first
    # query there (a session lookup). Answers' steps close theirs (chat.services._step).
    SyncToAsync.single_thread_executor.submit(close_old_connections).result()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def web_server(celery_worker: None, tmp_path: Path) -> Iterator[str]:
    """The web server `make run` starts (secondbrain/server.py) serving the real ASGI app (HTTP and
    websockets) on the test database."""
    server, url = web_process(app_env(), tmp_path / "daphne.log")
    yield url
    # Killed, not stopped: daphne's graceful shutdown waits ~3 s for open connections, and nothing
    # of the test's outcome depends on it (the worker fixture then ends its database sessions).
    server.kill()
    server.wait(timeout=20)
