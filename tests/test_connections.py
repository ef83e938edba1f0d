"""Database connections under ordinary and heavy use, and through an outage, against daphne as `make run` starts it.

Thousands of requests one after another and hundreds at once (HTTP API and websocket asks) must not
make the app open connection after connection until PostgreSQL refuses new clients: each process
keeps at most its pool's worth. When the database goes away, requests get a clean 503 in the
API's error shape; when it is back, the same running app serves again.
"""

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from websockets.sync.client import connect as websocket_connect

from secondbrain import stack
from tests.factories import PASSWORD, ApiClient, make_user
from tests.processes import request, web_process
from tests.processes import test_database_url as app_database_url  # not a test of this module
from tests.scripted_model import ScriptedModel
from tests.test_pipeline import GARDEN_NOTE

POOL_SIZE = 6  # the web process's DB_POOL_MAX_SIZE in these tests: small, so that a leak shows at once
WEB_APP_NAME = "secondbrain-web-under-test"
_EVENT = re.compile(r'data-event="(\w+)"')


class ConnectionWatch:
    """Samples pg_stat_activity for the app's database while the load runs, from a connection of its own."""

    def __init__(self) -> None:
        self.database = connection.settings_dict["NAME"]
        self.peak_web = self.peak_total = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        db = connection.settings_dict
        # To the maintenance database, so that the watch itself is not among what it counts.
        self._params = {"dbname": "postgres", "host": db["HOST"], "port": db["PORT"] or None, "user": db["USER"],
                        "password": db["PASSWORD"] or None}  # fmt: skip

    def counts(self) -> tuple[int, int, int]:
        """(the web process's connections, all of the database's, the web's idle in a transaction)."""
        with psycopg.connect(autocommit=True, **self._params) as conn:
            row = conn.execute(
                "SELECT count(*) FILTER (WHERE application_name = %s), count(*),"
                " count(*) FILTER (WHERE application_name = %s AND state LIKE 'idle in transaction%%')"
                " FROM pg_stat_activity WHERE datname = %s AND backend_type = 'client backend'",
                [WEB_APP_NAME, WEB_APP_NAME, self.database],
            ).fetchone()
        assert row is not None
        return row[0], row[1], row[2]

    def _run(self) -> None:
        while not self._stop.is_set():
            web, total, _ = self.counts()
            self.peak_web, self.peak_total = max(self.peak_web, web), max(self.peak_total, total)
            self._stop.wait(0.1)

    def __enter__(self) -> "ConnectionWatch":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


@pytest.fixture
def loaded_app(
    celery_worker: None,
    scripted_model: ScriptedModel,
    tmp_path: Path,
) -> Iterator[str]:
    """daphne on the test database with a small pool, its connections named so they can be counted."""
    env = {
        **os.environ,
        "DATABASE_URL": app_database_url(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "DB_POOL_MAX_SIZE": str(POOL_SIZE),
        # Nothing let in should wait for a connection at all; a short wait makes one that does fail
        # here, as it fails on a slower machine after the default 10 s.
        "DB_POOL_TIMEOUT": "2",
        "PGAPPNAME": WEB_APP_NAME,  # libpq's default application_name
        # One person's hundreds of notes and asks at once: connections are measured here, not rates.
        "RATE_LIMIT_ASK": "off",
        "RATE_LIMIT_UPLOAD": "off",
    }
    server, url = web_process(env, tmp_path / "daphne.log")
    yield url
    server.kill()
    server.wait(timeout=20)


def websocket_ask(url: str, cookie: str, question: str) -> list[str]:
    """Ask on the chat socket as the page does; the events' names up to `done` or an error."""
    ws_url = url.replace("http://", "ws://") + "/ws/chat/"
    headers = {"Cookie": f"sessionid={cookie}", "Origin": url}
    events: list[str] = []
    with websocket_connect(ws_url, additional_headers=headers, open_timeout=120, close_timeout=5) as socket:
        socket.send(json.dumps({"question": question, "conversation_id": ""}))
        while not events or events[-1] not in {"done", "error"}:
            message = str(socket.recv(timeout=120))
            events.append(match.group(1) if (match := _EVENT.search(message)) else "other")
            if events[-1] == "error":
                events.append(re.sub(r"<[^>]+>|\s+", " ", message).strip())  # what the person reads
                break
    return events


def test_a_thousand_requests_one_after_another_keep_connections_bounded(loaded_app: str) -> None:
    url = loaded_app
    status, body = request(f"{url}/api/auth/register", body={"username": "steady", "password": PASSWORD})
    assert status == 201, body
    token = body["token"]
    note = request(f"{url}/api/notes", token=token, body={"text": GARDEN_NOTE})[1]
    assert ApiClient(token).wait_for_job(note["job_id"])["status"] == "done"
    steps: list[Callable[[int], tuple[int, Any]]] = [
        lambda i: request(f"{url}/api/search?q=when+do+the+tomatoes+go+in", token=token),
        lambda i: request(f"{url}/api/jobs/{note['job_id']}", token=token),
        lambda i: request(f"{url}/api/sources", token=token),
        lambda i: request(f"{url}/api/sources/{note['source_id']}", token=token),
        lambda i: request(f"{url}/api/notes", token=token, body={"text": f"Errand {i}: call the plumber."}),
    ]  # fmt: skip
    statuses: Counter[int] = Counter()
    with ConnectionWatch() as watch:
        # A connection leaked per request (or per thread) would pass the pool of 6 within the first few.
        for i in range(1000):
            status, body = steps[i % len(steps)](i)
            statuses[status] += 1
            assert status < 500 and status != 0, (i, status, body)
    assert statuses == {200: 800, 202: 200}, statuses
    assert 0 < watch.peak_web <= POOL_SIZE, watch.peak_web
    web, total, stuck = watch.counts()
    assert web <= POOL_SIZE and stuck == 0, (web, stuck)


def test_hundreds_of_requests_at_once_http_and_websocket_asks_keep_connections_bounded(loaded_app: str) -> None:
    url = loaded_app
    asker = make_user("crowd")
    token = ApiClient.for_user(asker).token
    assert token is not None
    note = request(f"{url}/api/notes", token=token, body={"text": GARDEN_NOTE})[1]
    assert ApiClient(token).wait_for_job(note["job_id"])["status"] == "done"
    client = Client()
    client.force_login(asker)
    cookie = client.cookies["sessionid"].value

    def one(i: int) -> tuple[str, Any]:
        kind = ("ask", "search", "sources", "note", "job", "chunk-search")[i % 6]
        if kind == "ask":
            return kind, websocket_ask(url, cookie, "When do the tomatoes go into the raised bed?")
        if kind == "note":
            return kind, request(f"{url}/api/notes", token=token, body={"text": f"Idea {i}: a shed for the bikes."})
        if kind == "job":
            return kind, request(f"{url}/api/jobs/{note['job_id']}", token=token)
        if kind == "sources":
            return kind, request(f"{url}/api/sources", token=token)
        return kind, request(f"{url}/api/search?q=rain+barrel+{i}", token=token)

    with ConnectionWatch() as watch, ThreadPoolExecutor(600) as pool:
        results = list(pool.map(one, range(600)))
    asks = [events for kind, events in results if kind == "ask"]
    assert len(asks) == 100
    assert all(events[0] == "start" and events[-1] == "done" for events in asks), [e for e in asks if e[-1] != "done"][
        :3
    ]
    statuses = Counter(result[0] for kind, result in results if kind != "ask")
    assert statuses == {200: 400, 202: 100}, (
        statuses,
        [r for k, r in results if k != "ask" and r[0] not in (200, 202)][:3],
    )
    assert 0 < watch.peak_web <= POOL_SIZE, watch.peak_web
    web, _, stuck = watch.counts()
    assert web <= POOL_SIZE and stuck == 0, (web, stuck)
    # Nothing was left borrowed: the pool still serves a full round of requests at once.
    with ThreadPoolExecutor(POOL_SIZE * 2) as pool:
        again = list(pool.map(lambda _: request(f"{url}/api/sources", token=token)[0], range(POOL_SIZE * 2)))
    assert again == [200] * (POOL_SIZE * 2)


@pytest.fixture
def own_database(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """An embedded PostgreSQL of this test's own (pgdata, database URL), migrated, to stop and start at will."""
    from pgserver import get_server

    # pgserver says at exit, at INFO, that each of its handles let go: after pytest closed the
    # stream its log goes to.
    logging.getLogger("pgserver").setLevel(logging.WARNING)
    # Under var/, not /tmp/pytest-of-root: pgserver runs the server as its own system user, which
    # must be able to reach the data directory.
    (settings.BASE_DIR / "var").mkdir(exist_ok=True)
    pgdata = Path(tempfile.mkdtemp(prefix="outage-", dir=settings.BASE_DIR / "var"))
    server = get_server(pgdata, cleanup_mode="stop")
    try:
        socket_dir = server.get_postmaster_info().socket_dir
        assert socket_dir is not None
        stack.postgres_database_ensure(socket_dir, "outage")
        database_url = stack.postgres_url(socket_dir, "outage")
        env = {**os.environ, "DATABASE_URL": database_url}
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=settings.BASE_DIR, env=env,
                       check=True, capture_output=True)  # fmt: skip
        yield pgdata, database_url
    finally:
        get_server(pgdata, cleanup_mode="stop").cleanup()  # whichever handle the test left: the server stops
        shutil.rmtree(pgdata, ignore_errors=True)


def test_a_database_outage_is_a_clean_503_and_the_app_recovers_without_a_restart(
    own_database: tuple[Path, str], tmp_path: Path
) -> None:
    from pgserver import get_server

    pgdata, database_url = own_database
    env = {**os.environ, "DATABASE_URL": database_url, "MEDIA_ROOT": str(tmp_path / "media"), "DB_POOL_TIMEOUT": "2"}
    server, url = web_process(env, tmp_path / "daphne.log")
    try:
        status, body = request(f"{url}/api/auth/register", body={"username": "patient", "password": PASSWORD})
        assert status == 201, body
        token = body["token"]
        browser = log_in(url, "patient")
        assert request(f"{url}/api/sources", token=token) == (200, [])
        assert open_page(browser, f"{url}/")[0] == 200

        get_server(pgdata, cleanup_mode="stop").cleanup()  # the last handle: the server stops
        for _ in range(2):
            status, body = request(f"{url}/api/sources", token=token)
            assert status == 503, body
            assert body["error"]["code"] == "database_unavailable" and body["error"]["message"], body
        status, body = request(f"{url}/api/notes", token=token, body={"text": "Written while the database was away."})
        assert (status, body["error"]["code"]) == (503, "database_unavailable")
        status, page = open_page(browser, f"{url}/")
        assert status == 503 and "be reached right now" in page and "Traceback" not in page

        get_server(pgdata, cleanup_mode="stop")  # started again on the same data
        assert request(f"{url}/api/sources", token=token) == (200, [])
        status, body = request(f"{url}/api/notes", token=token, body={"text": "Written after the database came back."})
        assert status == 202, body
        assert open_page(browser, f"{url}/")[0] == 200
        assert server.poll() is None  # the same process, never restarted
    finally:
        server.kill()
        server.wait(timeout=20)


def log_in(url: str, username: str) -> urllib.request.OpenerDirector:
    """A browser-like client signed in through the log-in page (session and CSRF cookies)."""
    jar = CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    browser.open(f"{url}/accounts/login/", timeout=30).read()
    csrf = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
    form = urllib.parse.urlencode({"username": username, "password": PASSWORD, "csrfmiddlewaretoken": csrf})
    browser.open(urllib.request.Request(f"{url}/accounts/login/", form.encode(), {"Referer": url}), timeout=30).read()
    assert any(cookie.name == "sessionid" for cookie in jar)
    return browser


def open_page(browser: urllib.request.OpenerDirector, url: str) -> tuple[int, str]:
    try:
        with browser.open(url, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def settings_in(
    env: dict[str, str], shown: str = "settings.DATABASES['default']['OPTIONS'].get('pool')"
) -> subprocess.CompletedProcess[str]:
    """What a new process prints of its settings (by default the database pool's) read from `env`
    (settings are read once, at start)."""
    script = f"from django.conf import settings; print({shown})"
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {script}"],
        cwd=settings.BASE_DIR, env={**os.environ, "DJANGO_SETTINGS_MODULE": "secondbrain.settings", **env},
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_the_pool_is_sized_from_the_environment_and_can_be_turned_off() -> None:
    assert settings_in({}).stdout.strip() == "{'min_size': 2, 'max_size': 10, 'timeout': 10}"
    sized = settings_in({"DB_POOL_MAX_SIZE": "4", "DB_POOL_MIN_SIZE": "1", "DB_POOL_TIMEOUT": "3"})
    assert sized.stdout.strip() == "{'min_size': 1, 'max_size': 4, 'timeout': 3}"
    assert settings_in({"DB_POOL_MAX_SIZE": "0"}).stdout.strip() == "None"  # behind PgBouncer: no pool
    for wrong in ({"DB_POOL_MAX_SIZE": "-1"}, {"DB_POOL_MAX_SIZE": "4", "DB_POOL_MIN_SIZE": "5"}):
        failed = settings_in(wrong)
        assert failed.returncode != 0 and "DB_POOL_MAX_SIZE must be" in failed.stderr, failed.stderr


def test_answers_threads_and_the_requests_let_in_share_the_pool_with_one_left_for_websockets() -> None:
    def sizes(env: dict[str, str]) -> str:
        return settings_in(env, "settings.CHAT_THREADS, settings.WEB_CONCURRENT_REQUESTS").stdout.strip()

    assert sizes({}) == "3 6"  # 3 + 6 + 1 = DB_POOL_MAX_SIZE 10
    assert sizes({"DB_POOL_MAX_SIZE": "4"}) == "2 1"
    assert sizes({"DB_POOL_MAX_SIZE": "20", "CHAT_THREADS": "8"}) == "8 11"
    assert sizes({"DB_POOL_MAX_SIZE": "0"}) == "3 10"  # no pool: nothing to share
    for wrong in ({"CHAT_THREADS": "0"}, {"CHAT_THREADS": "9"}):
        failed = settings_in(wrong)
        assert failed.returncode != 0 and "CHAT_THREADS must be" in failed.stderr, failed.stderr
