import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.forms import Form
from django.http import FileResponse, Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.http import PAGE, AuthedRequest
from chat.services import SELECTION_MAX_CHARS
from ingestion import selectors, services
from ingestion.forms import NoteForm, WebPageForm
from ingestion.models import Job, Source
from ingestion.uploads import uploaded_file
from secondbrain.errors import AppError, with_retry_after

HOME = "ingestion/home.html"
SOURCE = "ingestion/source.html"
RANGE_MAX_BYTES = 8 * 2**20


def _row(source: Source, job: Job | None) -> dict[str, object]:
    return {"source": source, "job": services.job_event(job, source.title) if job else None}


def _rows(request: AuthedRequest) -> list[dict[str, object]]:
    sources = list(selectors.sources_of(owner=request.user)[:200])
    jobs = selectors.latest_jobs_by_source(owner=request.user, source_ids=[source.pk for source in sources])
    return [_row(source, jobs.get(source.pk)) for source in sources]


@login_required
def home(request: AuthedRequest, form: Form | None = None, web_page_form: Form | None = None) -> HttpResponse:
    context = {
        "form": form or NoteForm(),
        "web_page_form": web_page_form or WebPageForm(),
        "rows": _rows(request),
        "max_upload_mb": settings.MAX_UPLOAD_MB,
    }
    return render(request, HOME, context)


@login_required
@require_POST
def note_create(request: AuthedRequest) -> HttpResponse:
    """The note form (see `_form_post`)."""
    return _form_post(
        request,
        NoteForm(request.POST),
        lambda data: services.note_create(
            owner=request.user,
            text=data["text"],
            title=data["title"],
            occurred_at=data["occurred_at"],
            via=PAGE,
            private=data["private"],
        ),
        field="text",
        key="form",
        partial="note",
    )


@login_required
@require_POST
def web_page_create(request: AuthedRequest) -> HttpResponse:
    """The web page form (see `_form_post`): the address is checked now, the page fetched by the worker."""
    return _form_post(
        request,
        WebPageForm(request.POST),
        lambda data: services.web_page_create(owner=request.user, url=data["url"], via=PAGE, private=data["private"]),
        field="url",
        key="web_page_form",
        partial="web-page",
    )


def _form_post(
    request: AuthedRequest, form: Form, create: Callable[[dict[str, Any]], Job], *, field: str, key: str, partial: str
) -> HttpResponse:
    """A form of the page (`key` in its context) that adds a source: on success the new source row and
    a fresh form replace their htmx targets (the partial `<partial>-created`), a refusal shows beside
    `field` (`<partial>-form`).

    Posted without htmx (its script not loaded yet, or no JavaScript) it is an ordinary form: the
    page again after a success, the page with the errors otherwise.
    """
    refusal: AppError | None = None
    if form.is_valid():
        try:
            job = create(form.cleaned_data)
        except AppError as exc:
            form.add_error(field, exc.message)
            refusal = exc
        else:
            if not request.htmx:
                return redirect("home")
            context = {key: type(form)(), "row": _row(job.source, job)}
            return render(request, f"{HOME}#{partial}-created", context)
    if not request.htmx:
        response = home(request, **{key: form})
        if refusal is not None and refusal.retry_after is not None:
            response.status_code = refusal.status
    else:
        # htmx swaps only a 2xx answer: the form with its error comes back as one.
        response = render(request, f"{HOME}#{partial}-form", {key: form})
    return with_retry_after(response, refusal) if refusal is not None else response


@login_required
@require_POST
def upload_create(request: AuthedRequest) -> HttpResponse:
    """One dropped file: the new source's row, or the reason it was refused (as text, with its status)."""
    try:
        job = services.upload_create(
            owner=request.user,
            upload=uploaded_file(request),
            title=request.POST.get("title", ""),
            caption=request.POST.get("caption", ""),
            via=PAGE,
            private=request.POST.get("private") in ("true", "on"),
        )
    except AppError as exc:
        refusal = HttpResponse(exc.message, status=exc.status, content_type="text/plain; charset=utf-8")
        return with_retry_after(refusal, exc)
    return render(request, f"{HOME}#source-row", {"row": _row(job.source, job)})


@login_required
@require_POST
def job_cancel(request: AuthedRequest, job_id: int) -> HttpResponse:
    job = selectors.job_get(owner=request.user, job_id=job_id)
    try:
        job = services.job_cancel(job=job)
    except AppError:
        job.refresh_from_db()
    return render(request, f"{HOME}#job-status", {"job": services.job_event(job, job.source.title)})


@login_required
@require_POST
def source_reprocess(request: AuthedRequest, source_id: int) -> HttpResponse:
    source = selectors.source_get(owner=request.user, source_id=source_id)
    try:
        job = services.source_reprocess(source=source)
    except AppError:
        job = selectors.latest_jobs_by_source(owner=request.user, source_ids=[source.pk])[source.pk]
    return render(request, f"{HOME}#job-status", {"job": services.job_event(job, source.title)})


@login_required
@require_POST
def source_delete(request: AuthedRequest, source_id: int) -> HttpResponse:
    services.source_delete(source=selectors.source_get(owner=request.user, source_id=source_id), via=PAGE)
    return HttpResponse("")


@login_required
@require_POST
def source_private(request: AuthedRequest, source_id: int) -> HttpResponse:
    """The lock on a source's page: `private` "true" makes the source private, "false" searchable again.
    With htmx the page's header comes back; posted without it, the page again."""
    source = selectors.source_get(owner=request.user, source_id=source_id)
    private = request.POST.get("private")
    if private not in ("true", "false"):
        return HttpResponse('Send private "true" or "false".', status=422, content_type="text/plain; charset=utf-8")
    services.source_update(source=source, private=private == "true")
    if request.htmx:
        return render(request, f"{SOURCE}#source-head", {"source": source})
    return redirect("source_detail", source.pk)


@login_required
def source_detail(request: AuthedRequest, source_id: int) -> HttpResponse:
    source = selectors.source_get(owner=request.user, source_id=source_id)
    context = {"source": source, "chunks": source.chunks.all(), "selection_max_chars": SELECTION_MAX_CHARS}
    return render(request, SOURCE, context)


@login_required
def source_file(request: AuthedRequest, source_id: int) -> HttpResponseBase:
    """The original file, to its owner only; the PDF viewer opens it at a page, the player seeks in it."""
    source = selectors.source_get(owner=request.user, source_id=source_id)
    if not source.file:
        raise Http404
    if request.GET.get("preview") == "jpeg" and source.mime_type == "image/heic":
        return _image_preview(source)
    handle = source.file.open("rb")
    byte_range = _byte_range(request.headers.get("Range", ""), source.file.size)
    if byte_range is None:
        response: HttpResponseBase = FileResponse(
            handle, content_type=source.mime_type, filename=source.metadata.get("filename")
        )
    else:
        # Players seek with Range requests; without 206 answers they cannot jump to a timestamp.
        start, end = byte_range
        handle.seek(start)
        response = HttpResponse(handle.read(end - start + 1), status=206, content_type=source.mime_type)
        response["Content-Range"] = f"bytes {start}-{end}/{source.file.size}"
        handle.close()
    response["Accept-Ranges"] = "bytes"
    return response


def _image_preview(source: Source) -> HttpResponse:
    """A HEIC photo as a JPEG the browser can show (the original stays what the file link gives)."""
    from ingestion.extract.image import preview_jpeg

    try:
        body = preview_jpeg(Path(source.file.path))
    except (AppError, OSError):
        raise Http404 from None
    response = HttpResponse(body, content_type="image/jpeg")
    response["Cache-Control"] = "private, max-age=86400"
    return response


def _byte_range(header: str, size: int) -> tuple[int, int] | None:
    """The (first, last) byte to send for a `Range` header, at most RANGE_MAX_BYTES of them, or None
    for the whole file (streamed)."""
    match = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
    if not match or size == 0 or match.group(1) == match.group(2) == "":
        return None
    if match.group(1) == "":  # the last N bytes
        start, end = max(0, size - int(match.group(2))), size - 1
    else:
        start = int(match.group(1))
        end = min(int(match.group(2)), size - 1) if match.group(2) else size - 1
    # The part is read into memory, so it is capped, whichever form asked for it. A shorter answer
    # than asked for is allowed (its Content-Range says so); players simply ask for the next part.
    end = min(end, start + RANGE_MAX_BYTES - 1)
    return (start, end) if start <= end else None
