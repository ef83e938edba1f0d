from datetime import datetime
from typing import Any, Literal

from asgiref.sync import async_to_sync
from django.conf import settings
from django.http import StreamingHttpResponse
from ninja import Field, Query, Router, Schema, Status

from accounts.http import AuthedRequest, api_via
from chat import selectors, services
from ingestion.models import Source

router = Router(tags=["chat"])
INCLUDE_PRIVATE = "also read the sources marked private (left out unless asked)"
PRIVATE_SOURCE = "the source is private (shown with a lock)"


class SearchQuery(Schema):
    q: str = Field(..., min_length=1, max_length=services.QUESTION_MAX_CHARS)
    k: int = Field(settings.SEARCH_DEFAULT_K, ge=1, le=settings.SEARCH_MAX_K)
    # Explicit bounds replace the range the question names; values without an offset are read
    # in the user's time zone.
    since: datetime | None = None
    until: datetime | None = None
    kind: Source.Kind | None = None
    include_private: bool = Field(False, description=INCLUDE_PRIVATE)


class SearchResultOut(Schema):
    chunk_id: int
    source_id: int
    source_title: str
    kind: str
    text: str
    score: float = Field(description="the passage's rank score (fused from meaning and words): higher is better")
    similarity: float = Field(description="cosine similarity of the passage to the question's meaning, -1 to 1")
    sentence_similarity: float = Field(
        0.0, description="the same of the passage's sentence nearest to the question (the passage's own if it has one)"
    )
    occurred_at: datetime
    anchor: dict[str, Any]
    private: bool = Field(False, description=PRIVATE_SOURCE)


class DateRangeOut(Schema):
    since: datetime | None
    until: datetime | None
    clock: Literal["content", "written", "upload"]


class SearchOut(Schema):
    mode: Literal["semantic", "temporal", "hybrid"]
    date_range: DateRangeOut | None
    results: list[SearchResultOut]


class AskIn(Schema):
    question: str
    conversation_id: int | None = None
    include_private: bool = Field(False, description=INCLUDE_PRIVATE)
    source_id: int | None = Field(None, description="ask about text selected in this source (with `selection`)")
    selection: str | None = Field(
        None,
        description="text of the source to ask about (whitespace aside, as the source has it): the answer reads "
        "it and the passages around it, nothing else, and says so when they do not hold the answer",
    )
    chunk_id: int | None = Field(
        None, description="the passage the selection starts in: which occurrence, when the text occurs more than once"
    )

    def about(self) -> services.About | None:
        return services.About.of(self.source_id, self.selection, self.chunk_id)


class CitationOut(Schema):
    marker: int
    chunk_id: int | None
    source_id: int | None
    source_title: str
    anchor: dict[str, Any]
    excerpt: str
    private: bool = Field(False, description=PRIVATE_SOURCE)


class AskOut(Schema):
    answer: str
    abstained: bool
    citations: list[CitationOut]
    conversation_id: int
    route: str = Field(
        description="question, listing (a time's sources), conversation (a greeting, thanks) or selection "
        "(about text selected in a source)"
    )
    follow_up: str | None = Field(None, description="a follow-up as it was searched, made standalone")


@router.get("/search", response=SearchOut)
def search(request: AuthedRequest, params: Query[SearchQuery]) -> dict[str, Any]:
    """Passages for `q`: by meaning, by the time it names ("what did I add last week?"), or both."""
    retrieval = selectors.retrieve(
        owner=request.user,
        query=params.q,
        k=params.k,
        since=params.since,
        until=params.until,
        kind=params.kind.value if params.kind else None,
        include_private=params.include_private,
    )
    return {"mode": retrieval.mode, "date_range": retrieval.date_range, "results": retrieval.hits}


@router.post("/ask", response=AskOut)
def ask(request: AuthedRequest, payload: AskIn) -> Any:
    """The answer as one JSON object, or with `Accept: text/event-stream` the websocket's events as SSE.

    With `source_id` and `selection`, the question is about that text of the source ("Ask about this").
    """
    about = payload.about()
    question = services.ask_admit(
        user=request.user, question=payload.question, conversation_id=payload.conversation_id, about=about
    )  # before anything streams: a refusal is a 429, a 422 or a 404
    user = request.user
    user.pk  # noqa: B018 — resolve the lazy user here: the stream runs where the ORM must not be called directly
    if "text/event-stream" in request.headers.get("Accept", ""):
        return StreamingHttpResponse(
            services.answer_sse(
                user=user,
                question=question,
                conversation_id=payload.conversation_id,
                about=about,
                include_private=payload.include_private,
            ),
            content_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    return async_to_sync(services.answer_collect)(
        user=user,
        question=question,
        conversation_id=payload.conversation_id,
        about=about,
        include_private=payload.include_private,
    )


class RememberedOut(Schema):
    source_id: int
    title: str
    status: str = Field(description="the note's processing: pending until it is chunked and embedded, then ready")
    created: bool = Field(description="false when the answer had been remembered already: this is that note")
    conversation_id: int
    message_id: int


@router.post("/messages/{message_id}/remember", response={200: RememberedOut, 201: RememberedOut})
def message_remember(request: AuthedRequest, message_id: int) -> Status[dict[str, Any]]:
    """Save an answer as a note of its own — its question, the answer, its citations as links to their
    passages, a link to its conversation. 201 the first time; again, 200 with the same note."""
    remembered = services.message_remember(user=request.user, message_id=message_id, via=api_via(request))
    note = remembered.source
    body = {
        "source_id": note.pk,
        "title": note.title,
        "status": note.status,
        "created": remembered.created,
        "conversation_id": remembered.message.conversation_id,
        "message_id": remembered.message.pk,
    }
    return Status(201 if remembered.created else 200, body)


@router.delete("/conversations/{conversation_id}", response={204: None})
def conversation_delete(request: AuthedRequest, conversation_id: int) -> Status[None]:
    """The conversation with its messages and their citations."""
    services.conversation_delete(
        conversation=selectors.conversation_get(owner=request.user, conversation_id=conversation_id)
    )
    return Status(204, None)
