"""The citation check on its own: which sentences and markers of an answer survive."""

from chat.grounding import ground

SHELF = "Tim: I just finished The Lion, the Witch and the Wardrobe by C. S. Lewis, and Dr. Lee lent me the next one."


def test_initials_and_titles_do_not_end_a_sentence() -> None:
    grounded = ground("Tim read C. S. Lewis, lent by Dr. Lee [1].", [SHELF])
    assert grounded.text == "Tim read C. S. Lewis, lent by Dr. Lee [1]."
    assert len(grounded.check["sentences"]) == 1 and grounded.markers == [1]
