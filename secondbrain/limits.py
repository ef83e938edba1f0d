"""ASGI guards in front of Django's HTTP handler.

`BodySizeLimit` refuses request bodies over the upload limit while they stream in: Django's ASGI
handler reads a whole body into a temporary file before any view or upload handler runs, so the
limit has to be enforced in front of it. `ConcurrencyLimit` lets only so many requests into Django
at once, so that each one that holds a database connection also gets the CPU to finish with it.
"""

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

Scope = dict[str, Any]
Message = Mapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Room for the multipart envelope and form fields around the file itself.
ENVELOPE_BYTES = 64 * 1024


class BodySizeLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int, max_mb: int) -> None:
        self.app = app
        self.limit = max_bytes + ENVELOPE_BYTES
        self.max_mb = max_mb

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        received = 0
        refused = False

        async def limited_receive() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit and not refused:
                    refused = True
                    await self._refuse(send)
                    return {"type": "http.disconnect"}  # Django drops a request whose client left
            return message

        async def guarded_send(message: Message) -> None:
            if not refused:  # our 413 already went out
                await send(message)

        await self.app(scope, limited_receive, guarded_send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            {"error": {"code": "file_too_large", "message": f"The file is larger than the {self.max_mb} MB limit."}}
        ).encode()
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
