"""The detail check: a question with a rare word that none of the passages has.

LoCoMo's other "not in the notes" questions swap a detail: the notes tell of grandma's necklace, the
question asks for grandpa's gift; Nate keeps turtles, the question asks about his snakes.
"""

from datetime import UTC, datetime

from chat.checks import missing_details
from chat.selectors import Hit
from chat.services import check_answer

NECKLACE = """Caroline and Melanie — session 4

Caroline: This necklace is super special to me - a gift from my grandma in my home country, Sweden.

Melanie: It's beautiful! Does it mean a lot to your family?"""

PETS = "Nate: I've had my turtles for 3 years now and they bring me tons of joy!"

SHELTER = "Maria: We're planning a chili cook-off and a ring-toss tournament for the homeless shelter fundraiser."


def test_a_swapped_detail_is_caught() -> None:
    assert missing_details("What was grandpa's gift to Caroline?", "A necklace.", [NECKLACE]) == ["grandpa"]
    assert missing_details("For how long has Nate had his snakes?", "3 years.", [PETS]) == ["snakes"]


def test_the_detail_the_notes_tell_of_passes() -> None:
    assert missing_details("What was grandma's gift to Caroline?", "A necklace.", [NECKLACE]) == []
    assert missing_details("For how long has Nate had his turtles?", "3 years.", [PETS]) == []


def test_another_ending_or_a_typo_is_the_same_word() -> None:
    assert missing_details("For how long has Nate had his turtle?", "3 years.", [PETS]) == []
    question = "What events is Maria planning for the homeless shelter funraiser?"
    assert missing_details(question, "A chili cook-off and a ring-toss tournament.", [SHELTER]) == []


def test_a_dislike_the_notes_never_state_is_caught() -> None:
    # LoCoMo conv-42: Nate loves action and sci-fi; the trap asks which movies he hates.
    movies = "Nate: I'm a big fan of action and sci-fi movies - I could watch them all weekend."
    assert missing_details("What type of movies does Nate hate watching the most?", "Action and sci-fi.", [movies]) == [
        "hate"
    ]
    assert missing_details(
        "Who is John's least favorite character?", "Aragorn.", ["John: Aragorn is my favorite!"]
    ) == ["least"]
    hated = "Nate: I hate horror movies, they give me nightmares."
    assert missing_details("What type of movies does Nate hate?", "Horror movies.", [hated]) == []


def test_common_words_and_what_people_do_are_paraphrased_freely() -> None:
    # "activity" is common; "symbolize" stands where a verb does ("did Maria *symbolize*").
    assert missing_details("What activity did Maria plan for the shelter?", "A chili cook-off.", [SHELTER]) == []
    assert missing_details("How did Maria symbolize the shelter fundraiser?", "A chili cook-off.", [SHELTER]) == []


def test_a_word_in_s_before_its_object_is_what_someone_does() -> None:
    # LoCoMo conv-42: the notes say the movies "spark my imagination", never "stimulate".
    movies = "Nate: Watching fantasy and sci-fi movies is my escape - they really spark my imagination."
    question = "Which activity helps Nate escape and stimulates his imagination?"
    assert missing_details(question, "Watching fantasy and sci-fi movies.", [movies]) == []
    game = "Nate: I'm playing Xenoblade Chronicles right now and I'd tell everyone to try it."
    question = "What game is Nate currently playing and recommends to others?"
    assert missing_details(question, "Xenoblade Chronicles.", [game]) == []
    # After an article, a possessive or "of", a word in -s is a thing: a detail the notes must have.
    assert missing_details("What did Nate buy his snakes to eat?", "Turtles.", [PETS]) == ["snakes"]


def test_a_word_ending_in_ing_after_an_article_or_possessive_is_a_thing() -> None:
    # LoCoMo conv-43: Tim's setback was in his writing, never in "coding".
    writing = "Tim: A big setback with my writing project last week: the plot just fell apart."
    question = "What was the setback Tim faced in his coding project?"
    assert missing_details(question, "The plot fell apart.", [writing]) == ["coding"]
    question = "What was the setback Tim faced in his writing project?"
    assert missing_details(question, "The plot fell apart.", [writing]) == []
    # Where a verb stands it is still left out: "Tim *coding*" is what he does.
    assert missing_details("What setback did Tim face while coding?", "The plot fell apart.", [writing]) == []


def test_without_a_line_that_speaks_to_the_answer_it_has_no_opinion() -> None:
    assert missing_details("What was grandpa's gift to Caroline?", "A bicycle.", [NECKLACE]) == []


NECKLACE_HIT = Hit(
    chunk_id=1, source_id=1, source_title="Caroline and Melanie — session 4", kind="note", text=NECKLACE,
    score=1.0, similarity=0.9, text_rank=0.0, occurred_at=datetime(2023, 5, 8, tzinfo=UTC), anchor={},
)  # fmt: skip


def test_an_answer_resting_on_a_swapped_detail_abstains() -> None:
    hit = NECKLACE_HIT
    swapped = check_answer(question="What was grandpa's gift to Caroline?", answer="A necklace [1].", hits=[hit])
    assert swapped.check["abstained_by"] == "detail" and "'grandpa'" in swapped.check["reason"]
    assert not swapped.markers
    told = check_answer(question="What was grandma's gift to Caroline?", answer="A necklace [1].", hits=[hit])
    assert "abstained_by" not in told.check and told.markers == [1]


def test_an_answer_that_only_repeats_the_question_abstains() -> None:
    hit = NECKLACE_HIT
    question = "What gift did Caroline get from her grandma?"
    echoed = check_answer(question=question, answer="Caroline's gift from her grandma [1].", hits=[hit])
    assert echoed.check["abstained_by"] == "restated" and not echoed.markers
    told = check_answer(question=question, answer="Caroline got a necklace from her grandma [1].", hits=[hit])
    assert "abstained_by" not in told.check and told.markers == [1]


def test_the_checks_are_asked_in_order_and_a_bench_can_leave_one_out() -> None:
    from chat.checks import CHECKS, objection

    assert [check.name for check in CHECKS] == ["names", "restated", "person", "detail"]
    question, answer = "What was grandpa's gift to Caroline?", "A necklace."
    name, reason = objection(question, answer, [NECKLACE]) or ("", "")
    assert name == "detail" and "'grandpa'" in reason
    assert objection(question, answer, [NECKLACE], [check for check in CHECKS if check.name != "detail"]) is None
