"""The other-kind check: a question about one kind of a thing answered from a line about another kind."""

from chat.checks import other_kind

PACKING = "Camping packing list\n- hiking boots + 2 pairs of wool socks\n- rain jacket\n- head torch"


def test_football_boots_answered_with_hiking_boots_are_turned_away() -> None:
    reason = other_kind("What size football boots does Finn wear?", "Finn wears hiking boots [1].", [PACKING])
    assert reason == "The question asks of football boots; the passages tell of hiking boots."


def test_the_kind_the_passages_name_passes() -> None:
    assert other_kind("Which socks go with the hiking boots?", "Two pairs of wool socks [1].", [PACKING]) is None


def test_a_kind_named_anywhere_in_the_answers_source_passes() -> None:
    # The packing list names the football boots further down: the answer may rest on either line.
    packing = PACKING + "\n- football boots for Saturday's match (size 4)"
    assert other_kind("What size football boots does Finn wear?", "Size 4 [1].", [packing]) is None


def test_a_verb_or_a_question_word_before_the_noun_names_no_kind() -> None:
    brakes = "Car brakes\nJamie (the technician) charged €240 for the front pads"
    assert other_kind("How much did the mechanic charge me for the brakes?", "€240 [1].", [brakes]) is None
    cars = "Cars\nTom bought a red car last week"
    assert other_kind("What colour car did Tom buy?", "Tom bought a red car [1].", [cars]) is None
    shopping = "Shopping\ngot hiking boots in Decathlon"
    assert other_kind("Where did I buy boots?", "In Decathlon [1].", [shopping]) is None


def test_an_adjective_after_the_word_is_no_thing() -> None:
    vet = "Biscuit at the vet\nflea + worm: Bravecto spot-on, next dose due in 3 months"
    assert other_kind("When is Biscuit's next flea treatment due?", "In 3 months [1].", [vet]) is None


def test_a_thing_told_of_in_several_ways_may_be_the_one_asked_of() -> None:
    normans = "Normans\nThe distinct cultural and ethnic identity of the Normans emerged in the 10th century."
    answer = "In the 10th century [1]."
    assert other_kind("What century did the Normans first gain their separate identity?", answer, [normans]) is None


def test_a_kind_in_a_list_of_things_counts() -> None:
    packing = "Camping packing list\n- rain jackets, wellies, hiking boots"
    assert other_kind("What size football boots does Finn wear?", "Hiking boots [1].", [packing]) is not None
