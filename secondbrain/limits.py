"""Limits that hold before resources are spent: request bodies by size, requests at once, and
rates of use per person and per client address.

Body sizes: `body_limit` says how large a request to a path may be, the upload limit for the paths
that add files and notes, MAX_REQUEST_BYTES for the rest. Daphne reads a whole body before the app
sees it, so the web server (`secondbrain/server.py`) refuses on it while reading the headers;
`BodySizeLimit` enforces it again in front of Django for any other ASGI server.

Rates: `rate_spend` counts one use of a rule (RATE_LIMITS in the settings: asking, adding sources,
creating API tokens, log-ins) in Redis, through Django's cache, so that every process shares the
count; past the rule's rate it raises `RateLimited`, a 429 with Retry-After. A rate holds over any
stretch of its period (a sliding window: "2 per minute" lets no third use in a minute across the turn
of one), and Retry-After is when the next use is let in. Log-ins are throttled by `LoginThrottle`, an
authentication backend listed before Django's: the page, the admin and `POST /api/auth/token` all
authenticate through it.
"""

import asyncio
import functools
import hashlib
import json
import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import unquote

import redis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from redis.exceptions import RedisError

from secondbrain.errors import AppError, with_retry_after

Scope = dict[str, Any]
Message = Mapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger(__name__)

# Room for the multipart envelope and form fields around the file itself.
ENVELOPE_BYTES = 64 * 1024

# --- request bodies -----------------------------------------------------------------------------


@functools.cache  # the URL conf does not change while the process runs
def upload_paths() -> frozenset[str]:
    """The paths that take a file or a note: the upload limit applies to them."""
    names = ["upload_create", "note_create", "api:upload_create", "api:note_create"]
    return frozenset(reverse(name) for name in names)


def body_limit(path: str) -> int:
    """The most bytes a request body to `path` may have."""
    if path in upload_paths():
        return settings.MAX_UPLOAD_BYTES + ENVELOPE_BYTES
    return settings.MAX_REQUEST_BYTES


def request_path(target: bytes) -> str:
    """The path of a request line's target, decoded as daphne gives it to the app (`scope["path"]`)."""
    return unquote(target.split(b"?", 1)[0].decode("latin-1"))


def too_large_body(path: str) -> bytes:
    """The JSON error (the API's shape, which the upload page reads too) for a body over the limit."""
    if path in upload_paths():
        error = {"code": "file_too_large", "message": f"The file is larger than the {settings.MAX_UPLOAD_MB} MB limit."}
    else:
        limit = _size(settings.MAX_REQUEST_BYTES)
        error = {"code": "request_too_large", "message": f"The request is larger than the {limit} this address takes."}
    return json.dumps({"error": error}).encode()


def not_signed_in_body() -> bytes:
    """The JSON error for a body larger than MAX_REQUEST_BYTES from a client that is not signed in."""
    message = "Log in or send a valid API token to send this much."
    return json.dumps({"error": {"code": "unauthorized", "message": message}}).encode()


def _size(size: int) -> str:
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} bytes"


class BodySizeLimit:
    """Refuses a body over `body_limit` in front of Django, for ASGI servers other than ours."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, limit = scope["path"], body_limit(scope["path"])
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._refuse(send, path)
            return
        received = 0
        refused = False

        async def limited_receive() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit and not refused:
                    refused = True
                    await self._refuse(send, path)
                    return {"type": "http.disconnect"}  # Django drops a request whose client left
            return message

        async def guarded_send(message: Message) -> None:
            if not refused:  # our 413 already went out
                await send(message)

        await self.app(scope, limited_receive, guarded_send)

    async def _refuse(self, send: Send, path: str) -> None:
        body = too_large_body(path)
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class ConcurrencyLimit:
    """At most `limit` HTTP requests inside Django at once; the others wait here, in the event loop.

    Django runs each request's work on a thread of its own, and a request holds its pooled
    database connection until it ends. Let in unchecked, 600 requests made 600 threads taking turns
    on two cores: the ten that held the pool's connections advanced at 1/600 of the speed while the
    rest timed out waiting for one. With `limit` no larger than the pool, a request that is let in
    finds a connection and runs to its end. Paths under `exempt` (a question being answered, which
    waits on the model for seconds and borrows a connection only for each step) are not counted.
    """

    def __init__(self, app: ASGIApp, *, limit: int, exempt: tuple[str, ...] = ()) -> None:
        self.app = app
        self.exempt = exempt
        self.slots = asyncio.Semaphore(limit)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.exempt):
            await self.app(scope, receive, send)
            return
        async with self.slots:
            await self.app(scope, receive, send)


# --- rates --------------------------------------------------------------------------------------

# What each rule's refusal tells a person; {rate} is "20 per minute", {wait} "35 seconds".
RATE_MESSAGES = {
    "ask": "You are asking faster than this server allows ({rate}). Try again in {wait}.",
    "upload": "You are adding sources faster than this server allows ({rate}). Try again in {wait}.",
    "token": "Too many API tokens were created for you ({rate}). Try again in {wait}.",
    "login_account": "Too many failed log-ins to this account. To keep it safe, log-in is paused: try again in {wait}.",
    "login_address": "Too many log-in attempts from your network. Try again in {wait}.",
    "signup_address": "Too many accounts were created from your network ({rate}). Try again in {wait}.",
}


class RateLimited(AppError):
    def __init__(self, rule: str, *, limit: int, period: int, retry_after: int) -> None:
        per = _duration(period).removeprefix("1 ")  # "20 per minute", "10 per 15 minutes"
        message = RATE_MESSAGES[rule].format(rate=f"{limit} per {per}", wait=_duration(retry_after))
        super().__init__("rate_limited", message, status=429, retry_after=retry_after, extra={"rule": rule})


def rate_spend(rule: str, who: object) -> None:
    """Count one use of `rule` by `who` (a user id, an address); raise RateLimited if it is one too many."""
    _rate_count(rule, who, spend=True)


def rate_check(rule: str, who: object) -> None:
    """Raise RateLimited if `who` has used up `rule` already, without counting a use."""
    _rate_count(rule, who, spend=False)


arate_spend = sync_to_async(rate_spend, thread_sensitive=False)  # a Redis call: off the event loop


# One use of a rule, decided in Redis at once: the times of the uses within the last period are a sorted
# set; a use is let in (and, when spent, added) while fewer than the limit are in it; otherwise the
# answer is how long until enough of them are a period old. The clock is Redis's, which every process
# shares. A refused use is not added: asking again at once does not push the wait back.
_SLIDING_WINDOW = """
local key, period, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1e6
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - period)
local used = redis.call('ZCARD', key)
if used < limit then
  if ARGV[3] == '1' then
    redis.call('ZADD', key, now, ARGV[4])
    redis.call('EXPIRE', key, math.ceil(period) + 1)
  end
  return '0'
end
local oldest = redis.call('ZRANGE', key, used - limit, used - limit, 'WITHSCORES')
return tostring(tonumber(oldest[2]) + period - now)
"""


@functools.cache
def _rate_script(location: str) -> Any:
    client = redis.Redis.from_url(location, socket_timeout=5, socket_connect_timeout=5)
    return client.register_script(_SLIDING_WINDOW)


def _rate_count(rule: str, who: object, *, spend: bool) -> None:
    limit, period = settings.RATE_LIMITS[rule]
    if not limit:
        return
    # In the cache's Redis, under its key prefix (each test has its own).
    key = cache.make_key(f"rate:{rule}:{hashlib.sha256(str(who).encode()).hexdigest()[:32]}")
    try:
        script = _rate_script(str(settings.CACHES["default"]["LOCATION"]))
        wait = float(script(keys=[key], args=[period, limit, int(spend), uuid.uuid4().hex]))
    except (RedisError, OSError):
        # Redis restarting: a use that cannot be counted is let through rather than failing the request.
        logger.warning("rate %s not counted: Redis did not answer", rule, exc_info=True)
        return
    if wait > 0:
        raise RateLimited(rule, limit=limit, period=period, retry_after=max(1, math.ceil(wait)))


def _duration(seconds: int) -> str:
    for unit, scale in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= scale:
            count = round(seconds / scale)
            return f"{count} {unit}" if count == 1 else f"{count} {unit}s"
    return "1 second" if seconds == 1 else f"{seconds} seconds"


class LoginThrottle:
    """Listed before Django's ModelBackend: refuses a log-in before its password is checked (a check
    costs ~0.4 s of CPU) when its client address has made too many attempts, or its account has
    failed too often. It never authenticates anyone itself, and has no `get_user`, so sessions and
    the test client's `force_login` keep naming ModelBackend.

    Every attempt counts against the address; a failed one also against the account
    (`login_failed`, connected to Django's `user_login_failed` signal in accounts/apps.py).
    """

    def authenticate(self, request: HttpRequest | None, username: str | None = None, **credentials: Any) -> None:
        if username is not None:
            rate_check("login_account", _account(username))
        rate_spend("login_address", client_address(request))
        return None


def login_failed(
    sender: object, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    username = credentials.get("username")
    if username is not None:
        try:
            rate_spend("login_account", _account(username))
        except RateLimited:
            pass  # this attempt was answered already; the next one is refused before its check


def _account(username: str) -> str:
    return username.strip().casefold()


def client_address(request: HttpRequest | None) -> str:
    """The client's address as the server saw it (behind a proxy, daphne's --proxy-headers set it)."""
    return (request.META.get("REMOTE_ADDR") if request is not None else None) or "unknown"


class RateLimitedPage:
    """Middleware: a page whose request was refused by a rate (a log-in) shows why, kindly, with 429."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, RateLimited):
            return None
        response = render(request, "limited.html", {"message": exception.message}, status=exception.status)
        return with_retry_after(response, exception)
