"""What the model is shown: numbered sources dated in the person's own time zone."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from chat.selectors import Hit
from chat.services import check_answer, prompt_of, runs_joined


def test_sources_are_numbered_and_dated_in_the_persons_zone() -> None:
    late = Hit(
        chunk_id=1, source_id=1, source_title="Budget call", kind="audio", text="We agreed on 40k.", score=1.0,
        similarity=0.9, text_rank=0.0, occurred_at=datetime(2026, 5, 3, 23, 30, tzinfo=UTC), anchor={"start": 65.0},
    )  # fmt: skip
    utc = prompt_of(question="What budget?", hits=[late], history=[])[0]["content"]
    tokyo = prompt_of(question="What budget?", hits=[late], history=[], zone=ZoneInfo("Asia/Tokyo"))[0]["content"]
    assert "[1] Budget call (3 May 2026, 1:05)\nWe agreed on 40k." in utc
    assert "[1] Budget call (4 May 2026, 1:05)" in tokyo


def test_dates_said_relative_to_the_source_are_resolved_for_the_model_and_the_check() -> None:
    memo = Hit(
        chunk_id=2, source_id=2, source_title="Evening memo", kind="note", score=1.0, similarity=0.9, text_rank=0.0,
        text="I went to the support group yesterday. See you on Friday! Last Friday two of us ran. Last month was long.",
        occurred_at=datetime(2023, 5, 8, 22, 30, tzinfo=UTC), anchor={},
    )  # fmt: skip
    seen = prompt_of(
        question="When did I go to the support group?", hits=[memo], history=[], zone=ZoneInfo("Asia/Tokyo")
    )
    # 22:30 UTC on the 8th is the 9th in Tokyo, so "yesterday" there was the 8th.
    assert "support group yesterday (8 May 2023)." in seen[0]["content"]
    assert "See you on Friday!" in seen[0]["content"]  # a bare weekday may be the coming one: left alone
    assert "Last Friday (5 May 2023) two of us ran. Last month (April 2023) was long." in seen[0]["content"]
    # An answer that gives the resolved date is supported by the passage it came from.
    grounded = check_answer(
        question="When did I go to the support group?",
        answer="On 8 May 2023 [1].",
        hits=[memo],
        zone=ZoneInfo("Asia/Tokyo"),
    )
    assert grounded.text == "On 8 May 2023 [1]." and grounded.markers == [1]


def _passage(ordinal: int, text: str, anchor: dict[str, object], source_id: int = 3) -> Hit:
    return Hit(
        chunk_id=10 + ordinal, source_id=source_id, source_title="Voice memo", kind="audio", text=text, score=1.0,
        similarity=0.8, text_rank=0.0, occurred_at=datetime(2026, 5, 3, 9, 0, tzinfo=UTC), anchor=anchor,
        ordinal=ordinal,
    )  # fmt: skip


def test_a_recordings_consecutive_minutes_reach_the_model_as_one_source_from_its_first_minute() -> None:
    """Talk runs on across a passage's minute: "the budget is… / …forty thousand" read as one source."""
    hits = [
        _passage(0, "So for the budget we said", {"start": 0.0, "end": 58.5}),
        _passage(1, "forty thousand, not fifty.", {"start": 58.5, "end": 121.0}),
        _passage(3, "And the offsite is in May.", {"start": 180.0, "end": 240.0}),  # not the next minute
    ]
    joined = runs_joined(hits)
    assert [hit.text for hit in joined] == ["So for the budget we said\nforty thousand, not fifty.", hits[2].text]
    assert joined[0].anchor == {"start": 0.0, "end": 121.0} and joined[0].joined == (11,)
    shown = prompt_of(question="What budget?", hits=joined, history=[])[0]["content"]
    assert "[1] Voice memo (3 May 2026, 0:00)\nSo for the budget we said\nforty thousand" in shown
    assert "[2] Voice memo (3 May 2026, 3:00)" in shown
    # A PDF's pages stay apart however close: a citation names one page.
    pages = [_passage(0, "end of page one", {"page": 1}), _passage(1, "start of page two", {"page": 2})]
    assert len(runs_joined(pages)) == 2
