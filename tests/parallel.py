"""The suite runs on several processes (pytest-xdist): each keeps its own Redis database.

pytest-django already gives each worker a test database of its own (`test_…_gw0`, `…_gw1`). The
Redis server is one (the stack's), and on it the Celery queues, the channel layer's groups and the
cache would be shared: one worker's Celery worker would take another's jobs and run them on the
wrong database. So worker `gwN` uses Redis database N + 1 — set before Django reads its settings
(this plugin is loaded with `-p`, ahead of pytest-django), so that the settings, and every app
process a test starts (they inherit the environment), read the same URL.
"""

import os
from urllib.parse import urlsplit, urlunsplit

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    url = os.environ.get("REDIS_URL")
    if worker is None or url is None:
        return
    parts = urlsplit(url)
    os.environ["REDIS_URL"] = urlunsplit(parts._replace(path=f"/{int(worker.removeprefix('gw')) + 1}"))
