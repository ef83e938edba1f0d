from datetime import datetime
from typing import Any

from ninja import Field, File, Form, Router, Schema, Status
from ninja.files import UploadedFile

from accounts.http import AuthedRequest, api_via
from ingestion import selectors, services
from ingestion.models import Chunk, Job, Source
from ingestion.uploads import uploaded_file

router = Router(tags=["ingestion"])


PRIVATE = "left out of search, answers and the MCP tools unless they are asked to include private sources"


class NoteIn(Schema):
    title: str = ""
    text: str
    occurred_at: datetime | None = None
    private: bool = Field(False, description=PRIVATE)


class WebPageIn(Schema):
    url: str
    title: str = ""
    occurred_at: datetime | None = None
    private: bool = Field(False, description=PRIVATE)


class QueuedOut(Schema):
    source_id: int
    job_id: int


class JobOut(Schema):
    id: int
    source_id: int
    status: str
    stage: str
    progress: int
    attempts: int
    error_code: str
    error_message: str
    created_at: datetime
    finished_at: datetime | None


class SourceOut(Schema):
    id: int
    kind: str
    title: str
    mime_type: str
    size: int
    sha256: str
    status: str
    created_at: datetime
    occurred_at: datetime
    metadata: dict[str, Any]
    # A web page's address; None for every other kind.
    url: str | None
    private: bool = Field(description=PRIVATE)

    @staticmethod
    def resolve_url(source: Source) -> str | None:
        return source.metadata.get("url") if source.kind == Source.Kind.URL else None


class SourcePatchIn(Schema):
    private: bool | None = Field(None, description=PRIVATE)


class ChunkOut(Schema):
    id: int
    source_id: int
    source_title: str
    kind: str
    ordinal: int
    text: str
    anchor: dict[str, Any]
    occurred_at: datetime


def _queued(job: Job) -> Status[dict[str, int]]:
    return Status(202, {"source_id": job.source_id, "job_id": job.pk})


@router.post("/notes", response={202: QueuedOut})
def note_create(request: AuthedRequest, payload: NoteIn) -> Status[dict[str, int]]:
    job = services.note_create(
        owner=request.user,
        text=payload.text,
        title=payload.title,
        occurred_at=payload.occurred_at,
        via=api_via(request),
        private=payload.private,
    )
    return _queued(job)


@router.post("/web-pages", response={202: QueuedOut})
def web_page_create(request: AuthedRequest, payload: WebPageIn) -> Status[dict[str, int]]:
    """A web page by its address: checked now, fetched and read by the worker (the job says how it went)."""
    job = services.web_page_create(
        owner=request.user,
        url=payload.url,
        title=payload.title,
        occurred_at=payload.occurred_at,
        via=api_via(request),
        private=payload.private,
    )
    return _queued(job)


@router.post("/uploads", response={202: QueuedOut})
def upload_create(
    request: AuthedRequest,
    file: UploadedFile | None = File(None),  # noqa: B008 — ninja's parameter declaration
    title: str = Form(""),  # noqa: B008
    caption: str = Form(""),  # noqa: B008 — an image's only
    occurred_at: datetime | None = Form(None),  # noqa: B008
    private: bool = Form(False, description=PRIVATE),  # noqa: B008
) -> Status[dict[str, int]]:
    job = services.upload_create(
        owner=request.user,
        upload=uploaded_file(request),
        title=title,
        caption=caption,
        occurred_at=occurred_at,
        via=api_via(request),
        private=private,
    )
    return _queued(job)


@router.post("/jobs/{job_id}/cancel", response=JobOut)
def job_cancel(request: AuthedRequest, job_id: int) -> Job:
    return services.job_cancel(job=selectors.job_get(owner=request.user, job_id=job_id))


@router.get("/jobs", response=list[JobOut])
def job_list(request: AuthedRequest) -> Any:
    return selectors.jobs_of(owner=request.user)[:200]


@router.get("/jobs/{job_id}", response=JobOut)
def job_detail(request: AuthedRequest, job_id: int) -> Job:
    return selectors.job_get(owner=request.user, job_id=job_id)


@router.get("/sources", response=list[SourceOut])
def source_list(request: AuthedRequest) -> Any:
    return selectors.sources_of(owner=request.user)[:500]


@router.get("/sources/{source_id}", response=SourceOut)
def source_detail(request: AuthedRequest, source_id: int) -> Source:
    return selectors.source_get(owner=request.user, source_id=source_id)


@router.patch("/sources/{source_id}", response=SourceOut)
def source_update(request: AuthedRequest, source_id: int, payload: SourcePatchIn) -> Source:
    """Change a source: `{"private": true}` leaves it out of search and answers from the next question on."""
    source = selectors.source_get(owner=request.user, source_id=source_id)
    return services.source_update(source=source, private=payload.private)


@router.delete("/sources/{source_id}", response={204: None})
def source_delete(request: AuthedRequest, source_id: int) -> Status[None]:
    services.source_delete(source=selectors.source_get(owner=request.user, source_id=source_id), via=api_via(request))
    return Status(204, None)


@router.post("/sources/{source_id}/reprocess", response={202: QueuedOut})
def source_reprocess(request: AuthedRequest, source_id: int) -> Status[dict[str, int]]:
    job = services.source_reprocess(source=selectors.source_get(owner=request.user, source_id=source_id))
    return _queued(job)


@router.get("/chunks/{chunk_id}", response=ChunkOut)
def chunk_detail(request: AuthedRequest, chunk_id: int) -> dict[str, Any]:
    chunk: Chunk = selectors.chunk_get(owner=request.user, chunk_id=chunk_id)
    return {
        "id": chunk.pk,
        "source_id": chunk.source_id,
        "source_title": chunk.source.title,
        "kind": chunk.source.kind,
        "ordinal": chunk.ordinal,
        "text": chunk.text,
        "anchor": chunk.anchor,
        "occurred_at": chunk.occurred_at,
    }
