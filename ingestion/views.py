from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from ingestion import selectors, services
from ingestion.forms import NoteForm
from secondbrain.errors import AppError


def _rows(request: HttpRequest) -> list[dict[str, object]]:
    sources = list(selectors.sources_of(owner=request.user)[:100])
    jobs = selectors.latest_jobs_by_source(owner=request.user, source_ids=[source.pk for source in sources])
    return [
        {"source": source, "job": services.job_event(jobs[source.pk], source.title) if source.pk in jobs else None}
        for source in sources
    ]


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "ingestion/home.html", {"form": NoteForm(), "rows": _rows(request)})


@login_required
@require_POST
def note_create(request: HttpRequest) -> HttpResponse:
    """The note form: on success the new source row (and a fresh form) replace their htmx targets."""
    form = NoteForm(request.POST)
    if form.is_valid():
        try:
            job = services.note_create(
                owner=request.user,
                text=form.cleaned_data["text"],
                title=form.cleaned_data["title"],
                occurred_at=form.cleaned_data["occurred_at"],
            )
        except AppError as exc:
            form.add_error("text", exc.message)
        else:
            row = {"source": job.source, "job": services.job_event(job, job.source.title)}
            return render(request, "ingestion/home.html#note-created", {"form": NoteForm(), "row": row})
    return render(request, "ingestion/home.html#note-form", {"form": form}, status=422)


@login_required
def source_detail(request: HttpRequest, source_id: int) -> HttpResponse:
    source = selectors.source_get(owner=request.user, source_id=source_id)
    return render(request, "ingestion/source.html", {"source": source, "chunks": source.chunks.all()})
