import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _test_database_url() -> str:
    db = connection.settings_dict
    credentials = quote(db["USER"]) + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
    if str(db["HOST"]).startswith("/"):
        return f"postgresql://{credentials}@/{db['NAME']}?host={db['HOST']}"
    return f"postgresql://{credentials}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def web_server(celery_worker: None, tmp_path: Path) -> Iterator[str]:
    """daphne serving the real ASGI app (HTTP and websockets) on the test database."""
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": _test_database_url(), "DB_CONN_MAX_AGE": "0"}
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
