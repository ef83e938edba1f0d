"""What the model is shown: numbered sources dated in the person's own time zone."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from chat.selectors import Hit
from chat.services import _prompt


def test_sources_are_numbered_and_dated_in_the_persons_zone() -> None:
    late = Hit(
        chunk_id=1, source_id=1, source_title="Budget call", kind="audio", text="We agreed on 40k.", score=1.0,
        similarity=0.9, text_rank=0.0, occurred_at=datetime(2026, 5, 3, 23, 30, tzinfo=UTC), anchor={"start": 65.0},
    )  # fmt: skip
    utc = _prompt(question="What budget?", hits=[late], history=[])[0]["content"]
    tokyo = _prompt(question="What budget?", hits=[late], history=[], zone=ZoneInfo("Asia/Tokyo"))[0]["content"]
    assert "[1] Budget call (3 May 2026, 1:05)\nWe agreed on 40k." in utc
    assert "[1] Budget call (4 May 2026, 1:05)" in tokyo
