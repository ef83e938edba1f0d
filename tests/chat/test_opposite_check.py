"""The opposite check: a question that takes for granted a quality the passages give the opposite of."""

from chat.checks import opposite
from chat.kinds import opposites

IMPERIALISM = (
    "Imperialism\nThe term imperialism has been applied to the rapid spread of technologies and ideas across "
    "the empires of the nineteenth century, and to the trade that followed them."
)


def test_an_answer_from_a_line_that_says_the_opposite_is_turned_away() -> None:
    reason = opposite(
        "Imperialism is responsible for the slow spread of what?", "Technologies and ideas [1].", [IMPERIALISM]
    )
    assert reason is not None and "'slow'" in reason and "'rapid'" in reason


def test_the_quality_the_passage_gives_passes() -> None:
    assert (
        opposite(
            "Imperialism is responsible for the rapid spread of what?", "Technologies and ideas [1].", [IMPERIALISM]
        )
        is None
    )


def test_a_quality_the_passages_also_have_passes() -> None:
    # The note has "old" too: the question may mean that one.
    note = "Phones\nthe new phone is in the drawer, the old phone went to Mam"
    assert opposite("Where is the old phone?", "It went to Mam [1].", [note]) is None
    assert opposite("Where is the old charger?", "In the drawer [1].", ["Phones\nthe new charger is in the drawer"])


def test_a_line_that_says_both_sides_passes() -> None:
    # "tiny" is on the side of "small": the line tells of both dogs.
    note = "Dogs\nbig dog Rex, tiny pup Milo - Milo needs the vet Thursday"
    assert opposite("What's the name of the small dog?", "Milo [1].", [note]) is None


def test_words_after_a_verb_counts_and_directions_are_no_qualities() -> None:
    # "write down today": a particle, not a quality of "today".
    assert (
        opposite("What did I write down today?", "The plumber came [1].", ["Today\nplumber came, pressure up"]) is None
    )
    # Prose names the north and the south side by side; "two" and "first" are counts.
    region = "France\nProtestants live mostly in Alsace in the north-east and in the Cévennes in the south."
    assert opposite("What northern province has many protestants?", "Alsace [1].", [region]) is None
    assert (
        opposite(
            "What were the two first cities?", "Lyon and Nîmes [1].", ["Cities\nthe first cities were Lyon and Nîmes"]
        )
        is None
    )


def test_opposites_come_from_wordnet_with_their_clusters() -> None:
    assert {"fast", "rapid"} <= opposites("slow")
    assert "new" in opposites("old")
    assert opposites("table") == frozenset()
