import hashlib
import itertools
import json
import time
import uuid
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.test import Client

from accounts.models import User
from accounts.services import token_create
from chat.models import Citation, Conversation, Message
from ingestion.models import Chunk, Job, Source

PASSWORD = "a-long-enough-Passw0rd"
_serial = itertools.count(1)


def make_user(username: str | None = None) -> User:
    user = User(username=username or f"user{next(_serial)}")
    user.set_password(PASSWORD)
    user.save()
    return user


def make_source(owner: User, title: str, text: str, *, file: tuple[str, bytes] | None = None) -> Source:
    """A processed source with one passage (`text`), stored without the pipeline: a note, or with
    `file` (its name and bytes) an uploaded PDF whose file is on disk under MEDIA_ROOT."""
    body = file[1] if file else text.encode()
    source = Source(
        owner=owner,
        kind=Source.Kind.PDF if file else Source.Kind.NOTE,
        title=title,
        text="" if file else text,
        mime_type="application/pdf" if file else "text/markdown",
        size=len(body),
        sha256=hashlib.sha256(body).hexdigest(),
        status=Source.Status.READY,
        metadata={"filename": file[0]} if file else {},
    )
    if file:
        source.file.save(f"{uuid.uuid4().hex}.pdf", ContentFile(body), save=False)
    source.save()
    Job.objects.create(owner=owner, source=source, status=Job.Status.DONE, stage=Job.Stage.DONE, progress=100)
    Chunk.objects.create(
        source=source,
        owner=owner,
        ordinal=0,
        text=text,
        anchor={"page": 1} if file else {"heading": [title]},
        occurred_at=source.occurred_at,
        embedding=[0.0] * (settings.EMBEDDING_DIMENSIONS - 1) + [1.0],
    )
    return source


def make_answer(owner: User, sources: list[Source], question: str = "What did we agree?") -> Message:
    """A conversation of one question and an answer citing each source's first passage, with the
    trace an answer keeps (passages, the nearest ones, the prompt that quoted them)."""
    conversation = Conversation.objects.create(owner=owner, title=question)
    Message.objects.create(conversation=conversation, role=Message.Role.USER, content=question)
    chunks = [source.chunks.get(ordinal=0) for source in sources]
    quoted = "\n\n".join(f"[{n}] {chunk.source.title}\n{chunk.text}" for n, chunk in enumerate(chunks, start=1))
    trace = {
        "question": question,
        "passages": [{"chunk_id": chunk.pk, "score": 0.5, "similarity": 0.5} for chunk in chunks],
        "nearest": [
            {
                "chunk_id": c.pk,
                "source_id": c.source_id,
                "source_title": c.source.title,
                "anchor": c.anchor,
                "excerpt": c.text,
                "similarity": 0.5,
            }
            for c in chunks
        ],
        "prompt": [{"role": "system", "content": f"Sources:\n\n{quoted}"}, {"role": "user", "content": question}],
    }
    markers = " ".join(f"[{n}]" for n in range(1, len(chunks) + 1))
    answer = Message.objects.create(
        conversation=conversation, role=Message.Role.ASSISTANT, content=f"Here it is {markers}.", trace=trace
    )
    for number, chunk in enumerate(chunks, start=1):
        Citation.objects.create(
            message=answer,
            marker=number,
            chunk=chunk,
            source=chunk.source,
            source_title=chunk.source.title,
            anchor=chunk.anchor,
            excerpt=chunk.text,
        )
    return answer


class ApiClient:
    """Django's test client speaking JSON to /api/ with a bearer token — the way an API user does."""

    def __init__(self, token: str | None = None) -> None:
        self.client = Client()
        self.token = token

    @classmethod
    def for_user(cls, user: User) -> "ApiClient":
        return cls(token_create(user=user))

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(f"/api{path}", params, headers=self._headers())

    def post(self, path: str, body: Any = None, *, raw: str | None = None) -> Any:
        data = raw if raw is not None else json.dumps(body if body is not None else {})
        return self.client.post(f"/api{path}", data, content_type="application/json", headers=self._headers())

    def patch(self, path: str, body: Any) -> Any:
        return self.client.patch(
            f"/api{path}", json.dumps(body), content_type="application/json", headers=self._headers()
        )

    def delete(self, path: str, body: Any = None) -> Any:
        data = json.dumps(body) if body is not None else ""
        return self.client.delete(f"/api{path}", data, content_type="application/json", headers=self._headers())

    def wait_for_job(self, job_id: int, timeout: float = 120.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            job = self.get(f"/jobs/{job_id}").json()
            if job["status"] in {"done", "failed"}:
                return job
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job_id} still {job['status']} after {timeout} s: {job}")
            time.sleep(0.2)


def assert_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["message"], body
