"""An OpenAI-compatible chat server that streams a scripted answer: slowly, or breaking off mid-way.

The real local model cannot be made to stream slowly enough to press Stop, to drop its connection
mid-answer, or to write hostile Markdown on demand; this stands in for the model server only (an
outside service), never for our database, queue or channel layer.
"""

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class Script:
    tokens: list[str] = field(default_factory=lambda: ["The tomatoes ", "go in ", "on 12 May ", "[1]."])
    delay: float = 0.0  # seconds before each token
    break_after: int | None = None  # drop the connection after this many tokens
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens reported when asked (include_usage)
    requests: int = 0
    bodies: list[dict[str, object]] = field(default_factory=list)  # each request's JSON, as the app sent it


class ScriptedModel:
    def __init__(self) -> None:
        self.script = Script()
        handler = type("Handler", (_Handler,), {"model": self})
        self.server = _Server(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # a hundred asks at once, as a real model server takes them (socketserver's is 5)


class _Handler(BaseHTTPRequestHandler):
    model: ScriptedModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 — the base class's name
        pass

    def do_POST(self) -> None:  # noqa: N802 — http.server's naming
        try:
            self._stream()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the app stopped reading: the person pressed Stop

    def _stream(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        script = self.model.script
        script.requests += 1
        script.bodies.append(json.loads(body or b"{}"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for index, token in enumerate(script.tokens):
            if script.break_after is not None and index >= script.break_after:
                # Mid-stream, no terminating chunk: what a crashed model server leaves behind.
                self.wfile.flush()
                self.connection.shutdown(2)
                self.close_connection = True
                return
            time.sleep(script.delay)
            self._chunk({"content": token}, None)
        self._chunk({}, "stop")
        asked = json.loads(body or b"{}").get("stream_options", {}).get("include_usage")
        if script.usage is not None and asked:  # OpenAI's last chunk: no choices, the counts
            prompt, completion = script.usage
            usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
            chunk = {"id": "scripted", "object": "chat.completion.chunk", "created": 0, "model": "scripted"}
            self._write(f"data: {json.dumps({**chunk, 'choices': [], 'usage': usage})}\n\n".encode())
        self._write(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, delta: dict[str, str], finish: str | None) -> None:
        body = {
            "id": "scripted",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": "scripted",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        self._write(f"data: {json.dumps(body)}\n\n".encode())

    def _write(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


@pytest.fixture
def scripted_model(monkeypatch: pytest.MonkeyPatch, settings: object) -> Iterator[ScriptedModel]:
    """The scripted server as the chat model, for this process and for a `web_server` started after it."""
    model = ScriptedModel()
    monkeypatch.setenv("OPENAI_BASE_URL", model.url)
    settings.OPENAI_BASE_URL = model.url  # type: ignore[attr-defined]
    yield model
    model.close()
