"""Answers speak to the person as "you" where they repeat the person's own "I"."""

from datetime import UTC, datetime

import pytest

from chat.selectors import Hit
from chat.services import check_answer
from chat.voice import spoken_to, the_user_as_you


@pytest.mark.parametrize(
    ("answer", "spoken"),
    [
        ("I ran 3.3 kilometers in Griffith Park [1].", "You ran 3.3 kilometers in Griffith Park [1]."),
        (
            "I'm bringing 30 sausages [3]. I am also bringing eggs.",
            "You're bringing 30 sausages [3]. You are also bringing eggs.",
        ),
        (
            "Daniel dropped it in at 8, I collected it at 5.30 [1].",
            "Daniel dropped it in at 8, you collected it at 5.30 [1].",
        ),
        ("The doctor put me on naproxen for my shoulder [1].", "The doctor put you on naproxen for your shoulder [1]."),
        ("- wall slides 3x10 [1]\n- Me and Daniel walk 5k [2]", "- wall slides 3x10 [1]\n- You and Daniel walk 5k [2]"),
        ("i was at the dentist [1].", "You were at the dentist [1]."),
        # Someone's words as they said them stay theirs; so does a numeral.
        ('Conor said "my favourite book" [1].', 'Conor said "my favourite book" [1].'),
        ("It is about World War I and Type I diabetes [2].", "It is about World War I and Type I diabetes [2]."),
        # Where the assistant speaks of itself, "I" is its own.
        (
            "I couldn't find the price, but it was delivered [1].",
            "I couldn't find the price, but it was delivered [1].",
        ),
        ("Mine is the blue one; myself and Aoife [1].", "Yours is the blue one; yourself and Aoife [1]."),
        ("Imelda met Michael [1].", "Imelda met Michael [1]."),
    ],
)
def test_the_first_person_becomes_the_second(answer: str, spoken: str) -> None:
    assert spoken_to(answer) == spoken


@pytest.mark.parametrize(
    ("answer", "spoken"),
    [
        ("The user is staying at Hotel Vesterlys [1].", "You are staying at Hotel Vesterlys [1]."),
        (
            "The user wrote down their thoughts about the gala [1]. They were tired.",
            "You wrote down your thoughts about the gala [1]. You were tired.",
        ),
        # From the first week (2026-12-07): the model goes on to call the user "they".
        (
            "The user planned to spend 3 weeks in Copenhagen with their partner, Daniel. They booked flights.",
            "You planned to spend 3 weeks in Copenhagen with your partner, Daniel. You booked flights.",
        ),
        (
            "The user also mentioned that they're into couch to 5k with Aoife and have been working on their "
            "shoulder [1].",
            "You also mentioned that you're into couch to 5k with Aoife and have been working on your shoulder [1].",
        ),
        # "They" after others it may point at is theirs: people named together, or the kids.
        (
            "The user met Grace and Ravi. They asked about SQL, and their questions were hard [1].",
            "You met Grace and Ravi. They asked about SQL, and their questions were hard [1].",
        ),
        (
            "The user bought the kids new boots; their old ones were too small [1].",
            "You bought the kids new boots; their old ones were too small [1].",
        ),
        ("They said the user was late [1].", "They said you were late [1]."),
        ("The user does their exercises twice a day [1].", "You do your exercises twice a day [1]."),  # no doe
        (
            "According to the notes, the user plans to fly on Friday [2].",
            "According to the notes, you plan to fly on Friday [2].",
        ),
        (
            "The user's sister lent it, and the user carries it always [1].",
            "Your sister lent it, and you carry it always [1].",
        ),
        # "their" after someone else is named may be theirs.
        (
            "The user met Grace and Ravi; their questions were hard [1].",
            "You met Grace and Ravi; their questions were hard [1].",
        ),
        ("The username is BrennanGuest [1].", "The username is BrennanGuest [1]."),
        ("THE USER IS BOOKED IN FOR 9AM [1].", "YOU ARE BOOKED IN FOR 9AM [1]."),
    ],
)
def test_the_user_is_you(answer: str, spoken: str) -> None:
    assert the_user_as_you(answer) == spoken


def test_a_pdf_answer_that_calls_the_person_the_user_says_you() -> None:
    pdf = _hit("pdf", "Appendix B: the payment is due on 3 March.")
    answered = check_answer(
        question="When is my payment due?", answer="The user's payment is due on 3 March [1].", hits=[pdf]
    )
    assert answered.text == "Your payment is due on 3 March [1]."
    assert "dated" not in answered.check  # said as "you", not answered from a date heading


def test_they_after_a_dropped_sentence_about_the_user_is_still_you() -> None:
    """Seen in the first week's "What did I write in my journal?": the sentence naming "the user" was not
    supported and went; the next one was shown as "They were snappy all week"."""
    journal = _hit("note", "I've been snappy all week and I know it's work. The claims report ate two evenings.")
    answered = check_answer(
        question="What did I write in my journal?",
        answer="The user wrote about a lovely trip to Paris. They were snappy all week because of work.",
        hits=[journal],
        shape="summary",
    )
    assert answered.text == "You were snappy all week because of work [1].", answered.check


def _hit(kind: str, text: str) -> Hit:
    return Hit(
        chunk_id=1, source_id=1, source_title="Thursday", kind=kind, text=text, score=1.0, similarity=0.9,
        text_rank=0.0, occurred_at=datetime(2026, 12, 3, 19, 0, tzinfo=UTC), anchor={},
    )  # fmt: skip


def test_an_answer_from_the_persons_note_says_you_one_from_a_pdf_keeps_its_authors_i() -> None:
    note = _hit("note", "ran 3.3 km in Griffith Park, knee ok\nI paid the plumber €110 cash")
    answered = check_answer(question="How much did I pay the plumber?", answer="I paid €110 cash [1].", hits=[note])
    assert answered.text == "You paid €110 cash [1]."

    pdf = _hit("pdf", "In this report I paid close attention to the plumber's fees of €110.")
    answered = check_answer(
        question="What fees?", answer="I paid close attention to the plumber's fees of €110 [1].", hits=[pdf]
    )
    assert answered.text.startswith("I paid close attention")


def test_a_transcript_keeps_its_speakers_i() -> None:
    dialogue = _hit("note", "Caroline: I went to the LGBTQ support group yesterday.\nMelanie: Wow, how was it?")
    answered = check_answer(
        question="Where did Caroline go?", answer="I went to the LGBTQ support group [1].", hits=[dialogue]
    )
    assert answered.text == "I went to the LGBTQ support group [1]."
