import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from tests.processes import free_port, test_database_url

CHROMIUM = "/usr/bin/chromium"
# Without these, Chromium keeps trying to reach Google's services through the closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def web_server(celery_worker: None, tmp_path: Path) -> Iterator[str]:
    """daphne serving the real ASGI app (HTTP and websockets) on the test database."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": test_database_url(), "MEDIA_ROOT": str(settings.MEDIA_ROOT), "DB_CONN_MAX_AGE": "0"}
    log = (tmp_path / "daphne.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "secondbrain.asgi:application"],
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
    server.terminate()
    server.wait(timeout=20)
    log.close()


@pytest.fixture
def browser_page(web_server: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the test itself touches no ORM.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        yield page
        browser.close()
