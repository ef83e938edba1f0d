"""Ask about this: a question about text selected in a source is answered from that text and the
passages around it — nothing from any other source, even one that matches the question better — and
says so when they do not hold the answer.

Notes go through the real pipeline (Celery worker, chunking, embeddings); the scripted model server
stands in for the model, so a test can read the prompt it was sent and choose what it answers.
"""

import io
import json
import urllib.error
import zipfile
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.core.management import CommandError, call_command

from accounts.models import User
from chat import selectors, services
from chat.models import Message
from ingestion.models import Chunk
from secondbrain.errors import AppError
from tests.chat.test_consumers import chat_socket, receive_until, session_headers
from tests.chat.test_sse import post, read_events
from tests.chat.test_trust import events_of
from tests.factories import ApiClient, assert_error, make_source, make_user
from tests.scripted_model import Script, ScriptedModel

pytestmark = pytest.mark.django_db(transaction=True)

# Five paragraphs of 35–45 words: each its own passage (ingestion/chunking.py packs up to 60 words).
TRIP = [
    "We landed in Lisbon on Friday evening and took the metro from the airport to Baixa. The hotel on Rua "
    "Augusta had a small balcony over the street, and the receptionist recommended a fado bar in Alfama for "
    "the first night.",
    "On Saturday we walked up to the castle early to beat the crowds. The view over the red roofs and the "
    "river was worth the climb, and we had custard tarts at a tiny bakery near the gate.",
    "Ana booked the tram 28 tickets for Sunday morning, but the line was closed for repairs, so we took a "
    "tuk-tuk instead. The driver, Miguel, told us the whole route would reopen in October.",
    "In the afternoon we crossed the river on the ferry to Cacilhas and ate grilled sardines at a restaurant "
    "on the pier. The ferry ride cost less than two euros each way.",
    "On Monday we took the train to Sintra and visited the Pena Palace. It rained all day, and we were back "
    "in Lisbon by six for our flight home.",
]
TRIP_NOTE = "# Lisbon trip\n\n" + "\n\n".join(TRIP)
# Another source of the same person's, which answers the question far better than the selection does.
TRAM_NOTE = "# Tram news\n\nThe tram 28 line reopens on 14 March after the track repairs, the transport office said."
SELECTED = "Ana booked the tram 28 tickets for Sunday morning, but the line was closed for repairs"
QUESTION = "When does the tram line reopen?"


def note(api: ApiClient, text: str) -> int:
    body = api.post("/notes", {"text": text}).json()
    assert api.wait_for_job(body["job_id"])["status"] == "done"
    return int(body["source_id"])


@pytest.fixture
def traveller(celery_worker: None) -> tuple[User, ApiClient, int]:
    user = make_user("traveller")
    api = ApiClient.for_user(user)
    trip = note(api, TRIP_NOTE)
    note(api, TRAM_NOTE)
    return user, api, trip


def system_prompt(model: ScriptedModel) -> str:
    messages: Any = model.script.bodies[-1]["messages"]
    return str(messages[0]["content"])


def test_the_answer_reads_the_selection_and_its_neighbours_and_nothing_else(
    traveller: tuple[User, ApiClient, int], scripted_model: ScriptedModel
) -> None:
    user, api, trip = traveller
    scripted_model.script = Script(tokens=["Miguel said the whole route ", "would reopen in October [1]."])
    # Selected across a line break of the page: whitespace is not the text.
    response = api.post("/ask", {"question": QUESTION, "source_id": trip, "selection": SELECTED.replace(" ", "\n", 3)})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["route"] == "selection" and not body["abstained"], body
    assert "October" in body["answer"], body
    assert body["citations"] and {c["source_id"] for c in body["citations"]} == {trip}, body["citations"]

    prompt = system_prompt(scripted_model)
    assert SELECTED in prompt  # the selection itself, shown as what the question is about
    assert "[1] Lisbon trip" in prompt and TRIP[2] in prompt  # its passage first
    assert TRIP[1] in prompt and TRIP[3] in prompt  # the passages just before and after it
    # Not the rest of the source, and nothing of the note that answers the question better.
    assert TRIP[0] not in prompt and TRIP[4] not in prompt
    assert "14 March" not in prompt and "Tram news" not in prompt
    messages: Any = scripted_model.script.bodies[-1]["messages"]
    assert messages[-1] == {"role": "user", "content": QUESTION}

    # The conversation keeps what was asked about, on the question and in the answer's trace.
    answer = Message.objects.get(conversation_id=body["conversation_id"], role=Message.Role.ASSISTANT)
    question = Message.objects.get(conversation_id=body["conversation_id"], role=Message.Role.USER)
    assert answer.route == Message.Route.SELECTION and answer.trace["route"] == "selection"
    for kept in (answer.trace["selection"], question.trace["selection"]):
        assert kept["source_id"] == trip and kept["source_title"] == "Lisbon trip" and kept["text"] == SELECTED
    assert [passage["chunk_id"] for passage in answer.trace["passages"]][0] == kept["chunk_ids"][0]

    # So does the export of everything.
    archive = zipfile.ZipFile(io.BytesIO(b"".join(api.get("/export").streaming_content)))
    [exported] = [json.loads(archive.read(name)) for name in archive.namelist() if name.startswith("conversations/")]
    assert [message["selection"] for message in exported["messages"]] == [
        {"source_id": trip, "source_title": "Lisbon trip", "text": SELECTED},
        {"source_id": trip, "source_title": "Lisbon trip", "text": SELECTED},
    ]

    # The conversation page shows the selected text above the question, linked to its passage.
    client = api.client
    client.force_login(user)
    page = client.get(f"/chat/{body['conversation_id']}/").content.decode()
    assert (
        f'<blockquote class="selection"><a class="from" href="/sources/{trip}/#chunk-{kept["chunk_ids"][0]}">' in page
    )
    assert SELECTED in page


def test_the_same_words_elsewhere_in_the_source_are_read_where_they_were_selected(
    traveller: tuple[User, ApiClient, int], scripted_model: ScriptedModel
) -> None:
    """The words "the river" stand in the second passage and the fourth: where they were selected wins."""
    user, api, trip = traveller
    ids = selectors.selection_find(owner_id=user.pk, source_id=trip, text=TRIP[3]).chunk_ids
    scripted_model.script = Script(tokens=["You crossed the river on the ferry to Cacilhas [1]."])
    body = api.post(
        "/ask", {"question": "Where did we go?", "source_id": trip, "selection": "the river", "chunk_id": ids[0]}
    ).json()
    prompt = system_prompt(scripted_model)
    assert TRIP[3] in prompt and TRIP[2] in prompt and TRIP[4] in prompt and TRIP[1] not in prompt
    assert body["citations"][0]["chunk_id"] == ids[0], body
    # Without it, the first place the words stand.
    api.post("/ask", {"question": "Where did we go?", "source_id": trip, "selection": "the river"})
    prompt = system_prompt(scripted_model)
    assert TRIP[1] in prompt and TRIP[0] in prompt and TRIP[2] in prompt and TRIP[4] not in prompt


def test_a_selection_across_two_passages_makes_both_primary(
    traveller: tuple[User, ApiClient, int], scripted_model: ScriptedModel
) -> None:
    user, api, trip = traveller
    across = "a tiny bakery near the gate.\n\nAna booked the tram 28 tickets"
    selection = selectors.selection_find(owner_id=user.pk, source_id=trip, text=across)
    assert len(selection.chunk_ids) == 2
    scripted_model.script = Script(tokens=["You had custard tarts at a tiny bakery near the gate [1]."])
    api.post("/ask", {"question": "What did we eat?", "source_id": trip, "selection": across})
    prompt = system_prompt(scripted_model)
    assert "(in source [1], [2])" in prompt
    assert all(paragraph in prompt for paragraph in TRIP[:4]) and TRIP[4] not in prompt


@pytest.mark.parametrize(
    ("model_says", "abstained_by"),
    [
        (["I couldn't find that in your notes."], "model"),
        # What the other note says, cited as if the selection said it: no passage it read supports it.
        (["The budget for the castle museum is forty thousand euros [1]."], "check"),
    ],
)
def test_an_answer_beyond_the_selection_abstains_and_says_so(
    traveller: tuple[User, ApiClient, int], scripted_model: ScriptedModel, model_says: list[str], abstained_by: str
) -> None:
    user, api, trip = traveller
    scripted_model.script = Script(tokens=model_says)
    body = api.post(
        "/ask", {"question": "How much is the museum budget?", "source_id": trip, "selection": SELECTED}
    ).json()
    assert body["abstained"] and body["citations"] == [], body
    assert body["answer"] == "I couldn't find that in the selected text or the passages around it."
    answer = Message.objects.get(conversation_id=body["conversation_id"], role=Message.Role.ASSISTANT)
    assert answer.citation_check["abstained_by"] == abstained_by
    # The closest passages shown beside it are the selection's, not the rest of the notes'.
    assert {hit["source_id"] for hit in answer.trace["nearest"]} == {trip}


def test_regenerate_answers_about_the_same_selection_and_deleting_the_source_forgets_it(
    traveller: tuple[User, ApiClient, int], scripted_model: ScriptedModel
) -> None:
    user, api, trip = traveller
    scripted_model.script = Script(tokens=["Miguel said it would reopen in October [1]."])
    first = api.post("/ask", {"question": QUESTION, "source_id": trip, "selection": SELECTED}).json()
    scripted_model.script = Script(tokens=["The driver said the route would reopen in October [1]."])
    done = events_of(user=user, question="", conversation_id=first["conversation_id"], regenerate=True)[-1]
    assert done["route"] == "selection" and "October" in done["answer"], done
    assert SELECTED in system_prompt(scripted_model) and "14 March" not in system_prompt(scripted_model)

    assert api.delete(f"/sources/{trip}").status_code == 204
    for message in Message.objects.filter(conversation_id=first["conversation_id"]):
        assert SELECTED not in str(message.trace), message.trace
        assert message.trace["selection"]["source_id"] is None
    with pytest.raises(AppError) as refused:
        events_of(user=user, question="", conversation_id=first["conversation_id"], regenerate=True)
    assert refused.value.code == "source_deleted"


def test_someone_elses_source_is_404_and_a_selection_not_in_the_source_422(
    user: User, api: ApiClient, other_user: User, scripted_model: ScriptedModel
) -> None:
    mine = make_source(user, "Budget", "The budget for the kitchen is forty-two thousand.")
    theirs = make_source(other_user, "Secret plan", "The surprise party is on Friday at the lake house.")

    def ask(**body: Any) -> Any:
        return api.post("/ask", {"question": "What is this about?", **body})

    for response in (ask(source_id=theirs.pk, selection="The surprise party"), ask(source_id=10**9, selection="x")):
        assert_error(response, 404, "not_found")
        assert "surprise" not in response.content.decode()
    assert_error(ask(source_id=mine.pk, selection="The surprise party is on Friday"), 422, "selection_not_in_source")
    refused = ask(source_id=mine.pk, selection="forty-two thousand dollars")
    assert refused.json()["error"]["message"] == (
        "The selected text is not in this source. Select it again on the source's page."
    )
    assert_error(ask(source_id=mine.pk, selection=" \n "), 422, "empty_selection")
    assert_error(ask(source_id=mine.pk, selection="x" * (services.SELECTION_MAX_CHARS + 1)), 422, "selection_too_long")
    assert_error(ask(selection="The budget"), 422, "missing_source")
    assert_error(ask(source_id=mine.pk), 422, "empty_selection")
    # Refused before anything was stored or asked.
    assert not Message.objects.exists() and scripted_model.script.requests == 0


def test_a_calendars_events_are_asked_about_one_at_a_time(user: User) -> None:
    """A calendar's passages are events of their own: the one selected is read without the events beside it."""
    calendar = make_source(user, "Calendar", "Dentist appointment\nPlace: Smile Dental")
    first = calendar.chunks.get()
    first.anchor = {"when": "Tue 1 Dec 2026, 09:00", "at": "2026-12-01T09:00:00+00:00"}
    first.save(update_fields=["anchor"])
    for ordinal, text in ((1, "Piano lesson\nPlace: Music school"), (2, "Team lunch\nPlace: Canteen")):
        Chunk.objects.create(
            source=calendar, owner=user, ordinal=ordinal, text=text, occurred_at=first.occurred_at,
            anchor={"when": "Tue 1 Dec 2026, 12:00", "at": "2026-12-01T12:00:00+00:00"}, embedding=first.embedding,
        )  # fmt: skip
    selection = selectors.selection_find(owner_id=user.pk, source_id=calendar.pk, text="Piano lesson")
    assert [hit.text for hit in selectors.selection_passages(owner_id=user.pk, selection=selection)] == [
        "Piano lesson\nPlace: Music school"
    ]
    # A note's passage is read with the ones around it.
    note = make_source(user, "Note", "The middle paragraph.")
    middle = note.chunks.get()
    Chunk.objects.filter(pk=middle.pk).update(ordinal=1)
    for ordinal, text in ((0, "The first paragraph."), (2, "The last paragraph.")):
        Chunk.objects.create(
            source=note, owner=user, ordinal=ordinal, text=text, occurred_at=middle.occurred_at,
            anchor={}, embedding=middle.embedding,
        )  # fmt: skip
    selection = selectors.selection_find(owner_id=user.pk, source_id=note.pk, text="middle")
    assert [hit.text for hit in selectors.selection_passages(owner_id=user.pk, selection=selection)] == [
        "The middle paragraph.",
        "The first paragraph.",
        "The last paragraph.",
    ]


@pytest.mark.asyncio
async def test_the_chat_socket_asks_about_a_selection_and_says_why_it_cannot(
    user: User, scripted_model: ScriptedModel
) -> None:
    source = await database_sync_to_async(make_source)(user, "Budget", "We agreed on forty thousand for the kitchen.")
    headers = await database_sync_to_async(session_headers)(user)
    scripted_model.script = Script(tokens=["You agreed on forty thousand for the kitchen [1]."])
    async with chat_socket(headers) as socket:
        await socket.send_json_to({"question": "What is this?", "source_id": str(source.pk), "selection": "fifty"})
        refused = await socket.receive_from(timeout=30)
        assert 'data-code="selection_not_in_source"' in refused
        assert "The selected text is not in this source. Select it again on the source&#x27;s page." in refused
        # Its Retry asks about the same selection again.
        assert f'name="source_id" value="{source.pk}"' in refused and 'name="selection" value="fifty"' in refused

        await socket.send_json_to(
            {"question": "What did we agree?", "source_id": str(source.pk), "selection": "forty  thousand"}
        )
        messages = await receive_until(socket, 'data-event="done"', timeout=60)
    start = messages[0]
    assert '<blockquote class="selection">' in start and "forty thousand</blockquote>What did we agree?" in start
    assert any(f'href="/sources/{source.pk}/#chunk-' in message for message in messages)


def test_the_streamed_api_asks_about_a_selection_and_refuses_before_streaming(
    traveller: tuple[User, ApiClient, int], scripted_model: ScriptedModel, web_server: str
) -> None:
    user, api, trip = traveller
    scripted_model.script = Script(tokens=["Miguel said it would reopen ", "in October [1]."])
    body = {"question": QUESTION, "source_id": trip, "selection": SELECTED}
    with post(f"{web_server}/api/ask", body, api.token) as response:
        events = read_events(response)
    start, done = events[0][2], events[-1][2]
    assert start["selection"]["text"] == SELECTED and start["selection"]["source_id"] == trip
    assert done["route"] == "selection" and "October" in done["answer"] and done["citations"], done
    with pytest.raises(urllib.error.HTTPError) as refused:
        post(f"{web_server}/api/ask", {**body, "selection": "the line reopens in March"}, api.token)
    assert refused.value.code == 422
    assert json.loads(refused.value.read())["error"]["code"] == "selection_not_in_source"


def test_the_command_line_asks_about_a_selection_and_refuses_one_not_in_the_source(
    traveller: tuple[User, ApiClient, int], scripted_model: ScriptedModel
) -> None:
    user, _, trip = traveller
    scripted_model.script = Script(tokens=["Miguel said it would reopen ", "in October [1]."])
    out = io.StringIO()
    call_command("ask", QUESTION, user=user.username, source=trip, selection=SELECTED, stdout=out)
    printed = out.getvalue()
    assert "in October" in printed and "Lisbon trip" in printed, printed  # the answer, then its source
    prompt = system_prompt(scripted_model)
    assert SELECTED in prompt and "14 March" not in prompt  # the selection's passages only
    assert Message.objects.get(role=Message.Role.ASSISTANT).route == Message.Route.SELECTION

    refusals: list[tuple[dict[str, Any], str]] = [
        ({"source": trip, "selection": "the line reopens in March"}, "selection_not_in_source"),
        ({"selection": "Ana booked the tram"}, "missing_source"),
        (
            {"source": make_source(make_user("stranger"), "Theirs", "Ana booked the tram.").pk, "selection": "Ana"},
            "not_found",
        ),
    ]
    for options, reason in refusals:
        with pytest.raises(CommandError, match=reason):
            call_command("ask", QUESTION, user=user.username, stdout=io.StringIO(), **options)
    assert scripted_model.script.requests == 1  # refused before the model was asked
