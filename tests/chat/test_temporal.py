"""The temporal parser: questions read at a frozen moment, each with the exact range, clock and mode it means."""

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from accounts.models import zone_named
from chat.temporal import DateRange, describe, interpret, mentioned, with_dates

BERLIN = ZoneInfo("Europe/Berlin")
LOS_ANGELES = ZoneInfo("America/Los_Angeles")
UTC = ZoneInfo("UTC")
# Wednesday 6 May 2026, mid-afternoon in Berlin.
NOW = datetime(2026, 5, 6, 14, 30, tzinfo=BERLIN)


def day(year: int, month: int, dd: int) -> datetime:
    return datetime(year, month, dd, tzinfo=BERLIN)


def elapsed(date_range: DateRange) -> timedelta:
    # Python subtracts two datetimes of one zone by their wall clocks; the real length needs UTC.
    assert date_range.since is not None and date_range.until is not None
    return date_range.until.astimezone(UTC) - date_range.since.astimezone(UTC)


D = day
CASES = [
    # question, since, until, clock, mode
    ("What did I upload last week?", D(2026, 4, 27), D(2026, 5, 4), "upload", "temporal"),
    ("what did I add yesterday", D(2026, 5, 5), D(2026, 5, 6), "upload", "temporal"),
    ("What did I record last Tuesday about the budget?", D(2026, 5, 5), D(2026, 5, 6), "upload", "hybrid"),
    ("What happened today?", D(2026, 5, 6), D(2026, 5, 7), "content", "temporal"),
    ("What did I do this week?", D(2026, 5, 4), D(2026, 5, 11), "content", "temporal"),
    ("What did I talk about last week?", D(2026, 4, 27), D(2026, 5, 4), "content", "temporal"),
    ("What happened this month?", D(2026, 5, 1), D(2026, 6, 1), "content", "temporal"),
    ("What did I save last month?", D(2026, 4, 1), D(2026, 5, 1), "upload", "temporal"),
    ("What did I write about the garden this year?", D(2026, 1, 1), D(2027, 1, 1), "written", "hybrid"),
    ("What happened last year?", D(2025, 1, 1), D(2026, 1, 1), "content", "temporal"),
    ("What did I do in March?", D(2026, 3, 1), D(2026, 4, 1), "content", "temporal"),
    ("What did I do in May?", D(2026, 5, 1), D(2026, 6, 1), "content", "temporal"),
    ("What did I do in June?", D(2025, 6, 1), D(2025, 7, 1), "content", "temporal"),
    ("What did I import in March 2023?", D(2023, 3, 1), D(2023, 4, 1), "upload", "temporal"),
    ("What happened on 3 May?", D(2026, 5, 3), D(2026, 5, 4), "content", "temporal"),
    ("What did I note about tomatoes on 12 May?", D(2025, 5, 12), D(2025, 5, 13), "content", "hybrid"),
    ("What happened May 3?", D(2026, 5, 3), D(2026, 5, 4), "content", "temporal"),
    ("What happened on 3 May 2023?", D(2023, 5, 3), D(2023, 5, 4), "content", "temporal"),
    ("What did I do on the 3rd of May 2023?", D(2023, 5, 3), D(2023, 5, 4), "content", "temporal"),
    ("What did I add on Sept 3, 2025?", D(2025, 9, 3), D(2025, 9, 4), "upload", "temporal"),
    ("What did I do two days ago?", D(2026, 5, 4), D(2026, 5, 5), "content", "temporal"),
    ("What did I upload 3 days ago?", D(2026, 5, 3), D(2026, 5, 4), "upload", "temporal"),
    ("What did I do eleven days ago?", D(2026, 4, 25), D(2026, 4, 26), "content", "temporal"),
    ("What did I do a week ago?", D(2026, 4, 27), D(2026, 5, 4), "content", "temporal"),
    ("What did I add 2 weeks ago?", D(2026, 4, 20), D(2026, 4, 27), "upload", "temporal"),
    ("What happened three months ago?", D(2026, 2, 1), D(2026, 3, 1), "content", "temporal"),
    ("What did I do since Monday?", D(2026, 5, 4), None, "content", "temporal"),
    ("What did I add since Monday about the trip?", D(2026, 5, 4), None, "upload", "hybrid"),
    ("What did I do last Tuesday?", D(2026, 5, 5), D(2026, 5, 6), "content", "temporal"),
    ("What did I do on Wednesday?", D(2026, 4, 29), D(2026, 4, 30), "content", "temporal"),
    ("What did the plumber say on Friday?", D(2026, 5, 1), D(2026, 5, 2), "content", "hybrid"),
    ("What happened between 1 and 15 April?", D(2026, 4, 1), D(2026, 4, 16), "content", "temporal"),
    ("What did I upload from 1 April to 15 April?", D(2026, 4, 1), D(2026, 4, 16), "upload", "temporal"),
    ("Roof repairs from 1 December to 15 January", D(2025, 12, 1), D(2026, 1, 16), "content", "hybrid"),
    ("What happened between March and April?", D(2026, 3, 1), D(2026, 5, 1), "content", "temporal"),
    ("What did I do in 2023?", D(2023, 1, 1), D(2024, 1, 1), "content", "temporal"),
    ("What did I save before 3 May?", None, D(2026, 5, 3), "upload", "temporal"),
    ("What happened after 1 April?", D(2026, 4, 2), None, "content", "temporal"),
    ("What did I say about the budget in the past two weeks?", D(2026, 4, 22), D(2026, 5, 7), "content", "hybrid"),
    ("What did I write in the past few weeks?", D(2026, 4, 15), D(2026, 5, 7), "written", "temporal"),
    ("What did I do the day before yesterday?", D(2026, 5, 4), D(2026, 5, 5), "content", "temporal"),
    # A length before or after a date is that span next to it, not an open range.
    ("Where was I in the week before 16 November 2025?", D(2025, 11, 9), D(2025, 11, 16), "content", "temporal"),
    ("What did I note two days after 3 May about the boiler?", D(2026, 5, 4), D(2026, 5, 6), "content", "hybrid"),
    ("What happened a month after 31 January?", D(2026, 2, 1), D(2026, 3, 1), "content", "temporal"),
    ("What happened on 2026-04-02?", D(2026, 4, 2), D(2026, 4, 3), "content", "temporal"),
    ("Notes about the dentist from last week", D(2026, 4, 27), D(2026, 5, 4), "content", "hybrid"),
    ("What did I do on 29 February?", D(2024, 2, 29), D(2024, 3, 1), "content", "temporal"),
    ("What did I do last March?", D(2026, 3, 1), D(2026, 4, 1), "content", "temporal"),
    ("What did I upload about taxes last week", D(2026, 4, 27), D(2026, 5, 4), "upload", "hybrid"),
    # Writing something down is recording it, and names no topic; a to-do list is a topic.
    ("What did I jot down yesterday?", D(2026, 5, 5), D(2026, 5, 6), "written", "temporal"),
    ("What did I note down three days ago?", D(2026, 5, 3), D(2026, 5, 4), "written", "temporal"),
    ("What's on my to-do list today?", D(2026, 5, 6), D(2026, 5, 7), "content", "hybrid"),
]


@pytest.mark.parametrize(("question", "since", "until", "clock", "mode"), CASES, ids=[case[0] for case in CASES])
def test_it_reads_the_range_clock_and_mode(
    question: str, since: datetime | None, until: datetime | None, clock: str, mode: str
) -> None:
    meaning = interpret(question, now=NOW, zone=BERLIN)
    assert meaning.date_range == DateRange(since=since, until=until, clock=clock)  # type: ignore[arg-type]
    assert meaning.mode == mode


@pytest.mark.parametrize(
    "question",
    [
        "When do the tomatoes go into the raised bed?",
        "What is the 2023 budget?",
        "May I see the notes on tomatoes?",
        "What did Anna say at the March meeting?",
        "What did I upload about the roof?",
        "Who recommended Tomorrow, and Tomorrow, and Tomorrow to me?",  # a book
        'What did I write about "Yesterday" by the Beatles?',
        # After a possessive, "last" is the final one.
        "When is Femi's last night in his old place?",
        "What did I do in my last week at Acme?",
        "What did we eat on the last night of the trip?",
    ],
)
def test_a_question_without_a_time_is_semantic_and_searched_whole(question: str) -> None:
    meaning = interpret(question, now=NOW, zone=BERLIN)
    assert (meaning.mode, meaning.date_range, meaning.topic) == ("semantic", None, question)


def test_the_range_is_local_midnight_in_the_users_zone() -> None:
    date_range = interpret("what did I do yesterday?", now=NOW, zone=BERLIN).date_range
    assert date_range is not None and date_range.since is not None
    assert date_range.since.tzinfo is BERLIN
    assert date_range.since.isoformat() == "2026-05-05T00:00:00+02:00"


def test_the_topic_keeps_the_question_without_its_time_words() -> None:
    meaning = interpret("What did I record last Tuesday about the budget?", now=NOW, zone=BERLIN)
    assert meaning.topic == "What did I record about the budget?"
    assert meaning.phrase == "last Tuesday"


def test_last_week_across_the_spring_dst_change_is_one_hour_short() -> None:
    # Berlin moved to summer time on Sunday 29 March 2026; asked on Wednesday 1 April.
    now = datetime(2026, 4, 1, 9, tzinfo=BERLIN)
    date_range = interpret("what happened last week", now=now, zone=BERLIN).date_range
    assert date_range is not None and date_range.since is not None and date_range.until is not None
    assert date_range.since.isoformat() == "2026-03-23T00:00:00+01:00"
    assert date_range.until.isoformat() == "2026-03-30T00:00:00+02:00"
    assert elapsed(date_range) == timedelta(days=7, hours=-1)


def test_yesterday_on_the_autumn_dst_change_lasts_25_hours() -> None:
    now = datetime(2026, 10, 26, 8, tzinfo=BERLIN)
    date_range = interpret("what did I add yesterday?", now=now, zone=BERLIN).date_range
    assert date_range is not None and date_range.since is not None and date_range.until is not None
    assert (date_range.since.isoformat(), date_range.until.isoformat()) == (
        "2026-10-25T00:00:00+02:00",
        "2026-10-26T00:00:00+01:00",
    )
    assert elapsed(date_range) == timedelta(hours=25)


def test_west_of_utc_today_is_the_local_day_not_the_utc_one() -> None:
    # 02:00 UTC on 7 May is still the evening of 6 May in Los Angeles.
    now = datetime(2026, 5, 7, 2, tzinfo=UTC)
    meaning = interpret("What did I do today?", now=now, zone=LOS_ANGELES)
    expected = DateRange(
        since=datetime(2026, 5, 6, tzinfo=LOS_ANGELES), until=datetime(2026, 5, 7, tzinfo=LOS_ANGELES), clock="content"
    )
    assert meaning.date_range == expected
    assert expected.since is not None and expected.since.isoformat() == "2026-05-06T00:00:00-07:00"
    since_monday = interpret("since monday", now=now, zone=LOS_ANGELES).date_range
    assert since_monday == DateRange(since=datetime(2026, 5, 4, tzinfo=LOS_ANGELES), until=None, clock="content")


@pytest.mark.parametrize(
    ("question", "label"),
    [
        ("What happened between 1 and 15 April?", "Content from 1–15 April 2026"),
        ("What did I upload last week?", "Added 27 April – 3 May 2026"),
        ("What did I add yesterday?", "Added on 5 May 2026"),
        ("What did I save last month?", "Added in April 2026"),
        ("What happened since Monday?", "Content since 4 May 2026"),
        ("What did I jot down yesterday?", "Written on 5 May 2026"),
        ("What did I write last month?", "Written in April 2026"),
        ("What did I do from 1 December to 15 January?", "Content from 1 December 2025 – 15 January 2026"),
    ],
)
def test_a_range_is_described_in_words_for_the_chip(question: str, label: str) -> None:
    date_range = interpret(question, now=NOW, zone=BERLIN).date_range
    assert date_range is not None
    assert describe(date_range, zone=BERLIN) == label


def test_an_unknown_zone_name_falls_back_to_utc() -> None:
    assert zone_named("Mars/Olympus_Mons") == UTC
    assert zone_named("../../etc/passwd") == UTC
    assert zone_named("Europe/Berlin") == BERLIN


def test_every_weekday_means_the_most_recent_one_before_today() -> None:
    names = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    for number, name in enumerate(names):
        date_range = interpret(f"on {name}", now=NOW, zone=BERLIN).date_range
        assert date_range is not None and date_range.since is not None
        found = date_range.since.date()
        assert found.weekday() == number and date(2026, 4, 29) <= found < date(2026, 5, 6), name


@pytest.mark.parametrize(
    ("text", "said_on", "read"),
    [
        ("I went to the support group yesterday.", date(2023, 5, 8), "yesterday (7 May 2023)."),
        ("do it tmrw at the latest", date(2026, 11, 25), "do it tmrw (26 November 2026) at the latest"),
        ("Lankum, Fri 28th, doors 7pm", date(2026, 11, 20), "Lankum, Fri 28th (28 November 2026), doors 7pm"),
        # The weekday settles the month: the Friday that is a 4th near 20 November 2026 is in December.
        ("party Fri the 4th", date(2026, 11, 20), "party Fri the 4th (4 December 2026)"),
        # No Wednesday is a 12th near 26 November 2026: a weekday slipped in a plan, read as the coming 12th.
        ("booked Kieran for Wednesday the 12th", date(2026, 11, 26), "Wednesday the 12th (12 December 2026)"),
        ("9.40 w Dr Keane", date(2026, 11, 20), "9.40 w Dr Keane"),  # a time, not a day
        # A weekday with a time is an appointment: the first such day after the note's date.
        ("Thurs 9.40am w Dr Keane", date(2026, 11, 20), "Thurs 9.40am (26 November 2026) w Dr Keane"),
        ("Next session Thurs 9.40am", date(2026, 11, 26), "Next session Thurs 9.40am (3 December 2026)"),
        ("book club Tuesday at 7pm", date(2026, 11, 26), "book club Tuesday at 7pm (1 December 2026)"),
        ("Fri 6:30 train", date(2026, 11, 26), "Fri 6:30 (27 November 2026) train"),
        ("standup Thursday at 9 w Priya", date(2026, 12, 2), "Thursday at 9 (3 December 2026) w Priya"),
        ("see you on Friday", date(2026, 11, 20), "see you on Friday"),  # before or after: left alone
        # What counts forward from the note's day, as what counts back does.
        ("call Mary next Tuesday re the quote", date(2026, 12, 2), "next Tuesday (8 December 2026) re the quote"),
        ("Priya off next week, Ben covers", date(2026, 12, 2), "next week (7–13 December 2026), Ben covers"),
        ("fly the day after tomorrow", date(2026, 12, 2), "the day after tomorrow (4 December 2026)"),
        ("review in two weeks' time", date(2026, 12, 2), "in two weeks' time (14–20 December 2026)"),
        # In a story, "the next week" follows the story's day; "in 3 weeks" is how long something took.
        ("Rome, then the next week we flew home", date(2026, 12, 2), "the next week we flew home"),
        ("finished the couch to 5k in 9 weeks", date(2026, 12, 2), "finished the couch to 5k in 9 weeks"),
        ("more shelters in the coming weeks", date(2026, 12, 2), "more shelters in the coming weeks"),
        # A weekly class from 7 to 8.30pm, not the 7th.
        ("class Tues 7-8.30pm at the Istituto", date(2026, 11, 20), "class Tues 7-8.30pm at the Istituto"),
        # A book's title is not a day; a sentence that starts with the word is.
        ("- **Tomorrow, and Tomorrow, and Tomorrow** – Zevin", date(2026, 11, 20), "and Tomorrow** – Zevin"),
        ("Nuala lent me Tomorrow, and Tomorrow", date(2026, 11, 20), "Nuala lent me Tomorrow, and Tomorrow"),
        ("Tom: Tomorrow I ring the vet", date(2026, 11, 20), "Tomorrow (21 November 2026) I ring the vet"),
    ],
)
def test_a_passage_is_read_with_the_dates_its_days_mean(text: str, said_on: date, read: str) -> None:
    assert with_dates(text, said_on).endswith(read)


# The future, read as the past is: asked on Wednesday 6 May 2026 in Berlin.
AHEAD_CASES = [
    ("What's on tomorrow?", D(2026, 5, 7), D(2026, 5, 8), "temporal"),
    ("Anything on the day after tomorrow?", D(2026, 5, 8), D(2026, 5, 9), "temporal"),
    ("Meeting with Tom tomorrow morning?", D(2026, 5, 7), D(2026, 5, 8), "hybrid"),
    ("What do I have next week?", D(2026, 5, 11), D(2026, 5, 18), "temporal"),
    ("What have I got planned for next month?", D(2026, 6, 1), D(2026, 7, 1), "temporal"),
    ("What's on next year?", D(2027, 1, 1), D(2028, 1, 1), "temporal"),
    ("What do I have next Monday?", D(2026, 5, 11), D(2026, 5, 12), "temporal"),
    ("What's on next Friday?", D(2026, 5, 8), D(2026, 5, 9), "temporal"),
    ("What's on this coming Friday?", D(2026, 5, 8), D(2026, 5, 9), "temporal"),
    ("What am I doing this weekend?", D(2026, 5, 9), D(2026, 5, 11), "temporal"),
    ("What's on next weekend?", D(2026, 5, 16), D(2026, 5, 18), "temporal"),
    ("What did I do last weekend?", D(2026, 5, 2), D(2026, 5, 4), "temporal"),
    ("What did I do at the weekend?", D(2026, 5, 2), D(2026, 5, 4), "temporal"),
    ("What's on in two weeks?", D(2026, 5, 18), D(2026, 5, 25), "temporal"),
    ("What do I have in a week's time?", D(2026, 5, 11), D(2026, 5, 18), "temporal"),
    ("What's on three days from now?", D(2026, 5, 9), D(2026, 5, 10), "temporal"),
    ("What's happening in the next 3 days?", D(2026, 5, 6), D(2026, 5, 10), "temporal"),
    # "The coming weeks", "the next few weeks": a while, read as three of them.
    ("What's on in the coming weeks?", D(2026, 5, 6), D(2026, 5, 28), "temporal"),
    ("What do I have over the next few weeks?", D(2026, 5, 6), D(2026, 5, 28), "temporal"),
    ("Anything on in the coming days?", D(2026, 5, 6), D(2026, 5, 10), "temporal"),
    ("What's on later this week?", D(2026, 5, 6), D(2026, 5, 11), "temporal"),
    # A question that looks ahead reads a bare weekday, a date or a month as a coming one.
    ("What am I doing on Friday?", D(2026, 5, 8), D(2026, 5, 9), "temporal"),
    ("What's on 3 May?", D(2027, 5, 3), D(2027, 5, 4), "temporal"),
    ("What's on 12 May?", D(2026, 5, 12), D(2026, 5, 13), "temporal"),
    ("What will I do in March?", D(2027, 3, 1), D(2027, 4, 1), "temporal"),
    ("When is the dentist next Friday?", D(2026, 5, 8), D(2026, 5, 9), "hybrid"),
    # Next to a date, a weekend is not this week's: the date's range is searched for it.
    ("What did Maria do last weekend before April 10, 2023?", None, D(2023, 4, 10), "hybrid"),
    ("Where did I go the weekend after 3 May?", D(2026, 5, 4), None, "hybrid"),
]


@pytest.mark.parametrize(("question", "since", "until", "mode"), AHEAD_CASES, ids=[case[0] for case in AHEAD_CASES])
def test_it_reads_the_days_to_come_as_it_reads_the_past(
    question: str, since: datetime, until: datetime, mode: str
) -> None:
    meaning = interpret(question, now=NOW, zone=BERLIN)
    assert meaning.date_range == DateRange(since=since, until=until, clock="content")
    assert meaning.mode == mode


def test_the_weekend_on_a_sunday_is_the_one_under_way() -> None:
    sunday = datetime(2026, 5, 10, 11, tzinfo=BERLIN)
    assert interpret("What did I do at the weekend?", now=sunday, zone=BERLIN).date_range == DateRange(
        since=D(2026, 5, 9), until=D(2026, 5, 11)
    )
    assert interpret("What's on next weekend?", now=sunday, zone=BERLIN).date_range == DateRange(
        since=D(2026, 5, 16), until=D(2026, 5, 18)
    )


def test_tomorrow_is_the_users_tomorrow_west_of_utc() -> None:
    # 02:00 UTC on 7 May is still the evening of 6 May in Los Angeles.
    now = datetime(2026, 5, 7, 2, tzinfo=UTC)
    date_range = interpret("what's on tomorrow?", now=now, zone=LOS_ANGELES).date_range
    assert date_range is not None and date_range.since is not None
    assert date_range.since.isoformat() == "2026-05-07T00:00:00-07:00"


def test_in_a_number_of_years_is_a_date_only_in_a_question_that_looks_ahead() -> None:
    assert interpret("How long did the fighting last in Seven Years War?", now=NOW, zone=BERLIN).date_range is None
    assert interpret("What's on in two weeks?", now=NOW, zone=BERLIN).date_range is not None


def test_a_question_without_a_time_that_asks_ahead_stays_semantic() -> None:
    meaning = interpret("When is my dentist appointment?", now=NOW, zone=BERLIN)
    assert (meaning.mode, meaning.date_range) == ("semantic", None)


def test_a_weekday_written_with_its_whole_date_is_not_read_again() -> None:
    text = "Dentist appointment\nMonday 7 December 2026, 10:30–11:00"
    assert with_dates(text, date(2026, 11, 27)) == text


@pytest.mark.parametrize(
    ("text", "said_on", "days"),
    [
        # A date without its year is the nearer reading: a plan written weeks before, an event told after.
        ("1:1 w Priya - she's off 2-6 Nov", date(2026, 10, 6), [(date(2026, 11, 2), date(2026, 11, 7))]),
        ("Back from Lisbon, 2-6 Nov was lovely", date(2026, 12, 1), [(date(2026, 11, 2), date(2026, 11, 7))]),
        ("From November the sessions move indoors", date(2026, 10, 20), [(date(2026, 11, 1), date(2026, 12, 1))]),
        ("Last Friday I finally rang the bank", date(2026, 11, 25), [(date(2026, 11, 20), date(2026, 11, 21))]),
        (
            "Dentist tmrw, Thurs 9.40am w Dr Keane",
            date(2026, 11, 24),
            [(date(2026, 11, 25), date(2026, 11, 26)), (date(2026, 11, 26), date(2026, 11, 27))],
        ),
        ("see you on Friday", date(2026, 11, 20), []),  # the last Friday or the next: left out
        ("This year I want to run a marathon", date(2026, 3, 1), []),  # too many days to be found by
        ("I ran 5k in 25 minutes", date(2026, 3, 1), []),
        # A final or following day is no date: not yesterday, not tomorrow.
        ("pay Finn's school tour on the app - last day!!", date(2026, 12, 7), []),
        ("applications close on the last day of term", date(2026, 12, 7), []),
        ("they rang back the next day", date(2026, 12, 7), []),
    ],
)
def test_a_passage_keeps_the_days_it_speaks_of(text: str, said_on: date, days: list[tuple[date, date]]) -> None:
    assert mentioned(text, said_on) == days
