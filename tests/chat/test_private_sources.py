"""Private sources (issue 22 item 5): a source marked private is left out of search, time listings,
answers (API, server-sent events, the chat socket) and the MCP tools unless the person asks to
include it; it carries a lock wherever it shows; the flag is set when adding, on the source's page
and in the API, and holds from the very next question.

Notes are processed by the real pipeline (real embeddings, the real search); the scripted model
stands in for the chat model only, so a test can read exactly what the model was shown.
"""

import io
import json
import re
import zipfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from accounts.models import User
from accounts.services import token_create
from chat import selectors as chat_selectors
from ingestion.models import Source
from ingestion.pipeline import job_process
from ingestion.services import note_create
from secondbrain import rls
from secondbrain.asgi import application
from tests.chat.test_consumers import ask, chat_socket, session_headers
from tests.factories import ApiClient, assert_error, make_answer, make_source, make_user
from tests.scripted_model import Script, ScriptedModel
from tests.test_pipeline import GARDEN_NOTE
from tests.test_row_level_security import _MANY_PASSAGES

# Committed data: answers read it on threads (and connections) of their own.
pytestmark = pytest.mark.django_db(transaction=True)

THERAPY_NOTE = """# Therapy notes

Dr Okafor thinks the panic attacks began after the move to Leeds.
The next session with Dr Okafor is on 3 June at 10:00."""
SECRET = "move to Leeds"  # words of the private note only, not of the questions
ABOUT_THERAPY = "When is the next session with Dr Okafor about the panic attacks?"
THERAPY_ANSWER = ["The next session with Dr Okafor is on 3 June at 10:00 [1]."]
LOCK = 'class="lock"'


def processed(owner: User, text: str, *, private: bool = False) -> Source:
    """A note stored and processed (chunked, embedded) as the worker would."""
    job = note_create(owner=owner, text=text, private=private)
    job_process(job_id=job.pk)
    source = Source.objects.get(pk=job.source_id)
    assert source.status == Source.Status.READY
    return source


@pytest.fixture
def notes(user: User) -> tuple[Source, Source]:
    """Alice's garden plan, and her therapy notes, private."""
    return processed(user, GARDEN_NOTE), processed(user, THERAPY_NOTE, private=True)


def found(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.content
    return list(response.json()["results"])


def prompts(model: ScriptedModel) -> str:
    return json.dumps(model.script.bodies)


# ---------------------------------------------------------------------------------------------------
# Search and time listings


def test_search_leaves_a_private_source_out_unless_asked_to_include_it(
    api: ApiClient, notes: tuple[Source, Source]
) -> None:
    garden, therapy = notes
    left_out = found(api.get("/search", q="panic attacks after the move to Leeds"))
    included = found(api.get("/search", q="panic attacks after the move to Leeds", include_private="true"))

    assert left_out and therapy.pk not in {hit["source_id"] for hit in left_out}
    assert not any(hit["private"] for hit in left_out)
    assert included[0]["source_id"] == therapy.pk and included[0]["private"] is True
    assert SECRET in included[0]["text"]


def test_a_time_listing_leaves_private_sources_out_unless_included(
    api: ApiClient, notes: tuple[Source, Source]
) -> None:
    garden, therapy = notes
    response = api.get("/search", q="What did I add today?")
    assert response.json()["mode"] == "temporal"
    assert {hit["source_id"] for hit in found(response)} == {garden.pk}
    included = found(api.get("/search", q="What did I add today?", include_private=True))
    assert {hit["source_id"] for hit in included} == {garden.pk, therapy.pk}


def test_a_source_made_private_is_left_out_of_the_next_search_and_back_when_made_searchable(
    user: User, api: ApiClient
) -> None:
    therapy = processed(user, THERAPY_NOTE)
    query = "panic attacks after the move to Leeds"
    assert found(api.get("/search", q=query))[0]["source_id"] == therapy.pk

    made_private = api.patch(f"/sources/{therapy.pk}", {"private": True})
    assert made_private.status_code == 200 and made_private.json()["private"] is True
    assert therapy.pk not in {hit["source_id"] for hit in found(api.get("/search", q=query))}
    assert api.get(f"/sources/{therapy.pk}").json()["private"] is True  # its owner still reaches it

    assert api.patch(f"/sources/{therapy.pk}", {}).json()["private"] is True  # nothing asked, nothing changed
    assert api.patch(f"/sources/{therapy.pk}", {"private": False}).json()["private"] is False
    assert found(api.get("/search", q=query))[0]["source_id"] == therapy.pk


def test_another_user_cannot_change_my_sources_flag(user: User, api: ApiClient, other_api: ApiClient) -> None:
    therapy = processed(user, THERAPY_NOTE)
    assert_error(other_api.patch(f"/sources/{therapy.pk}", {"private": True}), 404, "not_found")
    page = Client()
    page.force_login(make_user("eve"))
    assert page.post(f"/sources/{therapy.pk}/private/", {"private": "true"}).status_code == 404
    therapy.refresh_from_db()
    assert therapy.private is False


def test_a_flag_that_is_not_a_yes_or_no_is_refused_and_changes_nothing(user: User, api: ApiClient) -> None:
    therapy = processed(user, THERAPY_NOTE)
    response = api.patch(f"/sources/{therapy.pk}", {"private": "perhaps"})
    assert_error(response, 422, "invalid_request")
    assert "private" in response.json()["error"]["message"]
    page = Client()
    page.force_login(user)
    refused = page.post(f"/sources/{therapy.pk}/private/", {"private": "perhaps"})
    assert refused.status_code == 422 and "true" in refused.content.decode()
    therapy.refresh_from_db()
    assert therapy.private is False


def test_notes_and_files_are_added_private_from_the_api_and_the_page(user: User, api: ApiClient) -> None:
    note = api.post("/notes", {"text": "Salary negotiation: ask for 10 % more.", "private": True})
    assert note.status_code == 202, note.content
    upload = api.client.post(
        "/api/uploads",
        {"file": SimpleUploadedFile("diary.md", b"# Diary\n\nA quiet day."), "private": "true"},
        headers=api._headers(),
    )
    assert upload.status_code == 202, upload.content
    public = api.post("/notes", {"text": "Buy more compost."})
    page = Client()
    page.force_login(user)
    page.post("/notes/", {"text": "Blood test results: all fine.", "private": "on"})
    page.post("/uploads/", {"file": SimpleUploadedFile("letter.md", b"# Letter\n\nDear Sam."), "private": "true"})

    private = {source.title for source in Source.objects.filter(owner=user, private=True)}
    assert private == {"Salary negotiation: ask for 10 % more.", "diary", "Blood test results: all fine.", "letter"}
    assert Source.objects.get(pk=public.json()["source_id"]).private is False
    listed = {source["title"]: source["private"] for source in api.get("/sources").json()}
    assert listed["diary"] is True and listed["Buy more compost."] is False


# ---------------------------------------------------------------------------------------------------
# Answers


def test_ask_leaves_a_private_source_out_of_the_answer_unless_included(
    api: ApiClient, notes: tuple[Source, Source], scripted_model: ScriptedModel
) -> None:
    garden, therapy = notes
    scripted_model.script = Script(tokens=THERAPY_ANSWER)
    left_out = api.post("/ask", {"question": ABOUT_THERAPY})
    assert left_out.status_code == 200, left_out.content
    assert therapy.pk not in {citation["source_id"] for citation in left_out.json()["citations"]}
    assert SECRET not in prompts(scripted_model) and "3 June" not in left_out.json()["answer"]

    included = api.post("/ask", {"question": ABOUT_THERAPY, "include_private": True}).json()
    assert not included["abstained"], included
    [citation] = included["citations"]
    assert citation["source_id"] == therapy.pk and citation["private"] is True
    assert SECRET in prompts(scripted_model)


async def joined(chunks: AsyncIterator[bytes]) -> bytes:
    return b"".join([chunk async for chunk in chunks])


def test_ask_as_server_sent_events_includes_private_sources_only_when_asked(
    api: ApiClient, notes: tuple[Source, Source], scripted_model: ScriptedModel
) -> None:
    garden, therapy = notes
    scripted_model.script = Script(tokens=THERAPY_ANSWER)

    def done_event(body: dict[str, Any]) -> dict[str, Any]:
        response = api.client.post(
            "/api/ask",
            json.dumps(body),
            content_type="application/json",
            headers={**api._headers(), "Accept": "text/event-stream"},
        )
        stream = async_to_sync(joined)(response.streaming_content).decode()  # type: ignore[attr-defined]
        return dict(json.loads(re.findall(r"event: done\ndata: (.*)\n", stream)[-1]))

    left_out = done_event({"question": ABOUT_THERAPY})
    assert therapy.pk not in {citation["source_id"] for citation in left_out["citations"]}
    included = done_event({"question": ABOUT_THERAPY, "include_private": True})
    assert [(c["source_id"], c["private"]) for c in included["citations"]] == [(therapy.pk, True)]


def test_the_chat_lists_private_sources_of_a_day_only_when_included(
    notes: tuple[Source, Source], api: ApiClient, scripted_model: ScriptedModel
) -> None:
    garden, therapy = notes
    listing = api.post("/ask", {"question": "What did I add today?"}).json()
    assert [citation["source_id"] for citation in listing["citations"]] == [garden.pk]
    assert "Therapy" not in listing["answer"]
    included = api.post("/ask", {"question": "What did I add today?", "include_private": True}).json()
    assert {citation["source_id"] for citation in included["citations"]} == {garden.pk, therapy.pk}


@pytest.mark.asyncio
async def test_the_chat_socket_cites_a_private_source_with_a_lock_only_when_the_box_is_ticked(
    user: User, notes: tuple[Source, Source], scripted_model: ScriptedModel
) -> None:
    garden, therapy = notes
    scripted_model.script = Script(tokens=THERAPY_ANSWER)
    async with chat_socket(await database_sync_to_async(session_headers)(user)) as communicator:
        left_out = await ask(communicator, {"question": ABOUT_THERAPY})
        shown = prompts(scripted_model)
        # A form's unticked box is absent; a ticked one arrives as its value.
        included = await ask(communicator, {"question": ABOUT_THERAPY, "include_private": "true"})
    assert "Therapy notes" not in left_out and LOCK not in left_out and SECRET not in shown
    cards = re.findall(r'<div class="citations".*?</div>', included, re.S)
    assert any("Therapy notes" in card and LOCK in card for card in cards), cards


def test_an_answer_keeps_its_citations_when_a_source_is_made_private_shown_with_a_lock(
    user: User, api: ApiClient
) -> None:
    therapy = processed(user, THERAPY_NOTE)
    answer = make_answer(user, [therapy], question="When is the next session?")
    page = Client()
    page.force_login(user)
    assert LOCK not in page.get(f"/chat/{answer.conversation_id}/").content.decode()

    api.patch(f"/sources/{therapy.pk}", {"private": True})

    html = page.get(f"/chat/{answer.conversation_id}/").content.decode()
    card = re.search(r'<a class="citation" id="cite-.*?</a>', html, re.S)
    assert card and "Therapy notes" in card.group() and LOCK in card.group()


def test_an_answer_citing_a_private_source_is_remembered_as_a_private_note(user: User, api: ApiClient) -> None:
    garden, therapy = processed(user, GARDEN_NOTE), processed(user, THERAPY_NOTE, private=True)
    from_private = make_answer(user, [garden, therapy], question="When is the next session?")
    from_public = make_answer(user, [garden], question="When do the tomatoes go in?")
    private_note = api.post(f"/messages/{from_private.pk}/remember").json()
    public_note = api.post(f"/messages/{from_public.pk}/remember").json()
    assert Source.objects.get(pk=private_note["source_id"]).private is True
    assert Source.objects.get(pk=public_note["source_id"]).private is False


# ---------------------------------------------------------------------------------------------------
# Pages


def title(html: str) -> str:
    heading = re.search(r"<h1>.*?</h1>", html, re.S)
    assert heading
    return heading.group()


def test_the_lock_on_a_source_page_makes_it_private_and_searchable_again(user: User, api: ApiClient) -> None:
    therapy = processed(user, THERAPY_NOTE)
    page = Client()
    page.force_login(user)
    assert "Make private" in page.get(f"/sources/{therapy.pk}/").content.decode()

    header = page.post(f"/sources/{therapy.pk}/private/", {"private": "true"}, headers={"HX-Request": "true"})
    assert header.status_code == 200
    html = header.content.decode()
    assert html.lstrip().startswith('<header class="source-head"') and "Make searchable" in html
    assert LOCK in title(html) and LOCK in title(page.get(f"/sources/{therapy.pk}/").content.decode())
    therapy.refresh_from_db()
    assert therapy.private
    row = re.search(rf'<li class="source" id="source-{therapy.pk}">.*?</li>', page.get("/").content.decode(), re.S)
    assert row and LOCK in row.group()

    again = page.post(f"/sources/{therapy.pk}/private/", {"private": "false"})  # without htmx: the page again
    assert again.status_code == 302 and again["Location"] == f"/sources/{therapy.pk}/"
    assert LOCK not in title(page.get(f"/sources/{therapy.pk}/").content.decode())
    therapy.refresh_from_db()
    assert not therapy.private


def test_the_search_page_includes_private_sources_when_ticked_with_a_lock(
    user: User, notes: tuple[Source, Source]
) -> None:
    page = Client()
    page.force_login(user)
    query = {"q": "panic attacks after the move to Leeds"}
    left_out = page.get("/search/", query).content.decode()
    included = page.get("/search/", {**query, "include_private": "on"}).content.decode()
    assert "Therapy notes" not in left_out
    first = re.search(r'<li class="result">.*?</li>', included, re.S)
    assert first and "Therapy notes" in first.group() and LOCK in first.group()


# ---------------------------------------------------------------------------------------------------
# The MCP tools


@asynccontextmanager
async def mcp_client(token: str) -> AsyncIterator[McpClient]:
    """The SDK's client against the real ASGI application, in this process."""
    transport = httpx2.ASGITransport(app=application)
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(transport=transport, base_url="http://testserver", headers=headers) as http,
        McpClient(streamable_http_client("http://testserver/mcp", http_client=http)) as client,
    ):
        yield client


def result(called: CallToolResult) -> dict[str, Any]:
    assert not called.is_error, called.content
    assert called.structured_content is not None
    return called.structured_content


@pytest.mark.asyncio
async def test_the_mcp_tools_leave_private_sources_out_unless_included(
    user: User, notes: tuple[Source, Source], scripted_model: ScriptedModel
) -> None:
    garden, therapy = notes
    token = await database_sync_to_async(token_create)(user=user, name="assistant")
    scripted_model.script = Script(tokens=THERAPY_ANSWER)
    query = {"query": "panic attacks after the move to Leeds"}
    async with mcp_client(token) as client:
        searched = result(await client.call_tool("search_notes", query))
        searched_all = result(await client.call_tool("search_notes", {**query, "include_private": True}))
        hidden = await client.call_tool("get_source", {"source_id": therapy.pk})
        read = result(await client.call_tool("get_source", {"source_id": therapy.pk, "include_private": True}))
        recent = result(await client.call_tool("recent_activity", {}))
        recent_all = result(await client.call_tool("recent_activity", {"include_private": True}))
        answered = result(await client.call_tool("ask", {"question": ABOUT_THERAPY}))
        answered_all = result(await client.call_tool("ask", {"question": ABOUT_THERAPY, "include_private": True}))

    assert therapy.pk not in {hit["source_id"] for hit in searched["results"]}
    assert searched_all["results"][0]["source_id"] == therapy.pk and searched_all["results"][0]["private"]
    assert hidden.is_error and "Not found" in " ".join(getattr(block, "text", "") for block in hidden.content)
    assert read["private"] and SECRET in read["passages"][0]["text"]
    assert [item["source_id"] for item in recent["sources"]] == [garden.pk]
    assert [item["source_id"] for item in recent_all["sources"]] == [therapy.pk, garden.pk]
    assert therapy.pk not in {citation["source_id"] for citation in answered["citations"]}
    assert [citation["source_id"] for citation in answered_all["citations"]] == [therapy.pk]


def test_a_search_leaving_private_sources_out_still_reads_the_owners_indexes(user: User) -> None:
    """The filter sits beside the owner's on the passages the indexes return: the terms index (GIN)
    still answers the full-text side, under row-level security as the app runs."""
    public, private = make_source(user, "Notes", "A first note."), make_source(user, "Diary", "A private note.")
    Source.objects.filter(pk=private.pk).update(private=True)
    with connection.cursor() as cursor:
        cursor.execute(_MANY_PASSAGES)
        cursor.execute("ANALYZE ingestion_chunk")
    statements: list[tuple[str, Any]] = []

    def keep(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with rls.owner_scope(user.pk):
        with connection.execute_wrapper(keep):
            hits = chat_selectors.search(owner_id=user.pk, query="the roofer's budget", k=5)
        sql, params = next((sql, params) for sql, params in statements if "postings" in sql)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute(f"EXPLAIN {sql}", params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
    assert hits and {hit.source_id for hit in hits} == {public.pk}
    assert params["hidden"] == [private.pk] and "<> ALL" in plan
    assert "Index Scan on chunk_owner_terms_gin" in plan, plan


def test_an_exported_private_note_added_again_stays_private(user: User, api: ApiClient) -> None:
    therapy = processed(user, THERAPY_NOTE, private=True)
    garden = processed(user, GARDEN_NOTE)
    response = api.get("/export")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    manifest = {source["id"]: source for source in json.loads(archive.read("manifest.json"))["sources"]}
    assert manifest[therapy.pk]["private"] is True and manifest[garden.pk]["private"] is False
    exported = archive.read(manifest[therapy.pk]["path"])
    assert b"\nprivate: true\n" in exported

    newcomer = ApiClient.for_user(make_user("newcomer"))  # the same archive, added on another server
    again = newcomer.client.post(
        "/api/uploads", {"file": SimpleUploadedFile("therapy.md", exported)}, headers=newcomer._headers()
    )
    assert again.status_code == 202, again.content
    added = Source.objects.get(pk=again.json()["source_id"])
    assert added.private and added.title == "Therapy notes" and "private" not in added.text


def test_the_command_line_adds_private_files_and_asks_with_them_only_when_told(
    user: User, tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    (tmp_path / "therapy.md").write_text(THERAPY_NOTE)
    call_command("ingest", str(tmp_path), "--user", user.username, stdout=io.StringIO(), stderr=io.StringIO())
    assert Source.objects.get(owner=user).private is False
    Source.objects.filter(owner=user).delete()
    call_command("ingest", str(tmp_path), "--user", user.username, "--private",
                 stdout=io.StringIO(), stderr=io.StringIO())  # fmt: skip
    therapy = Source.objects.get(owner=user)
    assert therapy.private
    job_process(job_id=therapy.jobs.get().pk)  # processed here: no worker runs in this test

    scripted_model.script = Script(tokens=THERAPY_ANSWER)
    left_out, included = io.StringIO(), io.StringIO()
    call_command("ask", ABOUT_THERAPY, user=user.username, stdout=left_out)
    call_command("ask", ABOUT_THERAPY, "--include-private", user=user.username, stdout=included)
    assert "Therapy notes" not in left_out.getvalue() and "3 June" not in left_out.getvalue()
    assert "Therapy notes" in included.getvalue() and "3 June" in included.getvalue()
