"""The denial checks: a question that asks what is *not* so, answered from a statement that denies nothing;
and an answer that asserts what its passage denies.

"By what means is imperialism never administered?" finds the paragraph that says how it *is*
administered; every word matches but the "never", and a small model answers with the opposite of what
was asked. Prose, notes and dialogue alike: the rule is one of English.
"""

import pytest

from chat.checks import CHECKS, contradicted, denial, objection

IMPERIALISM = (
    "Imperialism\nImperialism is a policy of extending a country's power and influence through colonization, "
    "use of military force, or other means. It is administered through diplomacy or military force."
)
BRAKES = (
    "Car: brakes\nKavanagh Motors did the front pads and discs, €240. The technician did not replace the rear "
    "tyres yet - says they'll do until the NCT."
)


@pytest.mark.parametrize(
    ("question", "answer", "passage", "turned_away"),
    [
        # The question denies; the statement the answer rests on does not.
        ("By what means is imperialism never administered?",
         "Imperialism is never administered through diplomacy or military force [1].", IMPERIALISM, True),
        ("What isn't imperialism administered through?",
         "Imperialism is administered through diplomacy or military force [1].", IMPERIALISM, True),
        ("What isn’t imperialism administered through?",  # a phone's curly apostrophe
         "Imperialism is administered through diplomacy or military force [1].", IMPERIALISM, True),
        # Typed as people type on a phone, without the apostrophe; or asked with "without".
        ("What isnt imperialism administered through?",
         "Imperialism is administered through diplomacy or military force [1].", IMPERIALISM, True),
        ("By what means is imperialism administered without force?",
         "Imperialism is administered through diplomacy or military force [1].", IMPERIALISM, True),
        # A question that asks yes or no ("isn't it …?") asks for no statement that denies.
        ("isnt imperialism administered through diplomacy?",
         "It is administered through diplomacy or military force [1].", IMPERIALISM, False),
        # Both deny: the answer is the one asked for.
        ("What did the technician not replace?", "He did not replace the rear tyres [1].", BRAKES, False),
        ("What didn’t the technician replace?", "He didn’t replace the rear tyres [1].", BRAKES.replace("did not", "didn’t"),
         False),
        # The question denies nothing: the check has no opinion.
        ("By what means is imperialism administered?",
         "Imperialism is administered through diplomacy or military force [1].", IMPERIALISM, False),
        # Nothing the answer says is in the passages: not this check's to judge.
        ("What was never fixed?", "The kitchen window [1].", BRAKES, False),
    ],
)  # fmt: skip
def test_a_question_that_denies_needs_a_statement_that_denies(
    question: str, answer: str, passage: str, turned_away: bool
) -> None:
    assert (denial(question, answer, [passage]) is not None) is turned_away
    objected = objection(question, answer, [passage], CHECKS)
    assert (objected is not None and objected[0] == "denial") is turned_away


def test_a_list_or_a_summary_is_not_judged_by_it() -> None:
    question = "Which means is imperialism never administered through?"
    answer = "- diplomacy [1]\n- military force [1]"
    assert objection(question, answer, [IMPERIALISM], CHECKS, shape="list") is None


PLUMBER = (
    "Plumber call\ncall w Dave (Pike Plumbing) - Tue 8 Sept\nso prob the pressure relief valve, part ~£45 + 1hr "
    "labour £70\ndoesnt take card, bank transfer or cash only"
)
INTERVIEW = "Tallyfern interview\nmy questions: team size (6 analysts), on-call? (no), tools (dbt + Snowflake + Looker)"
TICKETS = "Lankum tickets\nOrder no. 31-55871/DUB, 2 standing, collect at the box office"


@pytest.mark.parametrize(
    ("question", "answer", "passage", "turned_away"),
    [
        # The passage denies what the answer asserts (a small model read past the "doesnt").
        ("How do I pay him?", "You can pay him by card, bank transfer, or cash [1].", PLUMBER, True),
        ("How do I pay him?", "By bank transfer or cash [1].", PLUMBER, False),
        ("Can I pay the plumber by card?", "No, he doesn't take card [1].", PLUMBER, False),
        # A clause ends at punctuation: "(no)" answers the question before it and denies no tool.
        ("What tools does the team use?", "- dbt [1]\n- Snowflake [1]\n- Looker [1]", INTERVIEW, False),
        # "no." before a number is a number.
        ("What's the order number for the Lankum tickets?", "It is 31-55871/DUB [1].", TICKETS, False),
        # What the question names is not the answer's to assert.
        ("Does the technician say the rear tyres will do?", "Yes, until the NCT [1].", BRAKES, False),
    ],
)  # fmt: skip
def test_an_answer_that_asserts_what_its_passage_denies_is_turned_away(
    question: str, answer: str, passage: str, turned_away: bool
) -> None:
    assert (contradicted(question, answer, [passage]) is not None) is turned_away
    objected = objection(question, answer, [passage], CHECKS)
    assert (objected is not None and objected[0] == "contradicted") is turned_away
