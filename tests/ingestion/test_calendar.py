"""Calendars (.ics): each event of the window one passage at its start, through the real worker.

tests/data/calendar/family.ics holds a weekly lesson set in London time (ten Tuesdays, one of them
cancelled by an EXDATE, across the October change to winter time), an all-day birthday, a call set in
New York time, and a dentist appointment in UTC. The person reading it lives in Berlin.
"""

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command
from django.test import Client

from accounts.models import User
from ingestion.extract import calendar
from ingestion.models import Chunk, Source
from secondbrain.errors import AppError
from tests.factories import ApiClient, make_user
from tests.ingestion.test_uploads import upload

FAMILY = Path(__file__).resolve().parent.parent / "data" / "calendar" / "family.ics"
BERLIN = ZoneInfo("Europe/Berlin")
LONDON = ZoneInfo("Europe/London")


@pytest.fixture
def wide_window(settings: Any) -> None:
    """The file's events are in late 2026: read ten years either side of the upload, whenever this runs."""
    settings.CALENDAR_DAYS_BEFORE = settings.CALENDAR_DAYS_AFTER = 3650


@pytest.fixture
def berliner(transactional_db: None) -> User:
    user = make_user("berliner")
    user.time_zone = "Europe/Berlin"
    user.save(update_fields=["time_zone"])
    return user


def events_of(source_id: int) -> list[Chunk]:
    return list(Chunk.objects.filter(source_id=source_id).order_by("ordinal"))


@pytest.mark.django_db(transaction=True)
def test_an_uploaded_calendar_becomes_one_passage_per_event_at_its_start(
    berliner: User, celery_worker: None, wide_window: None
) -> None:
    api = ApiClient.for_user(berliner)
    response = upload(api, "family.ics", FAMILY.read_bytes())
    assert response.status_code == 202, response.content
    job = api.wait_for_job(response.json()["job_id"])
    assert job["status"] == "done", job
    source = Source.objects.get(pk=response.json()["source_id"])
    assert (source.kind, source.mime_type, source.metadata["events"]) == ("calendar", "text/calendar", 12)
    chunks = events_of(source.pk)
    assert [chunk.occurred_at for chunk in chunks] == sorted(chunk.occurred_at for chunk in chunks)

    lessons = [chunk for chunk in chunks if chunk.text.startswith("Piano lesson")]
    # Every Tuesday at 17:00 in London, before and after the clocks went back on 25 October; not 10 November.
    assert [lesson.occurred_at.astimezone(LONDON).strftime("%a %d %b %H:%M") for lesson in lessons] == [
        f"Tue {day} 17:00"
        for day in ("06 Oct", "13 Oct", "20 Oct", "27 Oct", "03 Nov", "17 Nov", "24 Nov", "01 Dec", "08 Dec")
    ]
    assert lessons[0].occurred_at == datetime(2026, 10, 6, 16, tzinfo=UTC)
    assert lessons[-1].occurred_at == datetime(2026, 12, 8, 17, tzinfo=UTC)
    assert len({lesson.anchor["uid"] for lesson in lessons}) == 1
    first = lessons[0].text
    assert "Tuesday 6 October 2026, 18:00–18:45 (17:00–17:45 Europe/London time)" in first
    assert "Place: Mrs Hale's, 4 Elm Road" in first and "With: Ana Silva, Mrs Hale" in first
    assert "Repeats every week on Tuesday" in first and "Bring the grade 3 book." in first

    birthday = next(chunk for chunk in chunks if chunk.text.startswith("Mum's birthday"))
    assert birthday.occurred_at == datetime(2026, 12, 5, tzinfo=BERLIN)  # the day starts at midnight where she lives
    assert birthday.anchor["all_day"] is True and birthday.anchor["when"] == "Sat 5 Dec 2026"
    assert "Saturday 5 December 2026, all day" in birthday.text

    call = next(chunk for chunk in chunks if chunk.text.startswith("Call with the New York office"))
    assert call.occurred_at == datetime(2026, 12, 3, 14, tzinfo=UTC)
    assert "Thursday 3 December 2026, 15:00–16:00 (09:00–10:00 America/New_York time)" in call.text
    assert call.anchor["when"] == "Thu 3 Dec 2026, 15:00"

    dentist = next(chunk for chunk in chunks if chunk.text.startswith("Dentist appointment"))
    assert dentist.occurred_at == datetime(2026, 12, 10, 9, 30, tzinfo=UTC)
    assert "Place: Smile Dental, 12 High Street" in dentist.text and "Bring the X-rays." in dentist.text

    hit = api.get("/search", q="dentist appointment", k=3).json()["results"][0]
    assert hit["chunk_id"] == dentist.pk and hit["anchor"]["when"] == "Thu 10 Dec 2026, 10:30"


@pytest.mark.django_db(transaction=True)
def test_the_source_page_shows_the_events_at_their_times(
    berliner: User, celery_worker: None, wide_window: None
) -> None:
    api = ApiClient.for_user(berliner)
    response = upload(api, "family.ics", FAMILY.read_bytes())
    assert api.wait_for_job(response.json()["job_id"])["status"] == "done"
    client = Client()
    client.force_login(berliner)
    page = client.get(f"/sources/{response.json()['source_id']}/").content.decode()
    assert "12 events" in page
    assert "Tue 6 Oct 2026, 18:00" in page and "Piano lesson" in page
    assert "Sat 5 Dec 2026" in page and "Mum&#x27;s birthday" in page
    dentist = Chunk.objects.get(source_id=response.json()["source_id"], text__startswith="Dentist")
    assert f'id="chunk-{dentist.pk}"' in page  # where a citation's link lands


@pytest.mark.django_db(transaction=True)
def test_a_broken_calendar_fails_its_job_with_the_reason(berliner: User, celery_worker: None) -> None:
    api = ApiClient.for_user(berliner)
    cut = FAMILY.read_bytes()[: len(FAMILY.read_bytes()) // 2]
    response = upload(api, "cut.ics", cut)
    assert response.status_code == 202, response.content  # it looks like a calendar: the worker finds out
    job = api.wait_for_job(response.json()["job_id"])
    assert (job["status"], job["error_code"]) == ("failed", "calendar_unreadable")
    assert job["error_message"] == (
        "cut.ics is not a calendar that can be read: it stops before its end (END:VCALENDAR is missing), "
        "so it was probably cut short. Export it from your calendar again."
    )
    assert not Chunk.objects.filter(source_id=response.json()["source_id"]).exists()


@pytest.mark.django_db(transaction=True)
def test_one_broken_event_leaves_the_rest_of_the_calendar_readable(
    berliner: User, celery_worker: None, wide_window: None
) -> None:
    api = ApiClient.for_user(berliner)
    bad_rule = FAMILY.read_bytes().replace(b"RRULE:FREQ=WEEKLY;BYDAY=TU;COUNT=10", b"RRULE:FREQ=SOMETIMES")
    response = upload(api, "rule.ics", bad_rule)
    job = api.wait_for_job(response.json()["job_id"])
    assert job["status"] == "done", job
    texts = [chunk.text for chunk in events_of(response.json()["source_id"])]
    assert any(text.startswith("Dentist") for text in texts)
    assert not any(text.startswith("Piano lesson") for text in texts)
    client = Client()
    client.force_login(berliner)
    page = client.get(f"/sources/{response.json()['source_id']}/").content.decode()
    assert "1 event could not be read and was left out:" in page
    assert "Piano lesson (" in page and "SOMETIMES" in page


@pytest.mark.django_db(transaction=True)
def test_a_file_named_ics_that_is_no_calendar_is_refused_at_upload(api: ApiClient) -> None:
    response = upload(api, "meeting.ics", b"Lunch with Sam on Friday")
    assert response.status_code == 415
    assert response.json()["error"] == {
        "code": "unsupported_type",
        "message": "meeting.ics is not an iCalendar file: it does not begin with BEGIN:VCALENDAR.",
    }


@pytest.mark.django_db(transaction=True)
def test_manage_py_ingest_adds_a_calendar(berliner: User, celery_worker: None, wide_window: None) -> None:
    out, err = io.StringIO(), io.StringIO()
    call_command("ingest", str(FAMILY), "--user", "berliner", "--wait", stdout=out, stderr=err)
    assert "Added: 1" in out.getvalue() and "Failed: 0" in out.getvalue()
    source = Source.objects.get(owner=berliner)
    assert source.kind == "calendar" and source.chunks.count() == 12


def write_ics(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "calendar.ics"
    path.write_text(f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n{body}END:VCALENDAR\r\n")
    return path


def test_a_weekly_event_without_an_end_is_read_over_the_window_only(tmp_path: Path) -> None:
    path = write_ics(
        tmp_path,
        "BEGIN:VEVENT\r\nUID:standup\r\nSUMMARY:Stand-up\r\nDTSTART:20200106T090000\r\n"
        "RRULE:FREQ=WEEKLY;BYDAY=MO\r\nEND:VEVENT\r\n",
    )
    since, until = datetime(2026, 11, 1, tzinfo=BERLIN), datetime(2026, 12, 1, tzinfo=BERLIN)
    read = calendar.extract(path, zone=BERLIN, since=since, until=until, name="calendar.ics")
    # A floating time (no zone) is the person's: 09:00 in Berlin, every Monday of November.
    assert [event.start for event in read.events] == [
        datetime(2026, 11, day, 9, tzinfo=BERLIN) for day in (2, 9, 16, 23, 30)
    ]
    assert read.metadata["window"] == [since.isoformat(), until.isoformat()]


def test_a_multi_day_event_and_a_cancelled_one(tmp_path: Path) -> None:
    path = write_ics(
        tmp_path,
        "BEGIN:VEVENT\r\nUID:trip\r\nSUMMARY:Trip to Porto\r\nDTSTART;VALUE=DATE:20261204\r\n"
        "DTEND;VALUE=DATE:20261207\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:off\r\nSUMMARY:Cancelled dinner\r\nSTATUS:CANCELLED\r\nDTSTART:20261205T190000Z\r\n"
        "END:VEVENT\r\n",
    )
    since = datetime(2026, 11, 1, tzinfo=UTC)
    read = calendar.extract(path, zone=BERLIN, since=since, until=since + timedelta(days=60), name="calendar.ics")
    assert [event.text for event in read.events] == [
        "Trip to Porto\nFriday 4 December 2026 to Sunday 6 December 2026, all day"
    ]


def test_a_calendar_with_no_events_in_the_window_is_empty(tmp_path: Path) -> None:
    path = write_ics(tmp_path, "BEGIN:VEVENT\r\nUID:old\r\nSUMMARY:Old\r\nDTSTART:20100101T090000Z\r\nEND:VEVENT\r\n")
    since = datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(AppError) as raised:
        calendar.extract(path, zone=BERLIN, since=since, until=since + timedelta(days=30), name="old.ics")
    assert raised.value.code == "empty_content"
    assert (
        raised.value.message
        == "old.ics has no events between 1 January 2026 and 31 January 2026, the time a calendar is read over."
    )


def test_events_that_cannot_be_read_are_left_out_and_named(tmp_path: Path) -> None:
    path = write_ics(
        tmp_path,
        "BEGIN:VEVENT\r\nUID:ok\r\nSUMMARY:Choir\r\nDTSTART:20261205T190000Z\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:nostart\r\nSUMMARY:Coffee with Ines\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:rule\r\nSUMMARY:Bins out\r\nDTSTART:20261201T070000Z\r\nRRULE:FREQ=SOMETIMES\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:date\r\nSUMMARY:Haircut\r\nDTSTART:2026-13-45\r\nEND:VEVENT\r\n",
    )
    since = datetime(2026, 11, 1, tzinfo=UTC)
    read = calendar.extract(path, zone=BERLIN, since=since, until=since + timedelta(days=60), name="calendar.ics")
    assert [event.text.split("\n")[0] for event in read.events] == ["Choir"]
    assert read.metadata["skipped_count"] == 3
    skipped = {entry["event"].split(" (")[0]: entry["why"] for entry in read.metadata["skipped"]}
    assert skipped.keys() == {"Coffee with Ines", "Bins out", "Haircut"}
    assert skipped["Coffee with Ines"] == "it has no DTSTART"


def test_a_calendar_whose_every_event_is_broken_is_unreadable(tmp_path: Path) -> None:
    path = write_ics(tmp_path, "BEGIN:VEVENT\r\nUID:x\r\nSUMMARY:Coffee with Ines\r\nEND:VEVENT\r\n")
    since = datetime(2026, 11, 1, tzinfo=UTC)
    with pytest.raises(AppError) as raised:
        calendar.extract(path, zone=BERLIN, since=since, until=since + timedelta(days=60), name="broken.ics")
    assert raised.value.code == "calendar_unreadable"
    assert raised.value.message == (
        "broken.ics is not a calendar that can be read: none of its 1 events could be read "
        "(Coffee with Ines: it has no DTSTART). Export it from your calendar again."
    )
