"""The compose file's reverse proxy, run: Caddy with proxy/Caddyfile in front of daphne with the
production settings — https and its headers, body limits, websockets.

Docker cannot run here, so Debian's caddy (`make test` installs it) runs the repository's Caddyfile
as it is, except for its upstream (this test's daphne instead of `web:8000`) and a loopback port
with Caddy's own certificate authority instead of a public name.
"""

import os
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.core.management.utils import get_random_secret_key
from websockets.sync.client import connect
from websockets.typing import Origin

from accounts.services import token_create
from tests.factories import PASSWORD, make_user
from tests.processes import free_port

CADDYFILE = Path(settings.BASE_DIR) / "proxy" / "Caddyfile"
UPLOAD_MB = 2
# No admin endpoint, no http listener, no change to the machine's trust store: a test's proxy.
GLOBAL_OPTIONS = "{{\n\tadmin off\n\tskip_install_trust\n\tauto_https disable_redirects\n\tstorage file_system {}\n}}\n"


@pytest.fixture
def production_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings compose gives the web service, for the `web_server` started after this."""
    for name, value in {
        "DEBUG": "false",
        "SECRET_KEY": get_random_secret_key(),
        "ALLOWED_HOSTS": "localhost",
        "TRUST_X_FORWARDED_PROTO": "true",
        "MAX_UPLOAD_MB": str(UPLOAD_MB),
    }.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def proxy(production_settings: None, web_server: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """Caddy on a loopback port in front of daphne: its URL, and the certificate to trust."""
    caddy = shutil.which("caddy")
    assert caddy, "Debian's caddy is needed: `make test` installs it (apt-get install caddy)"
    port = free_port()
    storage = tmp_path / "caddy"
    config = tmp_path / "Caddyfile"
    upstream = web_server.removeprefix("http://")
    config.write_text(GLOBAL_OPTIONS.format(storage) + CADDYFILE.read_text().replace("web:8000", upstream))
    env = {**os.environ, "DOMAIN": f"localhost:{port}", "MAX_UPLOAD_MB": str(UPLOAD_MB), "HOME": str(tmp_path)}
    log = (tmp_path / "caddy.log").open("w")
    server = subprocess.Popen(
        [caddy, "run", "--config", str(config), "--adapter", "caddyfile"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    root = storage / "pki" / "authorities" / "local" / "root.crt"
    deadline = time.monotonic() + 30
    while not _answers(port, root):
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError((tmp_path / "caddy.log").read_text())
        time.sleep(0.2)
    yield f"https://localhost:{port}", str(root)
    server.terminate()
    server.wait(timeout=20)
    log.close()


def _answers(port: int, root: Path) -> bool:
    """Caddy serves https with a certificate of its authority (made, with the site's, as it starts)."""
    try:
        context = ssl.create_default_context(cafile=str(root))
        with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
            context.wrap_socket(connection, server_hostname="localhost").close()
    except (OSError, ssl.SSLError):
        return False
    return True


def test_pages_come_over_https_with_secure_cookies_hsts_and_the_policy(proxy: tuple[str, str]) -> None:
    url, root = proxy
    # A client's own X-Forwarded-Proto is replaced by the proxy's: no way to pass for plain http.
    page = requests.get(f"{url}/accounts/login/", headers={"X-Forwarded-Proto": "http"}, verify=root, timeout=30)
    assert page.status_code == 200 and not page.history  # not redirected: the app knows it is https
    assert page.headers["Strict-Transport-Security"].startswith("max-age=31536000")
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert "secure" in page.headers["Set-Cookie"].lower()


def test_bodies_over_the_limit_are_refused_by_the_proxy(proxy: tuple[str, str], transactional_db: None) -> None:
    url, root = proxy
    token = token_create(user=make_user("writer"))
    upload_limit = UPLOAD_MB * 1024 * 1024

    def post(path: str, size: int) -> requests.Response:
        body = b'{"title": "' + b"x" * size + b'"}'  # no text: the app reads it all, then says what is missing
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
        return requests.post(f"{url}{path}", data=body, headers=headers, verify=root, timeout=60)

    # Within the upload limit, and past 1 MiB, a note reaches the app, which reads it.
    assert post("/api/notes", upload_limit).status_code == 422
    # Past it, the proxy answers at once, in the app's words; anywhere else past 1 MiB, though the
    # app would read up to the upload limit.
    too_large = [
        ("/api/notes", upload_limit + 100_000, "file_too_large"),
        ("/api/ask", 1024 * 1024, "request_too_large"),
    ]
    for path, size, code in too_large:
        refused = post(path, size)
        assert refused.status_code == 413 and refused.headers["Server"] == "Caddy", path  # not "Caddy, daphne"
        assert refused.json()["error"]["code"] == code
    # A body that does not declare its length is cut at the same size.
    chunks = (b"x" * 65536 for _ in range(17))  # 1 MiB and a bit, chunked
    chunked = requests.post(
        f"{url}/api/ask", data=chunks, headers={"Content-Type": "application/json"}, verify=root, timeout=60
    )
    assert chunked.status_code == 413


def test_websockets_pass_through_the_proxy(proxy: tuple[str, str], transactional_db: None) -> None:
    url, root = proxy
    make_user("proxied")
    # `verify` on each call: requests prefers REQUESTS_CA_BUNDLE, where it is set, to a session's own.
    session = requests.Session()
    session.get(f"{url}/accounts/login/", verify=root, timeout=30)
    signed_in = session.post(
        f"{url}/accounts/login/",
        data={"username": "proxied", "password": PASSWORD, "csrfmiddlewaretoken": session.cookies["csrftoken"]},
        headers={"Origin": url, "Referer": f"{url}/accounts/login/"},
        verify=root,
        timeout=30,
    )
    assert signed_in.status_code == 200 and signed_in.url == f"{url}/"
    cookie = "; ".join(f"{name}={value}" for name, value in session.cookies.items())
    context = ssl.create_default_context(cafile=root)
    websocket = url.replace("https://", "wss://") + "/ws/jobs/"
    # A handshake past `open_timeout` leaves websockets 17.4 joining its reader thread for ever (seen once,
    # the machine loaded by a benchmark beside the suite): time enough that a slow one is no hang.
    with connect(
        websocket, ssl=context, origin=Origin(url), additional_headers={"Cookie": cookie}, open_timeout=60
    ) as socket_:
        socket_.ping().wait(timeout=10)
