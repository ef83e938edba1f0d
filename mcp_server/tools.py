"""The MCP server: tools an AI assistant calls on one person's notes, each through the app's own
selectors and services, scoped to that person, each call written to their audit log.

Who is calling (the person, the interface, the API token) is `caller`, a context variable: set per
HTTP request by `mcp_server.http.McpEndpoint` once it has checked the token, and once for the
process by `manage.py mcp --user NAME` over stdio. The SDK runs a tool in a task that inherits it,
whichever transport and protocol version brought the call (it hands a tool the HTTP request in one
protocol era and only its headers in the other).
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.http import Http404
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from accounts.models import AuditEntry, User
from accounts.services import Via, audit_record
from chat import selectors as chat_selectors
from chat import services as chat_services
from chat.api import AskOut, SearchOut
from ingestion import selectors as ingestion_selectors
from ingestion import services as ingestion_services
from ingestion.api import QueuedOut
from ingestion.models import Source, anchor_label
from secondbrain.errors import DATABASE_UNREACHABLE, AppError, as_app_error

logger = logging.getLogger(__name__)

PASSAGES_MAX = 200  # get_source returns at most this many passages of a source
RECENT_MAX = 100
AUDITED_CHARS = 200  # an argument's text as the audit log keeps it
# A note's text and a selection of a source are content, not a record of the call: only their length is kept.
UNAUDITED = frozenset({"text", "selection"})

INSTRUCTIONS = """Second Brain holds one person's own notes, PDFs and voice memos. Search them with
search_notes (a question, optionally a time range and a kind), read a source whole with get_source,
see what was added lately with recent_activity, add a note with add_note, or ask for an answer
written from the notes with citations with ask. Sources the person marked private are left out unless
a tool is called with include_private true: do so only when the person asks for their private sources."""
# Every reading tool's `include_private` argument.
IncludePrivate = Annotated[
    bool, Field(description="also read the sources the person marked private; only when they ask for it")
]


@dataclass(frozen=True)
class Caller:
    user: User
    via: Via


caller: ContextVar[Caller] = ContextVar("secondbrain_mcp_caller")


def current_caller() -> Caller:
    try:
        return caller.get()
    except LookupError:
        raise ToolError("Not signed in: send an API token.") from None


@contextmanager
def tool_errors() -> Iterator[None]:
    """The app's refusals as tool errors the assistant can read (`is_error` results)."""
    try:
        yield
    except Http404:
        raise ToolError("Not found (no such item among yours).") from None
    except (AppError, *DATABASE_UNREACHABLE) as exc:
        error = as_app_error(exc)
        raise ToolError(f"{error.message} ({error.code})") from None


class PassageOut(BaseModel):
    chunk_id: int
    anchor: dict[str, Any]
    place: str = Field(description="where the passage sits: a page, a time in a recording, a heading")
    occurred_at: datetime
    text: str


class SourceTextOut(BaseModel):
    id: int
    title: str
    kind: str
    status: str
    created_at: datetime
    occurred_at: datetime
    private: bool
    passages: list[PassageOut]
    truncated: bool = Field(description=f"true when the source has more than {PASSAGES_MAX} passages")


class ActivityItemOut(BaseModel):
    source_id: int
    title: str
    kind: str
    status: str
    created_at: datetime
    occurred_at: datetime
    error_code: str
    error_message: str
    private: bool


class ActivityOut(BaseModel):
    sources: list[ActivityItemOut]


server: MCPServer = MCPServer(name="second-brain", title="Second Brain", instructions=INSTRUCTIONS, version="1")
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


@server.tool(annotations=READ_ONLY)
async def search_notes(
    query: Annotated[str, Field(min_length=1, max_length=chat_services.QUESTION_MAX_CHARS)],
    since: datetime | None = None,
    until: datetime | None = None,
    kind: Source.Kind | None = None,
    limit: Annotated[int, Field(ge=1, le=settings.SEARCH_MAX_K)] = settings.SEARCH_DEFAULT_K,
    include_private: IncludePrivate = False,
) -> SearchOut:
    """Search the person's notes, PDFs and recordings: by meaning, by the time the query names ("what
    did I add last week about the budget?"), or both. `since`/`until` (ISO 8601; without an offset,
    in the person's time zone) replace the range the query names; `kind` keeps one kind of source."""
    who = current_caller()
    with tool_errors():
        retrieval = await database_sync_to_async(chat_selectors.retrieve)(
            owner=who.user,
            query=query,
            k=limit,
            since=since,
            until=until,
            kind=kind.value if kind else None,
            include_private=include_private,
        )
    return SearchOut.model_validate(
        {"mode": retrieval.mode, "date_range": retrieval.date_range, "results": retrieval.hits}
    )


@server.tool(annotations=READ_ONLY)
async def get_source(source_id: int, include_private: IncludePrivate = False) -> SourceTextOut:
    """One source's text, passage by passage in reading order, each with its anchor (PDF page,
    seconds into a recording, a note's heading). A private source is not found unless included."""
    who = current_caller()
    with tool_errors():
        source = await database_sync_to_async(ingestion_selectors.source_get)(
            owner=who.user, source_id=source_id, include_private=include_private
        )
        hits = await database_sync_to_async(chat_selectors.source_passages)(
            owner_id=who.user.pk, source_id=source.pk, k=PASSAGES_MAX + 1
        )
    passages = [
        PassageOut(
            chunk_id=hit.chunk_id, anchor=hit.anchor, place=anchor_label(hit.anchor), occurred_at=hit.occurred_at,
            text=hit.text,
        )
        for hit in hits[:PASSAGES_MAX]
    ]  # fmt: skip
    return SourceTextOut(
        id=source.pk,
        title=source.title,
        kind=source.kind,
        status=source.status,
        created_at=source.created_at,
        occurred_at=source.occurred_at,
        private=source.private,
        passages=passages,
        truncated=len(hits) > PASSAGES_MAX,
    )


@server.tool(annotations=READ_ONLY)
async def recent_activity(
    since: datetime | None = None,
    limit: Annotated[int, Field(ge=1, le=RECENT_MAX)] = 20,
    include_private: IncludePrivate = False,
) -> ActivityOut:
    """Sources added lately, newest first, with how their processing went (queued, ready, failed and
    why). `since` (ISO 8601; without an offset, in the person's time zone) keeps those added since."""
    who = current_caller()
    with tool_errors():
        sources = await database_sync_to_async(ingestion_selectors.sources_added)(
            owner=who.user, since=since, limit=limit, include_private=include_private
        )
        jobs = await database_sync_to_async(ingestion_selectors.latest_jobs_by_source)(
            owner=who.user, source_ids=[source.pk for source in sources]
        )
    items = []
    for source in sources:
        job = jobs.get(source.pk)
        items.append(
            ActivityItemOut(
                source_id=source.pk,
                title=source.title,
                kind=source.kind,
                status=source.status,
                created_at=source.created_at,
                occurred_at=source.occurred_at,
                error_code=job.error_code if job else "",
                error_message=job.error_message if job else "",
                private=source.private,
            )
        )
    return ActivityOut(sources=items)


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
async def add_note(text: str, title: str = "", occurred_at: datetime | None = None, private: bool = False) -> QueuedOut:
    """Add a note (Markdown; YAML front matter gives its title, date and tags). It is processed in the
    background: recent_activity shows when it is ready to search. A `private` note is left out of
    searches and answers that do not include private sources."""
    who = current_caller()
    with tool_errors():
        job = await database_sync_to_async(ingestion_services.note_create)(
            owner=who.user, text=text, title=title, occurred_at=occurred_at, via=who.via, private=private
        )
    return QueuedOut(source_id=job.source_id, job_id=job.pk)


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
async def ask(
    question: str,
    conversation_id: int | None = None,
    include_private: IncludePrivate = False,
    source_id: int | None = None,
    selection: str | None = None,
) -> AskOut:
    """Answer a question from the person's notes, with citations ([n] markers and the passages they
    point to); says so when the notes do not hold the answer. `conversation_id` asks a follow-up.
    With `source_id` and `selection` (text of that source, as get_source gives it), the question is
    about that text: the answer reads it and the passages around it, nothing else."""
    who = current_caller()
    with tool_errors():
        about = chat_services.About.of(source_id, selection)
        question = await database_sync_to_async(chat_services.ask_admit)(
            user=who.user, question=question, conversation_id=conversation_id, about=about
        )
        answer = await chat_services.answer_collect(
            user=who.user,
            question=question,
            conversation_id=conversation_id,
            about=about,
            include_private=include_private,
        )
    return AskOut.model_validate(answer)


async def audit_calls(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Every `tools/call`, whatever its outcome (an unknown tool, bad arguments, a refusal), in the
    caller's audit log."""
    if ctx.method != "tools/call":
        return await call_next(ctx)
    params = ctx.params or {}
    error = ""
    try:
        result = await call_next(ctx)
    except Exception as exc:
        error = str(exc) or type(exc).__name__
        raise
    else:
        error = _error_of(result)
        return result
    finally:
        who = caller.get(None)
        if who is not None:
            await database_sync_to_async(audit_record)(
                user=who.user,
                action=AuditEntry.Action.TOOL_CALL,
                via=who.via,
                name=str(params.get("name", "")),
                detail=audited_arguments(params.get("arguments")),
                error=error,
            )


def _error_of(result: HandlerResult) -> str:
    """A tool call's error message if it failed (a result with `isError`), else ""."""
    data = result.model_dump(by_alias=True) if isinstance(result, BaseModel) else result
    if not isinstance(data, dict) or not data.get("isError"):
        return ""
    return " ".join(str(block.get("text", "")) for block in data.get("content", []) if isinstance(block, dict))


def audited_arguments(arguments: Any) -> dict[str, Any]:
    """A call's arguments as the audit log keeps them: short values as given, long text cut, a note's
    text only as its length."""
    if not isinstance(arguments, dict):
        return {}
    kept: dict[str, Any] = {}
    for key, value in list(arguments.items())[:10]:
        if key in UNAUDITED and isinstance(value, str):
            kept[f"{key}_chars"] = len(value)
        elif isinstance(value, bool | int | float) or value is None:
            kept[str(key)[:40]] = value
        else:
            kept[str(key)[:40]] = str(value)[:AUDITED_CHARS]
    return kept


server.middleware.append(audit_calls)
