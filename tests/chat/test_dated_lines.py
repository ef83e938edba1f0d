"""A "when" question over a diary: the day a line stands under is its answer.

People head their days in a diary or a log ("Sat 28 Nov", "## Monday 3 March") and write what
happened on the lines below. The small local model reads such a note and still says "I couldn't find
that" to "When did I fix the puncture on Sam's bike?" (seen in a browser, 2026-12-01), so when it turns
a "when" question away, the line that holds the question's words gives the day of its heading — checked
like any answer. Notes go through the real pipeline; the scripted model stands in for the model server.
"""

from datetime import date

import pytest

from chat.temporal import under_date_headings
from tests.factories import ApiClient, make_user
from tests.scripted_model import Script, ScriptedModel

DIARY = """Sat 28 Nov
Sam's bike had a flat tyre again - fixed the puncture with the patch kit in the shed
bought a new inner tube at Halfords (€8.99) just in case
Sun 29 Nov
made soup with the last of the squash, froze 3 portions
called Mam, she's coming up on the 12th for the weekend"""


def test_each_line_is_under_the_day_of_the_heading_above_it() -> None:
    lines = under_date_headings(DIARY, date(2026, 12, 1))
    assert lines[0] == ("Sat 28 Nov", None)  # a heading is no line of its day
    assert [day for _, day in lines[1:3]] == [date(2026, 11, 28)] * 2
    assert [day for _, day in lines[4:]] == [date(2026, 11, 29)] * 2
    # A yearless day is the last one on or before the note's date; a line with a date and more is no heading.
    log = "## Monday 3 March\ncall Mam\n28 Nov: dentist at 9\nback to work"
    assert [day for _, day in under_date_headings(log, date(2026, 12, 1))] == [None] + [date(2026, 3, 3)] * 3
    assert [day for _, day in under_date_headings("no dates here\nat all", date(2026, 12, 1))] == [None, None]


@pytest.mark.django_db(transaction=True)
def test_a_when_question_the_model_turns_away_is_answered_by_the_lines_day(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    api = ApiClient.for_user(make_user("diarist"))
    body = api.post("/notes", {"title": "Weekend diary", "text": DIARY, "occurred_at": "2026-12-01T20:00:00Z"}).json()
    assert api.wait_for_job(body["job_id"])["status"] == "done"
    scripted_model.script = Script(tokens=["I couldn't find that ", "in your notes."])

    answer = api.post("/ask", {"question": "When did I fix the puncture on Sam's bike?"}).json()
    said = "On Saturday 28 November 2026: Sam's bike had a flat tyre again - fixed the puncture with the patch kit"
    assert answer["answer"] == said + " in the shed [1]"
    assert not answer["abstained"]
    assert [citation["source_id"] for citation in answer["citations"]] == [body["source_id"]]

    # Someone else's bike: the line is about Sam's, and the answer is turned away.
    other = api.post("/ask", {"question": "When did I fix the puncture on Tom's bike?"}).json()
    assert other["abstained"] and "28 November" not in other["answer"]
    # Not a "when" question, or one whose words no line holds: the model's own answer stands.
    assert api.post("/ask", {"question": "Did I fix the puncture on Sam's bike?"}).json()["abstained"]
    assert api.post("/ask", {"question": "When did I service the boiler?"}).json()["abstained"]
