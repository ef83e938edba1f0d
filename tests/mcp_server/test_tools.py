"""The MCP server through the SDK's own client: over streamable HTTP against the real web server (with
the worker and the scripted chat model), and over stdio against `manage.py mcp`. Each tool is called;
another person's token reaches nothing of the first's; every call lands in the caller's audit log and
on the settings page."""

import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from django.conf import settings
from django.test import Client as DjangoClient
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from accounts.models import AuditEntry, User
from accounts.services import token_create
from chat.models import Conversation
from ingestion.models import Job, Source
from ingestion.services import note_create
from tests.factories import make_answer, make_source, make_user
from tests.processes import app_env, request
from tests.scripted_model import ScriptedModel

TOOLS = {"search_notes", "get_source", "recent_activity", "add_note", "ask"}
GARDEN = "The tomatoes go in on 12 May, after the last frost, beside the basil."


@asynccontextmanager
async def http_client(url: str, token: str | None) -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP, sending `token` as the bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=180)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            yield client


def run(session: Callable[[], Awaitable[Any]]) -> Any:
    return anyio.run(session)


def payload(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    return " ".join(getattr(block, "text", "") for block in result.content)


def wait_ready(source_id: int, timeout: float = 180) -> Source:
    deadline = time.monotonic() + timeout
    while True:
        source = Source.objects.get(pk=source_id)
        if source.status in {Source.Status.READY, Source.Status.FAILED} or time.monotonic() > deadline:
            return source
        time.sleep(0.5)


@pytest.fixture
def alice(transactional_db: None) -> User:
    return make_user("alice")


def test_an_mcp_client_over_http_lists_and_calls_each_tool(
    scripted_model: ScriptedModel, web_server: str, alice: User
) -> None:
    # Processed by the worker, with real vectors: the answer's relevance gate reads them.
    garden = wait_ready(note_create(owner=alice, title="Garden plan", text=GARDEN).source_id)
    token = token_create(user=alice, name="claude desktop")
    url = f"{web_server}/mcp"

    async def session() -> dict[str, Any]:
        async with http_client(url, token) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            found = payload(await client.call_tool("search_notes", {"query": "when do the tomatoes go in"}))
            read = payload(await client.call_tool("get_source", {"source_id": garden.pk}))
            added = payload(
                await client.call_tool("add_note", {"title": "Seeds", "text": "Ordered courgette seeds from Piet."})
            )
            recent = payload(await client.call_tool("recent_activity", {"limit": 5}))
            kinds = payload(await client.call_tool("search_notes", {"query": "tomatoes", "kind": "pdf"}))
            answer = payload(await client.call_tool("ask", {"question": "When do the tomatoes go in?"}))
            about = {"source_id": garden.pk, "selection": "after the last frost,\nbeside the basil"}
            selected = payload(await client.call_tool("ask", {"question": "What is beside them?", **about}))
            stray = error_text(await client.call_tool("ask", {"question": "What?", "selection": "the basil"}))
            missing = error_text(await client.call_tool("get_source", {"source_id": 10**9}))
            return locals()

    got = run(session)
    assert got["listed"] == TOOLS
    assert got["found"]["results"][0]["source_id"] == garden.pk
    assert "12 May" in got["found"]["results"][0]["text"]
    assert got["kinds"]["results"] == []
    assert got["read"]["title"] == "Garden plan"
    assert got["read"]["passages"][0]["text"] == GARDEN
    assert not got["read"]["truncated"]
    note = Source.objects.get(pk=got["added"]["source_id"], owner=alice)
    assert note.title == "Seeds" and Job.objects.filter(pk=got["added"]["job_id"], source=note).exists()
    assert [item["source_id"] for item in got["recent"]["sources"]] == [note.pk, garden.pk]
    assert got["answer"]["conversation_id"] and got["answer"]["answer"]
    assert got["selected"]["route"] == "selection" and got["selected"]["citations"][0]["source_id"] == garden.pk
    assert "source_id" in got["stray"]  # a selection without its source is refused, and says why
    assert scripted_model.script.requests == 2  # the answers came from the chat pipeline, model and all
    assert "Not found" in got["missing"]
    assert wait_ready(note.pk).status == Source.Status.READY

    entries = list(AuditEntry.objects.filter(user=alice).order_by("created_at", "id"))
    calls = [entry for entry in entries if entry.action == AuditEntry.Action.TOOL_CALL]
    assert [entry.name for entry in calls] == [
        "search_notes", "get_source", "add_note", "recent_activity", "search_notes", "ask", "ask", "ask", "get_source",
    ]  # fmt: skip
    assert entries[0].action == AuditEntry.Action.SOURCE_ADD and entries[0].channel == AuditEntry.Channel.APP
    entries = entries[1:]  # the calls, and the note added through one
    assert {entry.channel for entry in entries} == {AuditEntry.Channel.MCP}
    assert {entry.token_label for entry in entries} == {f"claude desktop ({token[:8]}…)"}
    assert calls[0].detail == {"query": "when do the tomatoes go in"}
    assert calls[2].detail == {"title": "Seeds", "text_chars": 34}  # a note's words are not kept in the log
    assert calls[6].detail == {"question": "What is beside them?", "source_id": garden.pk, "selection_chars": 38}
    assert "Not found" in calls[-1].error and not calls[0].error
    [added] = [entry for entry in entries if entry.action == AuditEntry.Action.SOURCE_ADD]
    assert added.detail["source_id"] == note.pk and added.name == "note"
    assert got["answer"]["citations"][0]["source_id"] == garden.pk, got["answer"]

    page = DjangoClient()
    page.force_login(alice)
    html = page.get("/settings/").content.decode()
    assert html.count('class="audit-entry"') == len(entries) + 1
    assert "called <code>search_notes</code>" in html and "called <code>ask</code>" in html
    assert f"claude desktop ({token[:8]}…)" in html
    assert "added a note" in html and "Seeds</a>" in html


def test_another_token_reaches_nothing_of_the_firsts_over_http(web_server: str, alice: User) -> None:
    garden = make_source(alice, "Garden plan", GARDEN)
    conversation = make_answer(alice, [garden]).conversation_id
    mallory = make_user("mallory")
    make_source(mallory, "Mallory's list", "Buy bread and milk.")
    token = token_create(user=mallory, name="phone")
    url = f"{web_server}/mcp"

    async def session() -> dict[str, Any]:
        async with http_client(url, token) as client:
            found = payload(await client.call_tool("search_notes", {"query": "tomatoes frost basil"}))
            recent = payload(await client.call_tool("recent_activity", {}))
            read = error_text(await client.call_tool("get_source", {"source_id": garden.pk}))
            asked = error_text(await client.call_tool("ask", {"question": "When?", "conversation_id": conversation}))
            return locals()

    got = run(session)
    assert all(hit["source_id"] != garden.pk for hit in got["found"]["results"])
    assert [item["title"] for item in got["recent"]["sources"]] == ["Mallory's list"]
    assert "Not found" in got["read"] and "Garden" not in got["read"]
    assert "Not found" in got["asked"]
    assert not AuditEntry.objects.filter(user=alice).exists()  # Mallory's calls are in her log only
    assert AuditEntry.objects.filter(user=mallory, action=AuditEntry.Action.TOOL_CALL).count() == 4


def test_the_http_endpoint_refuses_without_a_valid_token_and_keeps_the_limits(web_server: str, alice: User) -> None:
    url = f"{web_server}/mcp"
    list_tools = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for token in (None, "sb_not-a-token"):
        status, body = request(url, token=token, body=list_tools)
        assert status == 401 and body["error"]["code"] == "unauthorized", (status, body)
    token = token_create(user=alice)
    # Over the request limit: refused by the web server from the headers, before the body is read.
    status, body = request(url, token=token, body={"text": "x" * (settings.MAX_REQUEST_BYTES + 10)})
    assert status == 413 and body["error"]["code"] == "request_too_large"

    async def refused_client() -> str:
        try:
            async with http_client(url, None) as client:
                await client.list_tools()
        except Exception as exc:  # the SDK reports the 401 as it sees fit; it must not connect
            return repr(exc)
        return "connected"

    assert run(refused_client) != "connected"
    assert not AuditEntry.objects.exists()


def test_the_http_endpoint_sends_the_sites_security_headers_and_refuses_other_origins(
    web_server: str, alice: User
) -> None:
    token = token_create(user=alice)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    with httpx2.Client(base_url=web_server, headers=headers) as http:
        listed = http.post("/mcp", json=body, headers={"MCP-Protocol-Version": "2025-11-25"})
        foreign = http.post("/mcp", json=body, headers={"Origin": "http://evil.example"})
    assert listed.status_code == 200, listed.text
    assert {tool["name"] for tool in listed.json()["result"]["tools"]} == TOOLS
    assert "frame-ancestors 'none'" in listed.headers["content-security-policy"]
    assert listed.headers["x-content-type-options"] == "nosniff"
    assert foreign.status_code == 403 and foreign.json()["error"]["code"] == "forbidden_origin"


def test_an_mcp_client_over_stdio_acts_for_the_named_user(scripted_model: ScriptedModel, alice: User) -> None:
    garden = make_source(alice, "Garden plan", GARDEN)
    make_source(make_user("mallory"), "Mallory's tomatoes", "Mallory's tomatoes go in on 1 June.")
    command = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp", "--user", "alice"],
        cwd=str(settings.BASE_DIR),
        env=app_env(),
    )

    async def session() -> dict[str, Any]:
        async with Client(command) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            found = payload(await client.call_tool("search_notes", {"query": "tomatoes go in"}))
            read = payload(await client.call_tool("get_source", {"source_id": garden.pk}))
            added = payload(await client.call_tool("add_note", {"text": "# Compost\nTurn the heap weekly."}))
            recent = payload(await client.call_tool("recent_activity", {"since": "2000-01-01T00:00:00"}))
            asked = payload(await client.call_tool("ask", {"question": "When do the tomatoes go in?"}))
            return locals()

    got = run(session)
    assert got["listed"] == TOOLS
    assert {hit["source_id"] for hit in got["found"]["results"]} == {garden.pk}
    assert got["read"]["passages"][0]["text"] == GARDEN
    assert Source.objects.get(pk=got["added"]["source_id"]).owner == alice
    assert [item["title"] for item in got["recent"]["sources"]] == ["Compost", "Garden plan"]
    assert Conversation.objects.get(owner=alice).pk == got["asked"]["conversation_id"] and got["asked"]["answer"]
    calls = AuditEntry.objects.filter(user=alice, action=AuditEntry.Action.TOOL_CALL).order_by("id")
    names = ("search_notes", "get_source", "add_note", "recent_activity", "ask")
    assert [(entry.name, entry.channel, entry.token_id) for entry in calls] == [
        (name, AuditEntry.Channel.STDIO, None) for name in names
    ]


def test_manage_py_mcp_refuses_an_unknown_user(db: None) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp", "--user", "nobody"],
        cwd=settings.BASE_DIR, env=app_env(), capture_output=True, text=True, timeout=120, input="",
    )  # fmt: skip
    assert done.returncode != 0 and "no user named 'nobody'" in done.stderr
    assert done.stdout == ""  # stdout is the protocol's: nothing else is written to it
