"""Asking about a calendar over the chat websocket: the days to come, and schedule questions.

The calendar is tests/data/calendar/family.ics with two events moved to dates relative to today (the
file's own dates are fixed): Mum's birthday (all day) to tomorrow, the dentist appointment to ten
days from now. The owner lives in Berlin and also has a note that merely mentions the dentist.
"""

import re
from datetime import timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from accounts.models import User
from chat.models import Message
from ingestion.models import Chunk
from tests.chat.test_consumers import answers_of, ask, chat_socket, conversation_of, session_headers
from tests.factories import ApiClient, make_user
from tests.ingestion.test_uploads import upload
from tests.scripted_model import Script, ScriptedModel

pytestmark = pytest.mark.asyncio
FAMILY = Path(__file__).resolve().parent.parent / "data" / "calendar" / "family.ics"
BERLIN = ZoneInfo("Europe/Berlin")
DENTIST_NOTE = (
    "I keep forgetting when my dentist appointment is. Floss every night the week before my dentist "
    "appointment, and keep the dentist appointment card on the fridge."
)


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html).replace("&#x27;", "'")


def _calendar_from_today() -> tuple[bytes, str]:
    """family.ics with the birthday tomorrow and the dentist ten days on; and that day as the ics writes it."""
    today = timezone.now().astimezone(BERLIN).date()
    tomorrow, after = today + timedelta(days=1), today + timedelta(days=2)
    dentist = today + timedelta(days=10)
    content = (
        FAMILY.read_bytes()
        .replace(b"DTSTART;VALUE=DATE:20261205", f"DTSTART;VALUE=DATE:{tomorrow:%Y%m%d}".encode())
        .replace(b"DTEND;VALUE=DATE:20261206", f"DTEND;VALUE=DATE:{after:%Y%m%d}".encode())
        .replace(b"DTSTART:20261210T093000Z", f"DTSTART:{dentist:%Y%m%d}T093000Z".encode())
        .replace(b"DTEND:20261210T100000Z", f"DTEND:{dentist:%Y%m%d}T100000Z".encode())
    )
    return content, f"{dentist.day} {dentist:%B %Y}"


@pytest.fixture
def planner(celery_worker: None, settings: Any) -> tuple[User, list[tuple[bytes, bytes]], str]:
    settings.CALENDAR_DAYS_BEFORE = settings.CALENDAR_DAYS_AFTER = 3650  # the file's fixed dates, whenever this runs
    user = make_user("planner")
    user.time_zone = "Europe/Berlin"
    user.save(update_fields=["time_zone"])
    api = ApiClient.for_user(user)
    content, dentist_day = _calendar_from_today()
    response = upload(api, "family.ics", content)
    assert api.wait_for_job(response.json()["job_id"])["status"] == "done"
    note = api.post("/notes", {"title": "Dentist appointment", "text": DENTIST_NOTE}).json()
    assert api.wait_for_job(note["job_id"])["status"] == "done"
    return user, session_headers(user), dentist_day


async def test_whats_on_tomorrow_lists_tomorrows_event_without_the_model(
    planner: tuple[User, list, str], scripted_model: ScriptedModel
) -> None:
    _, headers, _ = planner
    async with chat_socket(headers) as communicator:
        html = await ask(communicator, {"question": "What's on tomorrow?"})
    text = _text(html)
    assert "Mum's birthday" in text and "family" in text
    assert "Dentist" not in text and "I keep forgetting" not in text
    assert 'data-event="citation"' in html and "#chunk-" in html
    assert scripted_model.script.requests == 0  # a listing by time: no model writes it
    (answer,) = await answers_of(conversation_of(html))
    assert answer.route == Message.Route.LISTING
    cited = await database_sync_to_async(lambda: [citation.excerpt for citation in answer.citations.all()])()
    assert any(passage.startswith("Mum's birthday") for passage in cited)


async def test_another_persons_tomorrow_holds_nothing_of_the_calendar(
    planner: tuple[User, list, str], scripted_model: ScriptedModel
) -> None:
    other = await database_sync_to_async(make_user)("neighbour")
    async with chat_socket(await database_sync_to_async(session_headers)(other)) as communicator:
        html = await ask(communicator, {"question": "What's on tomorrow?"})
    assert "Mum's birthday" not in _text(html) and "Nothing in your notes is from that time" in _text(html)


async def test_when_is_my_dentist_appointment_is_answered_from_the_calendar_first(
    planner: tuple[User, list, str], scripted_model: ScriptedModel
) -> None:
    user, headers, dentist_day = planner
    scripted_model.script = Script(tokens=["Your dentist appointment is ", f"on {dentist_day} at 10:30 ", "[1]."])
    async with chat_socket(headers) as communicator:
        html = await ask(communicator, {"question": "When is my dentist appointment?"})
    system = scripted_model.script.bodies[-1]["messages"][0]["content"]  # type: ignore[index]
    first_source = system.split("[1] ", 1)[1].split("\n\n[2] ", 1)[0]
    # The appointment itself comes before the note that merely mentions the dentist and the appointment.
    assert first_source.startswith("family (") and "\nDentist appointment\n" in first_source
    assert "Smile Dental" in first_source
    assert system.index("Smile Dental") < system.index("I keep forgetting")
    assert f"on {dentist_day}" in _text(html)
    (answer,) = await answers_of(conversation_of(html))
    citations = await database_sync_to_async(lambda: list(answer.citations.all()))()
    assert [citation.source_title for citation in citations] == ["family"]
    dentist = await database_sync_to_async(Chunk.objects.get)(
        owner=user, source__kind="calendar", text__startswith="Dentist appointment"
    )
    assert citations[0].chunk_id == dentist.pk


async def test_a_repeating_event_is_answered_by_its_next_occurrence(
    planner: tuple[User, list, str], scripted_model: ScriptedModel
) -> None:
    user, headers, _ = planner
    now = timezone.now()
    lessons = await database_sync_to_async(list)(
        Chunk.objects.filter(owner=user, text__startswith="Piano lesson").order_by("occurred_at")
    )
    upcoming = [lesson for lesson in lessons if lesson.occurred_at >= now]
    if not upcoming:
        pytest.skip("the file's lessons (October to December 2026) are all past")
    scripted_model.script = Script(tokens=["Your piano lesson is on Tuesday ", "[1]."])
    async with chat_socket(headers) as communicator:
        await ask(communicator, {"question": "When is my piano lesson?"})
    system = scripted_model.script.bodies[-1]["messages"][0]["content"]  # type: ignore[index]
    first_source = system.split("[1] ", 1)[1].split("\n\n[2] ", 1)[0]
    assert first_source.endswith(upcoming[0].text)  # the next lesson's passage, dated like a note
    assert system.count("Piano lesson") == 1  # one series, told once


async def test_the_days_to_come_are_listed_in_the_order_they_happen_each_event_on_its_line(
    planner: tuple[User, list, str], scripted_model: ScriptedModel
) -> None:
    _, headers, dentist_day = planner
    async with chat_socket(headers) as communicator:
        html = await ask(communicator, {"question": "What do I have in the next 14 days?"})
    text = _text(html)
    assert text.index("Mum's birthday") < text.index("Dentist appointment, Smile Dental, 12 High Street")
    assert text.count("family (") >= 2  # the calendar's events each on a line, not the calendar once
    assert scripted_model.script.requests == 0
