"""An ASGI guard that refuses request bodies over the upload limit while they stream in.

Django's ASGI handler reads a whole body into a temporary file before any view or upload handler
runs, so the limit has to be enforced here, in front of it: a declared Content-Length over the
limit is refused before a byte is read, and a body without one is cut off once it passes the limit.
"""

import json
from typing import Any, Awaitable, Callable

Scope = dict[str, Any]
Message = dict[str, Any]
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
