"""Which words of a note say a word of the question (`chat.kinds`, from WordNet)."""

import pytest

from chat.kinds import says


@pytest.mark.parametrize(
    ("asked", "written"),
    [
        ("medication", "naproxen"),  # a kind of it, three steps down
        ("tooth", "molars"),  # a kind of it, plural
        ("teeth", "molar"),  # an irregular plural asked
        ("loo", "toilet"),  # one step up
        ("sofa", "couch"),  # the same thing
        ("holiday", "vacation"),
        ("animal", "turtle"),
    ],
)
def test_a_synonym_or_a_kind_says_the_word(asked: str, written: str) -> None:
    assert says(asked, written)


@pytest.mark.parametrize(
    ("asked", "written"),
    [
        ("grandpa", "grandma"),
        ("husband", "wife"),
        ("dog", "cat"),
        ("king", "queen"),  # a rare shared sense ("a competitor who holds a preeminent position") does not count
        ("aquarium", "zoo"),
        ("snake", "turtle"),
        ("snake", "reptile"),  # more than one step up: a note about reptiles does not say snakes
        ("violin", "instrument"),
        ("official", "unofficial"),
        ("dentist", "doctor"),
    ],
)
def test_a_word_of_the_same_family_does_not(asked: str, written: str) -> None:
    assert not says(asked, written)
