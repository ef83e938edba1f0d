"""The MCP server over streamable HTTP, mounted beside Django at MCP_PATH (secondbrain/asgi.py).

Each request is checked before the SDK sees it: its Host must be one of ALLOWED_HOSTS and a browser's
Origin this site's (the protocol asks servers to refuse DNS rebinding), and its bearer token an
active user's API token (401 otherwise, in the API's error shape; a browser session is not enough,
so no other site can make a signed-in browser call tools). The SDK then answers it statelessly, in
JSON: no session lives in this process, so several web processes behind a proxy serve it as they
serve the rest. Bodies are held to MAX_REQUEST_BYTES like every request that is not an upload — by the
web server before it reads them (secondbrain/server.py), by `BodySizeLimit`, and by the SDK's own
limit, set to the same — so a note added through MCP is at most that large. Responses carry the
site's Content-Security-Policy and the headers Django's pages send.
"""

import asyncio
import json
import time
from typing import Any, cast
from urllib.parse import urlsplit

from asgiref.sync import ThreadSensitiveContext
from channels.db import database_sync_to_async
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from accounts.models import AuditEntry
from accounts.services import Via, token_find
from mcp_server.tools import Caller, caller
from secondbrain import rls, timing
from secondbrain.limits import Message, Receive, Scope, Send
from secondbrain.middleware import csp_header

MCP_PATH = "/mcp"


class McpEndpoint:
    """The ASGI app at MCP_PATH: the checks above, then one stateless exchange with `server`."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.headers = [
            (b"content-security-policy", csp_header(settings.SECURE_CSP).encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin"),
            (b"x-frame-options", b"DENY"),
            (b"cache-control", b"no-store"),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The request, then its log line and sample, as Django's requests get (secondbrain/timing.py)."""
        started = time.perf_counter()
        answered = {"status": 500, "user": None}

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                answered["status"] = message["status"]
            await send(message)

        try:
            await self._answer(scope, receive, self._with_headers(sending), answered)
        finally:
            seconds = time.perf_counter() - started
            # Off the event loop: a sample is a round trip to Redis.
            await asyncio.to_thread(
                timing.record,
                route=MCP_PATH,
                method=scope.get("method", ""),
                status=int(answered["status"] or 500),
                seconds=seconds,
                user=answered["user"],
            )

    async def _answer(self, scope: Scope, receive: Receive, send: Send, answered: dict[str, Any]) -> None:
        host = _header(scope, b"host")
        if not validate_host(split_domain_port(host)[0], settings.ALLOWED_HOSTS):
            await _error(send, 400, "bad_host", "This host name is not served here.")
            return
        origin = _header(scope, b"origin")
        if origin and urlsplit(origin).netloc != host:
            await _error(send, 403, "forbidden_origin", "Requests from other sites are refused.")
            return
        # Django's ORM runs on threads; one of this request's own rather than the process's shared one.
        async with ThreadSensitiveContext():
            raw = _bearer(scope)
            token = await database_sync_to_async(token_find)(raw=raw) if raw else None
            if token is None:
                await _error(send, 401, "unauthorized", "Send a valid API token: Authorization: Bearer <token>.")
                return
            answered["user"] = token.user.pk
            reset = caller.set(Caller(user=token.user, via=Via(AuditEntry.Channel.MCP, token)))
            # The tools' database work, in tasks that inherit this context, sees this person's rows only.
            with rls.owner_scope(token.user.pk):
                try:
                    await self._exchange(scope, receive, send)
                finally:
                    caller.reset(reset)

    async def _exchange(self, scope: Scope, receive: Receive, send: Send) -> None:
        # A manager per request: stateless, it keeps nothing between requests, and its task group
        # lives only as long as the request (daphne runs no ASGI lifespan to start a shared one in).
        manager = StreamableHTTPSessionManager(
            app=self.server._lowlevel_server,  # as the SDK's own client does: MCPServer has no public handle
            json_response=True,
            stateless=True,
            max_request_body_size=settings.MAX_REQUEST_BYTES,
        )
        async with manager.run():
            # Starlette's types ask for mutable messages; ours (secondbrain.limits) are read-only views.
            await manager.handle_request(scope, cast(Any, receive), send)

    def _with_headers(self, send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in self.headers if name not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        return sending


def _header(scope: Scope, name: bytes) -> str:
    return next((value.decode("latin-1") for key, value in scope.get("headers", []) if key == name), "")


def _bearer(scope: Scope) -> str:
    scheme, _, token = _header(scope, b"authorization").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


async def _error(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers: list[Any] = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="second-brain"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
