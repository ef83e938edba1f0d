"""The web server `make run` starts (secondbrain/server.py), spoken to over raw sockets: a body over
its limit is refused from the headers, before the server reads it."""

import json
import os
import re
import select
import socket
import subprocess
import sys
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.test import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as websocket_connect

from accounts.models import User
from secondbrain import limits
from secondbrain.stack import Stack, run_defaults
from tests.factories import PASSWORD, ApiClient

MiB = 2**20
SENT_AT_MOST = 256 * 1024  # what the client sends of its body before it looks for an answer


def open_socket(url: str) -> socket.socket:
    parts = urlsplit(url)
    conn = socket.create_connection((parts.hostname, parts.port), timeout=10)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    return conn


def head(path: str, headers: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer_while_sending(conn: socket.socket, body_part: bytes, *, most: int) -> tuple[bytes, int]:
    """Send `body_part` again and again until the server answers (or `most` bytes went out), then read
    the answer to its end: (the answer, the body bytes sent before it came)."""
    sent = 0
    while sent < most and not select.select([conn], [], [], 0.02)[0]:
        conn.sendall(body_part)
        sent += len(body_part)
    return read_to_end(conn), sent


def read_to_end(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes its side."""
    conn.settimeout(15)
    answer = b""
    while chunk := conn.recv(65536):
        answer += chunk
    return answer


def status_and_json(answer: bytes) -> tuple[int, dict[str, Any]]:
    header_block, _, body = answer.partition(b"\r\n\r\n")
    status = int(header_block.split(b" ", 2)[1])
    return status, json.loads(body)


@pytest.mark.parametrize("path", ["/api/auth/token", "/accounts/login/", "/api/ask"])
def test_an_anonymous_body_over_the_small_limit_is_refused_before_it_is_read(web_server: str, path: str) -> None:
    with open_socket(web_server) as conn:
        announced = 20 * MiB
        conn.sendall(head(path, {"Content-Type": "application/json", "Content-Length": str(announced)}))
        answer, sent = answer_while_sending(conn, b"x" * 16384, most=announced)
    status, body = status_and_json(answer)
    assert status == 413 and body["error"]["code"] == "request_too_large", answer
    assert b"Connection: close" in answer
    assert sent <= SENT_AT_MOST, f"the answer came after {sent} bytes of the body"


def test_a_signed_in_upload_over_the_upload_limit_is_refused_before_it_is_read(web_server: str, user: User) -> None:
    token = ApiClient.for_user(user).token
    with open_socket(web_server) as conn:
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "multipart/form-data; boundary=xyz",
            "Content-Length": str(settings.MAX_UPLOAD_BYTES + 10 * MiB),
            "Expect": "100-continue",  # as curl sends it: the answer must be the refusal, not "go on"
        }
        conn.sendall(head("/api/uploads", headers))
        answer = read_to_end(conn)  # not a byte of the body sent
    status, body = status_and_json(answer)
    assert status == 413 and body["error"]["code"] == "file_too_large", answer
    assert b"100 Continue" not in answer


@pytest.mark.parametrize("credentials", [{}, {"Cookie": "sessionid=made-up"}, {"Authorization": "Bearer sb_made-up"}])
def test_an_upload_larger_than_other_requests_is_read_only_for_a_signed_in_client(
    web_server: str, credentials: dict[str, str]
) -> None:
    with open_socket(web_server) as conn:
        headers = {"Content-Type": "multipart/form-data; boundary=xyz", "Content-Length": str(50 * MiB), **credentials}
        conn.sendall(head("/api/uploads", headers))
        answer, sent = answer_while_sending(conn, b"w" * 16384, most=50 * MiB)
    status, body = status_and_json(answer)
    assert status == 401 and body["error"]["code"] == "unauthorized", answer
    assert sent <= SENT_AT_MOST, f"the answer came after {sent} bytes of the body"


def test_a_signed_in_upload_larger_than_other_requests_is_read_by_the_app(web_server: str, user: User) -> None:
    token = ApiClient.for_user(user).token
    # Bytes of no kind the app takes: it reads them all and explains, and no job keeps the worker busy.
    body = (
        b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="blob.bin"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n" + b"\x00\x01" + os.urandom(2 * MiB) + b"\r\n--xyz--\r\n"
    )
    assert len(body) > settings.MAX_REQUEST_BYTES
    with open_socket(web_server) as conn:
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "multipart/form-data; boundary=xyz",
            "Content-Length": str(len(body)),
            "Connection": "close",
        }
        conn.sendall(head("/api/uploads", headers) + body)
        answer = read_to_end(conn)
    status, payload = status_and_json(answer)
    assert status == 415 and payload["error"]["code"] == "unsupported_type", answer  # the app's answer
    client = Client()
    client.force_login(user)
    session = {"Cookie": f"sessionid={client.cookies['sessionid'].value}"}
    with open_socket(web_server) as conn:
        headers = {"Content-Type": "multipart/form-data; boundary=xyz", "Content-Length": str(len(body)), **session}
        conn.sendall(head("/uploads/", {**headers, "Connection": "close"}) + body)
        answer = read_to_end(conn)
    assert b" 401 " not in answer.split(b"\r\n", 1)[0]  # read, and answered by the app (its CSRF check)


def test_a_chunked_body_is_cut_off_once_it_passes_the_limit(web_server: str, user: User) -> None:
    token = ApiClient.for_user(user).token
    with open_socket(web_server) as conn:
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Transfer-Encoding": "chunked",
        }
        conn.sendall(head("/api/ask", headers))
        chunk = b"4000\r\n" + b"z" * 0x4000 + b"\r\n"
        answer, sent = answer_while_sending(conn, chunk, most=64 * MiB)
    status, body = status_and_json(answer)
    assert status == 413 and body["error"]["code"] == "request_too_large", answer
    assert settings.MAX_REQUEST_BYTES < sent <= settings.MAX_REQUEST_BYTES + 4 * MiB, f"cut off after {sent} bytes"


def test_bodies_within_the_limit_and_websockets_still_work(web_server: str, user: User) -> None:
    body = json.dumps({"username": "alice", "password": PASSWORD}).encode()
    with open_socket(web_server) as conn:
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), "Connection": "close"}
        conn.sendall(head("/api/auth/token", headers) + body)
        answer = read_to_end(conn)
    status, payload = status_and_json(answer)
    assert status == 200 and str(payload["token"]).startswith("sb_"), answer
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"].value
    ws_url = web_server.replace("http://", "ws://") + "/ws/chat/"
    headers = {"Cookie": f"sessionid={cookie}", "Origin": web_server}

    def unknown_action(padding: int) -> str:  # answered at once with an error event
        return json.dumps({"action": "none", "padding": "x" * padding})

    with websocket_connect(ws_url, additional_headers=headers, max_size=None) as ws:
        ws.send(unknown_action(100_000))
        assert "Unknown action" in str(ws.recv(timeout=10))
        ws.send(unknown_action(2**20))  # over daphne's own cap on a websocket message
        with pytest.raises(ConnectionClosed):  # the connection fails (1009, message too big)
            ws.recv(timeout=10)


def test_sign_up_is_open_under_make_run_and_closed_by_default_elsewhere() -> None:
    stack = Stack()
    stack.env.pop("SIGNUP_OPEN", None)
    run_defaults(stack)
    assert stack.exported["SIGNUP_OPEN"] == "true"
    closed = Stack()
    closed.env["SIGNUP_OPEN"] = "false"
    run_defaults(closed)
    assert closed.env["SIGNUP_OPEN"] == "false" and "SIGNUP_OPEN" not in closed.exported
    env = {key: value for key, value in Stack().env.items() if key != "SIGNUP_OPEN"}
    script = "import django; django.setup(); from django.conf import settings; print(settings.SIGNUP_OPEN)"
    default = subprocess.run(
        [sys.executable, "-c", script],
        cwd=settings.BASE_DIR,
        env={**env, "DJANGO_SETTINGS_MODULE": "secondbrain.settings"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert default.stdout.strip() == "False"


def test_rate_counts_are_shared_between_processes(web_server: str, settings: Any) -> None:
    """Failed log-ins counted by this process pause the account on the web server too: the counts
    live in Redis, under the prefix every process of the app shares."""
    settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": "secondbrain"}}
    limit, period = settings.RATE_LIMITS["login_account"]
    for _ in range(limit):
        limits.rate_spend("login_account", "shared-counter")
    body = json.dumps({"username": "Shared-Counter", "password": PASSWORD}).encode()
    with open_socket(web_server) as conn:
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), "Connection": "close"}
        conn.sendall(head("/api/auth/token", headers) + body)
        answer = read_to_end(conn)
    status, payload = status_and_json(answer)
    assert status == 429 and payload["error"]["code"] == "rate_limited", answer
    retry_after = re.search(rb"\r\nRetry-After: (\d+)\r\n", answer, re.IGNORECASE)
    assert retry_after and 1 <= int(retry_after.group(1)) <= period
