"""The citation check on its own: which sentences and markers of an answer survive."""

from chat.grounding import ground

SHELF = "Tim: I just finished The Lion, the Witch and the Wardrobe by C. S. Lewis, and Dr. Lee lent me the next one."


def test_initials_and_titles_do_not_end_a_sentence() -> None:
    grounded = ground("Tim read C. S. Lewis, lent by Dr. Lee [1].", [SHELF])
    assert grounded.text == "Tim read C. S. Lewis, lent by Dr. Lee [1]."
    assert len(grounded.check["sentences"]) == 1 and grounded.markers == [1]


# LoCoMo conv-26, session 15, as the model reads it (and as it is checked): the header, then the line the
# answer rests on among others about other things.
PARK = (
    "Caroline and Melanie — session 15 (28 August 2023, Caroline and Melanie, 3:19 pm on 28 August, 2023)\n"
    "Melanie: Hey Caroline! Since we last spoke, I took my kids to a park yesterday. They had fun exploring and "
    "playing. It was nice seeing them have a good time outdoors. Time flies, huh? What's new with you? "
    "[shares a photo: a photo of a playground with a climbing net and a slide]"
)
ART = (
    "Melanie: Wow, Caroline, that's gorgeous! I love the self-acceptance and love theme. How does art help you "
    "with your self-discovery and acceptance journey? [shares a photo: a photo of a woman is making a vase on a wheel]"
)


def test_a_short_answer_is_judged_by_the_statement_it_rests_on() -> None:
    # Beside the whole passage "National park" scored 0.37, under the threshold; beside "I took my kids
    # to a park yesterday" it clears it.
    grounded = ground("National park [1]", [PARK, ART])
    assert grounded.text == "National park [1]" and grounded.markers == [1]
    # A statement still has to speak to it: nothing in the passages is about a theme park's rides.
    assert ground("Roller coasters and water slides [1]", [PARK, ART]).text == ""


GARDEN = "Garden jobs: fix the shed door hinge, net the brassicas, and plant the seed potatoes in March."


def test_a_list_keeps_its_lines_and_loses_only_what_no_passage_supports() -> None:
    answer = "- Fix the shed door hinge [1]\n- Net the brassicas [1]\n- Repaint the fence with blue varnish [1]"
    grounded = ground(answer, [GARDEN])
    assert grounded.text == "- Fix the shed door hinge [1]\n- Net the brassicas [1]", grounded.text
