from datetime import datetime
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from chat import selectors, services

router = Router(tags=["chat"])


class SearchQuery(Schema):
    q: str = Field(..., min_length=1, max_length=services.QUESTION_MAX_CHARS)
    k: int = Field(settings.SEARCH_DEFAULT_K, ge=1, le=settings.SEARCH_MAX_K)


class SearchResultOut(Schema):
    chunk_id: int
    source_id: int
    source_title: str
    kind: str
    text: str
    score: float
    occurred_at: datetime
    anchor: dict[str, Any]


class SearchOut(Schema):
    mode: str
    date_range: dict[str, datetime] | None
    results: list[SearchResultOut]


class AskIn(Schema):
    question: str
    conversation_id: int | None = None


class CitationOut(Schema):
    marker: int
    chunk_id: int | None
    source_id: int | None
    source_title: str
    anchor: dict[str, Any]
    excerpt: str


class AskOut(Schema):
    answer: str
    abstained: bool
    citations: list[CitationOut]
    conversation_id: int


@router.get("/search", response=SearchOut)
def search(request: HttpRequest, params: Query[SearchQuery]) -> dict[str, Any]:
    hits = selectors.search(owner_id=request.user.pk, query=params.q, k=params.k)
    return {"mode": "semantic", "date_range": None, "results": hits}


@router.post("/ask", response=AskOut)
def ask(request: HttpRequest, payload: AskIn) -> dict[str, Any]:
    return async_to_sync(services.answer_collect)(
        user=request.user, question=payload.question, conversation_id=payload.conversation_id
    )
