"""`GET /api/search` with time in the question: only the notes in the range, read in the user's zone.

Dates are relative to the real clock (the API reads "now" itself): each note is placed at a local
time a few days back, and the expected range is computed the same way the parser is specified.
"""

import importlib
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import User
from chat.selectors import OWNER_TERMS
from ingestion.models import Chunk, Source
from ingestion.pipeline import job_process
from ingestion.services import note_create
from tests.factories import ApiClient, assert_error, make_user

pytestmark = pytest.mark.django_db
BERLIN = ZoneInfo("Europe/Berlin")


def today() -> date:
    return timezone.now().astimezone(BERLIN).date()


def local(day: date, hour: int = 12, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=BERLIN)


def add_note(owner: User, text: str, occurred_at: datetime, created_at: datetime | None = None) -> int:
    """A processed note (chunks and embeddings stored); `created_at` backdates its upload."""
    job = note_create(owner=owner, title=text.split(".")[0], text=text, occurred_at=occurred_at)
    job_process(job_id=job.pk)
    if created_at is not None:
        Source.objects.filter(pk=job.source_id).update(created_at=created_at)
    return job.source_id


@pytest.fixture
def berliner(user: User) -> User:
    user.time_zone = "Europe/Berlin"
    user.save(update_fields=["time_zone"])
    return user


def source_ids(response: object) -> list[int]:
    return [result["source_id"] for result in response.json()["results"]]  # type: ignore[attr-defined]


def test_a_content_question_lists_what_happened_that_local_day_newest_first(berliner: User, api: ApiClient) -> None:
    yesterday = today() - timedelta(days=1)
    # 00:30 in Berlin is still the day before in UTC: only the local reading puts it in "yesterday".
    just_after_midnight = add_note(berliner, "Zebra crossing repainted.", local(yesterday, 0, 30))
    evening = add_note(berliner, "Quartz clock wound.", local(yesterday, 21))
    add_note(berliner, "Lantern fixed.", local(yesterday - timedelta(days=1), 23, 30))
    add_note(berliner, "Kettle descaled.", local(today(), 0, 0))

    response = api.get("/search", q="What happened yesterday?")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["mode"] == "temporal"
    assert body["date_range"]["clock"] == "content"
    assert datetime.fromisoformat(body["date_range"]["since"]) == local(yesterday, 0)
    assert datetime.fromisoformat(body["date_range"]["until"]) == local(today(), 0)
    assert source_ids(response) == [evening, just_after_midnight]
    assert all(result["score"] == 0 for result in body["results"])


def test_an_upload_question_uses_when_the_source_was_added(berliner: User, api: ApiClient) -> None:
    long_ago = datetime(2020, 6, 1, 12, tzinfo=BERLIN)
    yesterday = today() - timedelta(days=1)
    added_yesterday = add_note(berliner, "Passport renewal form.", long_ago, created_at=local(yesterday, 9))
    add_note(berliner, "Old tax letter.", long_ago, created_at=local(yesterday - timedelta(days=40), 9))
    happened_yesterday = add_note(
        berliner, "Walked along the river.", local(yesterday, 15), created_at=local(today(), 0, 1)
    )

    uploads = api.get("/search", q="What did I upload yesterday?")
    events = api.get("/search", q="What happened yesterday?")

    assert uploads.json()["mode"] == "temporal"
    assert uploads.json()["date_range"]["clock"] == "upload"
    assert source_ids(uploads) == [added_yesterday]
    assert events.json()["date_range"]["clock"] == "content"
    assert source_ids(events) == [happened_yesterday]


def test_a_question_with_a_topic_and_a_time_searches_the_topic_within_the_range(berliner: User, api: ApiClient) -> None:
    this_monday = today() - timedelta(days=today().weekday())
    last_week = this_monday - timedelta(days=4)
    roof_last_week = add_note(berliner, "The roofer will replace the broken roof tiles.", local(last_week))
    add_note(berliner, "Tomatoes planted in the raised bed.", local(last_week, 14))
    roof_before = add_note(
        berliner, "Roof tiles quote from the roofer: 900 euros.", local(last_week - timedelta(days=7))
    )

    response = api.get("/search", q="What did I note about the roof tiles last week?")

    body = response.json()
    assert body["mode"] == "hybrid"
    assert datetime.fromisoformat(body["date_range"]["since"]) == local(this_monday - timedelta(days=7), 0)
    assert source_ids(response)[0] == roof_last_week
    assert roof_before not in source_ids(response)


def test_a_listing_by_time_needs_no_matching_words(berliner: User, api: ApiClient) -> None:
    days = [today() - timedelta(days=n) for n in (1, 2, 3)]
    words = ["alpha", "beta", "gamma"]
    newest_first = [add_note(berliner, f"Entry {word}.", local(day)) for word, day in zip(words, days, strict=True)]
    add_note(berliner, "Entry delta.", local(today() - timedelta(days=40)))

    response = api.get("/search", q="what did I do in the past 3 days")

    assert response.json()["mode"] == "temporal"
    assert source_ids(response) == newest_first


def test_another_users_notes_in_the_same_range_never_appear(
    berliner: User, other_user: User, api: ApiClient, other_api: ApiClient
) -> None:
    yesterday = today() - timedelta(days=1)
    mine = add_note(berliner, "Dentist appointment moved.", local(yesterday))
    theirs = add_note(other_user, "Dentist appointment moved, secretly.", local(yesterday))

    questions = ["What happened yesterday?", "What did I add yesterday?", "dentist appointment yesterday", "dentist"]
    for question in questions:
        assert theirs not in source_ids(api.get("/search", q=question)), question
        assert mine not in source_ids(other_api.get("/search", q=question)), question
    assert source_ids(api.get("/search", q="What happened yesterday?")) == [mine]


def test_a_question_without_time_is_semantic_with_no_range(berliner: User, api: ApiClient) -> None:
    note = add_note(berliner, "The garden hose leaks at the tap.", local(today() - timedelta(days=300)))
    body = api.get("/search", q="garden hose leak").json()
    assert (body["mode"], body["date_range"]) == ("semantic", None)
    assert body["results"][0]["source_id"] == note


def test_each_result_tells_how_close_its_meaning_is_to_the_question(berliner: User, api: ApiClient) -> None:
    """The similarity the chat's relevance gate reads: a client can gate the same way."""
    add_note(berliner, "The garden hose leaks at the tap.", local(today() - timedelta(days=3)))
    add_note(berliner, "Quarterly tax return filed with the accountant.", local(today() - timedelta(days=2)))
    results = api.get("/search", q="the hose in the garden is leaking").json()["results"]
    by_text = {result["text"]: result["similarity"] for result in results}
    hose, tax = by_text["The garden hose leaks at the tap."], by_text["Quarterly tax return filed with the accountant."]
    assert hose > 0.6 and tax < 0.2, by_text


def test_explicit_since_and_until_replace_the_range_the_question_names(berliner: User, api: ApiClient) -> None:
    add_note(berliner, "Boiler serviced.", local(date(2025, 3, 10)))
    in_april = add_note(berliner, "Boiler pressure topped up.", local(date(2025, 4, 10)))

    # Naive bounds are read in the user's zone.
    body = api.get("/search", q="boiler in March", since="2025-04-01T00:00:00", until="2025-05-01T00:00:00").json()

    assert body["mode"] == "hybrid"
    assert body["date_range"] == {
        "since": "2025-04-01T00:00:00+02:00",
        "until": "2025-05-01T00:00:00+02:00",
        "clock": "content",
    }
    assert [result["source_id"] for result in body["results"]] == [in_april]


def test_kind_filters_results_and_a_bad_kind_is_refused(berliner: User, api: ApiClient) -> None:
    add_note(berliner, "Bicycle chain oiled.", local(today() - timedelta(days=1)))
    assert api.get("/search", q="bicycle chain", kind="pdf").json()["results"] == []
    assert len(api.get("/search", q="bicycle chain", kind="note").json()["results"]) == 1
    assert_error(api.get("/search", q="bicycle chain", kind="spreadsheet"), 422, "invalid_request")


def test_a_range_that_ends_before_it_starts_is_refused(api: ApiClient) -> None:
    response = api.get("/search", q="anything", since="2025-05-01T00:00:00Z", until="2025-04-01T00:00:00Z")
    assert_error(response, 422, "invalid_range")


def test_an_unknown_stored_zone_reads_questions_in_utc(user: User, api: ApiClient) -> None:
    User.objects.filter(pk=user.pk).update(time_zone="Mars/Olympus_Mons")
    body = api.get("/search", q="what happened yesterday").json()
    utc_yesterday = timezone.now().date() - timedelta(days=1)
    assert datetime.fromisoformat(body["date_range"]["since"]) == datetime.combine(
        utc_yesterday, time.min, tzinfo=ZoneInfo("UTC")
    )


def test_a_content_range_also_reads_the_notes_written_soon_after_it_ranked_below_those_inside(
    berliner: User, api: ApiClient
) -> None:
    in_march = add_note(berliner, "The roofer replaced the broken roof tiles over the porch.", local(date(2025, 3, 20)))
    told_in_april = add_note(
        berliner, "Last month the roofer came: new roof tiles on the porch, all done.", local(date(2025, 4, 6))
    )
    in_june = add_note(berliner, "The roofer checked the roof tiles on the porch again.", local(date(2025, 6, 10)))

    body = api.get("/search", q="What did the roofer do to the roof tiles in March 2025?").json()

    # A note tells of an event after it happened ("last month…"): the range shown is still March,
    # and what is dated inside it ranks first.
    assert body["mode"] == "hybrid"
    assert body["date_range"]["until"] == "2025-04-01T00:00:00+02:00"
    assert [result["source_id"] for result in body["results"]] == [in_march, told_in_april]
    assert in_june not in source_ids(api.get("/search", q="What did the roofer do to the roof tiles in March 2025?"))


def test_a_content_range_also_reads_plans_written_just_before_it_ranked_below_those_inside(
    berliner: User, api: ApiClient
) -> None:
    planned = add_note(
        berliner, "Next month we fly to Orlando for the Universal Studios trip.", local(date(2025, 8, 29))
    )
    during = add_note(berliner, "Universal Studios trip: the kids loved the rides.", local(date(2025, 9, 14)))
    weeks_before = add_note(berliner, "Saving up for a Universal Studios trip one day.", local(date(2025, 8, 10)))

    body = api.get("/search", q="What happened on the Universal Studios trip in September 2025?").json()

    # A month is read from a quarter of its length before it (at most 7 days): plans are told ahead.
    assert body["date_range"]["since"] == "2025-09-01T00:00:00+02:00"
    found = [result["source_id"] for result in body["results"]]
    assert found == [during, planned]
    assert weeks_before not in found


def test_a_question_naming_a_person_prefers_the_lines_that_person_speaks(berliner: User, api: ApiClient) -> None:
    day = local(today() - timedelta(days=30))
    ben_about_anna = add_note(
        berliner, "Ben: Anna, did you know I adopted a dog? Adopting Rex from the shelter was the best idea.", day
    )
    anna = add_note(berliner, "Anna: We took a kitten home from the shelter last week, her name is Miso.", day)

    results = api.get("/search", q="Which pet did Anna adopt from the shelter?").json()["results"]

    assert [result["source_id"] for result in results[:2]] == [anna, ben_about_anna]


def test_full_text_matches_are_read_from_the_owners_postings_in_the_owner_term_index(
    berliner: User, api: ApiClient
) -> None:
    mine = add_note(berliner, "Aardvark census held at the zoo.", local(today() - timedelta(days=3)))
    add_note(make_user(), "Aardvark census cancelled.", local(today() - timedelta(days=3)))
    # A handful of rows: the planner would rather scan them all, or take the owner's btree.
    lookup = f"SELECT c.id FROM ingestion_chunk c WHERE {OWNER_TERMS} @> ARRAY[%s::text || ' aardvark']"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + lookup, [berliner.pk])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "chunk_owner_terms_gin" in plan, plan  # the query's expression must be the index's, spelt the same

    assert source_ids(api.get("/search", q="aardvark census")) == [mine]


def test_a_remembered_phrase_finds_the_passage_that_holds_it_above_ones_sharing_its_words(
    berliner: User, api: ApiClient
) -> None:
    day = local(today() - timedelta(days=10))
    # Passages that use the words of the phrase, more often and apart, as a manual's other pages do.
    for text in [
        "Trim log. The operator provides a trim log for each flight; automatic entries come from the STS computer, "
        "and manual trim entries are typed by the crew. The STS log provides the time of every trim input.",
        "Autopilot. An automatic disconnect provides a warning when trim is needed; the STS then stops and the "
        "crew trims by hand. The warning provides no automatic reset of the STS.",
        "Inspection. Check the STS actuator for wear. The supplier provides new trim jackscrews; automatic "
        "lubrication is not fitted, so grease the trim screw by hand every 400 hours.",
    ]:
        add_note(berliner, text, day)
    holder = add_note(
        berliner,
        "System description. The stabilizer has two motors. The STS provides automatic trim of the horizontal "
        "stabilizer during manual flight, and the pilots can override it with the yoke switches.",
        day,
    )

    assert source_ids(api.get("/search", q="the STS provides automatic trim"))[0] == holder


def test_a_search_tells_where_its_time_went_in_server_timing(berliner: User, api: ApiClient) -> None:
    add_note(berliner, "Anna: the boiler was serviced on Friday.", local(today() - timedelta(days=3)))

    response = api.get("/search", q="When did Anna have the boiler serviced?")

    spans = dict(part.strip().split(";dur=") for part in response.headers["Server-Timing"].split(","))
    assert {"auth", "time", "names", "embed", "sql", "app"} <= spans.keys()
    parts = sum(float(spans[name]) for name in ("auth", "time", "names", "embed", "sql"))
    assert 0 < parts <= float(spans["app"])


def test_a_note_answered_by_one_of_its_sentences_comes_before_notes_merely_about_the_topic(
    berliner: User, api: ApiClient
) -> None:
    day = local(today() - timedelta(days=4))
    # Notes about bikes, none with the question's words; as a whole, Sunday's is the nearest to it.
    for text in [
        "Bike repairs to do: the tyres, the chain and the brakes",
        "Bike tyres. Flat tyres again on the kids' bikes, the valves are the old kind",
        "Sunday. Walked the dog by the river. Bought a new bike pump at Decathlon. Lunch in town.",
        "Cycling routes. Canal path to Leixlip and back, about 30 km, flat all the way, coffee at the lock",
    ]:
        add_note(berliner, text, day)
    saturday = add_note(
        berliner,
        "Saturday. Swimming with the kids at 9, then the big shop at Lidl. Sam's bike had a flat tyre, so I "
        "patched the inner tube in the garage. Dinner at Mum's in the evening, she made lasagne.",
        day,
    )

    assert source_ids(api.get("/search", q="When did I mend the puncture on the bicycle?"))[0] == saturday


def test_a_range_finds_the_note_written_weeks_before_that_names_its_days(berliner: User, api: ApiClient) -> None:
    # People write down plans when they hear of them: this 1:1 note is dated five weeks before November.
    told = add_note(
        berliner,
        "1:1 with Priya. She's off 2-6 Nov, so Marcus signs things off while she's away.",
        local(date(2025, 10, 1)),
    )
    add_note(berliner, "Priya signs things off for the new vendor contracts.", local(date(2025, 10, 2)))
    in_november = add_note(berliner, "Team lunch at the Thai place, Priya's leaving do.", local(date(2025, 11, 20)))

    body = api.get("/search", q="Who signs things off while Priya is away in November 2025?").json()

    # The range shown is still November; of the October notes only the one naming its days is read.
    assert body["date_range"]["since"] == "2025-11-01T00:00:00+01:00"
    assert [result["source_id"] for result in body["results"]] == [told, in_november]


def test_a_range_no_note_is_dated_in_searches_everything_though_a_note_names_its_days(
    berliner: User, api: ApiClient
) -> None:
    yesterday = today() - timedelta(days=1)
    answer = add_note(
        berliner,
        "Femi moves out at the weekend: his last night in the old place is the Friday.",
        local(today() - timedelta(days=10)),
    )
    names_yesterday = add_note(
        berliner, f"The bin collection moves to {yesterday.day} {yesterday:%B %Y}.", local(today() - timedelta(days=20))
    )

    # "last night" reads as yesterday, when no note is dated: a misreading, searched as if it named no time.
    body = api.get("/search", q="When is Femi's last night in his old place?").json()

    assert body["date_range"] is None
    assert [result["source_id"] for result in body["results"]] == [answer, names_yesterday]


def test_notes_stored_before_their_days_were_read_have_them_read_by_the_migration(
    berliner: User, api: ApiClient
) -> None:
    from django.apps import apps

    told = add_note(berliner, "Dentist on 12 Nov 2025 about the cracked filling.", local(date(2025, 10, 1)))
    add_note(berliner, "Cracked filling feels fine, no dentist needed.", local(date(2025, 10, 2)))
    add_note(berliner, "Bought a new electric toothbrush.", local(date(2025, 11, 20)))
    Chunk.objects.update(mentions=None)  # as 0019 found them
    question = "When is the dentist about the cracked filling in November 2025?"
    assert told not in source_ids(api.get("/search", q=question))

    importlib.import_module("ingestion.migrations.0019_chunk_mentions").read_mentions(apps, None)

    body = api.get("/search", q=question).json()
    assert body["date_range"]["since"] == "2025-11-01T00:00:00+01:00"
    assert [result["source_id"] for result in body["results"]][0] == told
    assert sorted(len(chunk.mentions or ()) for chunk in Chunk.objects.all()) == [0, 0, 1]
