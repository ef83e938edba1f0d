"""The web server: daphne, with HTTP connections that refuse a request body over its limit before
reading it.

    python -m secondbrain.server [daphne's options] secondbrain.asgi:application

Daphne (through Twisted) reads a whole request body, to memory or a temporary file, before the app
sees the request, and Twisted has no limit of its own (twisted#4898): a 20 MiB body sent to a 1 MiB
limit was read in full before the app could answer 413. Here each connection checks the limit of the
request's path (`secondbrain.limits.body_limit`) as soon as its headers are in: a declared
Content-Length over it is answered 413 at once, before `100 Continue` and before any of the body is
read; a chunked body is cut off once what arrived passes it. An upload larger than any other
request may be is read only once its session or API token is known to be a signed-in user's
(401 otherwise), so a client without an account cannot make the server buffer more than the small
limit. Websockets are untouched: their upgrade
request has no body, and the connection is handed to daphne's websocket protocol after it (which
caps a message at 1 MiB itself: --websocket_max_message_size).

`make run` (secondbrain/stack.py) and docker-compose.yml start this instead of `daphne`.
"""

import logging
from typing import Any, cast

from daphne.cli import CommandLineInterface
from daphne.server import Server as DaphneServer  # first: it installs the asyncio reactor Twisted must use
from django.conf import settings
from django.db import connection
from django.http import parse_cookie
from twisted.internet import threads
from twisted.internet.protocol import connectionDone
from twisted.python.failure import Failure
from twisted.web import http

from secondbrain import limits

logger = logging.getLogger("secondbrain.server")  # __name__ is __main__ under -m

# After a refusal, how long what the client still sends is read and dropped. A client that writes its
# whole body before it reads (most scripts) would otherwise meet a closed socket, and see a reset
# instead of the 413; nothing it sends is kept, and after this it is cut off.
LINGER_SECONDS = 10


class LimitedChannel(http.HTTPChannel):
    """One HTTP connection, refusing a request body over the limit of its path before buffering it."""

    _body_limit = 0
    _chunked_received = 0
    _refused = False
    _gone = False
    # Twisted's interfaces (zope) read as plain classes to mypy: the timer and the transport are Any.
    _lingering: Any = None

    @property
    def _target(self) -> bytes:
        """The request line's target (Twisted's annotations mistake `_path` for the Request)."""
        return cast(bytes, self._path)

    def allHeadersReceived(self) -> None:
        path = limits.request_path(self._target)
        self._body_limit = limits.body_limit(path)
        self._chunked_received = 0
        # self.length: the declared Content-Length, None for a chunked body.
        if self.length is not None and self.length > self._body_limit:
            self._refuse(path)
            return
        if self._body_limit > settings.MAX_REQUEST_BYTES and (
            self.length is None or self.length > settings.MAX_REQUEST_BYTES
        ):
            # An upload larger than any other request may be: read only for a signed-in client, so
            # that a client without an account cannot make the server buffer more than that.
            self._sign_in_check(path)
            return
        super().allHeadersReceived()  # sends `100 Continue` when asked, so only after the checks

    def _sign_in_check(self, path: str) -> None:
        """Stop reading, look the request's session or API token up on a thread, then read on
        (`allHeadersReceived` as Twisted has it) or refuse with 401."""
        headers = self.requests[-1].requestHeaders
        cookies = parse_cookie(b"; ".join(headers.getRawHeaders(b"cookie", [])).decode("latin-1"))
        authorization = (headers.getRawHeaders(b"authorization") or [b""])[0].decode("latin-1")
        scheme, _, token = authorization.partition(" ")
        session_key = cookies.get(settings.SESSION_COOKIE_NAME)
        token = token.strip() if scheme.lower() == "bearer" else ""
        if not session_key and not token:
            self._refuse(path, status=401)
            return
        # LineReceiver leaves what arrives in its buffer while `paused`; the transport stops reading.
        self.paused = True
        self._transport_reading(False)
        checked = threads.deferToThread(_signed_in, session_key=session_key, token=token)
        checked.addCallback(self._sign_in_checked, path)
        checked.addErrback(lambda failure: self._sign_in_checked(False, path, failure))

    def _sign_in_checked(self, signed_in: bool, path: str, failure: Failure | None = None) -> None:
        if failure is not None:
            logger.error("could not check a client's sign-in: %s", failure.getErrorMessage())
        if self._refused or self._gone:
            return  # the client left meanwhile
        if not signed_in:
            self._refuse(path, status=401)
            return
        super().allHeadersReceived()
        self.paused = False
        self._transport_reading(True)
        self.dataReceived(b"")  # what arrived meanwhile

    def rawDataReceived(self, data: bytes) -> None:
        if self._refused:
            return
        # Chunked: only what arrives tells its size (framing included). While a request is being
        # answered, what arrives is the next one, which Twisted buffers and parses later.
        if self.length is None and not self._handlingRequest:
            self._chunked_received += len(data)
            if self._chunked_received > self._body_limit:
                self._refuse(limits.request_path(self._target))
                return
        super().rawDataReceived(data)

    def dataReceived(self, data: bytes) -> None:
        if self._refused:
            return  # read and dropped: see LINGER_SECONDS
        super().dataReceived(data)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self._gone = True
        if self._lingering is not None and self._lingering.active():
            self._lingering.cancel()
        super().connectionLost(reason)

    def _transport_reading(self, reading: bool) -> None:
        producer: Any = self._networkProducer
        producer.resumeProducing() if reading else producer.pauseProducing()

    def _refuse(self, path: str, *, status: int = 413) -> None:
        """Answer 413 (too large) or 401 (a large body from a client not signed in) and close: the
        request never reaches the app, and nothing more of it is parsed."""
        self._refused = True
        transport: Any = self.transport
        logger.warning("refused a body (%d) to %s from %s", status, path, transport.getPeer())
        body = limits.too_large_body(path) if status == 413 else limits.not_signed_in_body()
        reason = b"Content Too Large" if status == 413 else b"Unauthorized"
        head = (
            b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (status, reason, len(body))
        )
        transport.write(head + body)
        transport.loseWriteConnection()  # the refusal, then the end of our side
        self._lingering = self.callLater(LINGER_SECONDS, transport.abortConnection)


def _signed_in(*, session_key: str | None, token: str) -> bool:
    """On a thread of the reactor's pool: the look-up, its database connection returned after."""
    from accounts.selectors import credentials_signed_in  # Django is set up once the app is loaded

    try:
        return credentials_signed_in(session_key=session_key, token=token)
    finally:
        connection.close()


class Server(DaphneServer):
    """daphne's server, its HTTP connections `LimitedChannel`s.

    daphne's `run` builds its HTTP factory and stores it as `http_factory` before it listens; the
    setter chooses the factory's `protocol`, the class Twisted builds each connection with. (Twisted's
    default wraps HTTP/1.1 and HTTP/2, negotiated over TLS only: this server speaks plain HTTP/1.1
    behind a proxy that ends TLS.)
    """

    @property
    def http_factory(self) -> http.HTTPFactory:
        return self._limited_http_factory

    @http_factory.setter
    def http_factory(self, factory: http.HTTPFactory) -> None:
        # Twisted's own default here is a function returning a protocol; a protocol class is the usual.
        factory.protocol = LimitedChannel  # type: ignore[assignment,method-assign]
        self._limited_http_factory = factory


class Command(CommandLineInterface):
    server_class = Server


if __name__ == "__main__":
    Command.entrypoint()
