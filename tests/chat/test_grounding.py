"""The citation check on its own: which sentences and markers of an answer survive."""

from chat.grounding import ground

SHELF = "Sam: I just finished The Hobbit by J. R. R. Tolkien, and Dr. Okafor lent me the next one."


def test_initials_and_titles_do_not_end_a_sentence() -> None:
    grounded = ground("Sam read J. R. R. Tolkien, lent by Dr. Okafor [1].", [SHELF])
    assert grounded.text == "Sam read J. R. R. Tolkien, lent by Dr. Okafor [1]."
    assert len(grounded.check["sentences"]) == 1 and grounded.markers == [1]


# A diary entry as the model reads it (and as it is checked): the header, then the line the answer
# rests on among others about other things.
DIARY = (
    "Diary — Easter weekend (30 March 2024)\n"
    "Took the kids to the library on Saturday morning. They spent ages in the comics corner and came home with a pile "
    "of books each. The boiler made that clanking noise again, so I rang the plumber. Must remember to renew the car "
    "insurance before the end of the month. [photo: two children reading on a beanbag]"
)
PHYSIO = (
    "Physio, Tuesday: left knee much better. Keep up the squats and the hamstring stretches, ice it after long "
    "walks, next appointment in three weeks."
)


def test_a_short_answer_is_judged_by_the_statement_it_rests_on() -> None:
    # Beside the whole entry "Local library" scores 0.34, under the threshold; beside "Took the kids to
    # the library on Saturday morning" it clears it.
    grounded = ground("Local library [1]", [DIARY, PHYSIO])
    assert grounded.text == "Local library [1]" and grounded.markers == [1]
    # A statement still has to speak to it: nothing in the notes is about swimming or a picnic.
    assert ground("Swimming lessons and a picnic [1]", [DIARY, PHYSIO]).text == ""


GARDEN = "Garden jobs: fix the shed door hinge, net the brassicas, and plant the seed potatoes in March."


def test_a_list_keeps_its_lines_and_loses_only_what_no_passage_supports() -> None:
    answer = "- Fix the shed door hinge [1]\n- Net the brassicas [1]\n- Repaint the fence with blue varnish [1]"
    grounded = ground(answer, [GARDEN])
    assert grounded.text == "- Fix the shed door hinge [1]\n- Net the brassicas [1]", grounded.text


def test_a_numbered_list_keeps_its_numbers_in_front_of_each_item() -> None:
    # "1." followed by a space reads as the end of a sentence: the small model's numbered lists came out
    # as "1 [1]. Wall slides 3x10 [2]" before the numbers were set apart from the sentences.
    grounded = ground("1. Net the brassicas\n\n2. Fix the shed door hinge [1]\n3. Repaint the fence in blue", [GARDEN])
    assert grounded.text == "1. Net the brassicas [1]\n2. Fix the shed door hinge [1]", grounded.text
    assert [record["text"] for record in grounded.check["sentences"]][:2] == [
        "Net the brassicas",
        "Fix the shed door hinge",
    ]


ONE_TO_ONE = (
    "1:1 with Rebecca (3 December 2026)\n"
    "She's putting me forward for promotion: 4% raise from January, review again in 6 months.\n"
    "Car: Kavanagh Motors did the front pads and discs, €240, about 2 hrs."
)


def test_a_sentence_that_gives_a_number_another_unit_is_dropped() -> None:
    summary = (
        "Rebecca is putting you forward for promotion [1]. "
        "It comes with a $4 raise from January [1]. "
        "It will be reviewed again in 6 months [1]."
    )
    grounded = ground(summary, [ONE_TO_ONE])
    assert grounded.text == (
        "Rebecca is putting you forward for promotion [1]. It will be reviewed again in 6 months [1]."
    )
    assert [record.get("misquoted") for record in grounded.check["sentences"]] == [None, ["$4"], None]
    # A fact answer that misreads its number keeps nothing: the chat abstains rather than mislead.
    assert ground("The brakes took 240 hours [1].", [ONE_TO_ONE]).text == ""
    assert ground("The brakes cost $240 [1].", [ONE_TO_ONE]).text == ""


def test_a_number_in_its_own_unit_or_in_words_the_notes_leave_bare_stands() -> None:
    for answer in (
        "A 4 per cent raise from January [1].",
        "The brakes cost €240 and took about 2 hours [1].",
        "The front pads and discs cost 240 € [1].",
    ):
        assert ground(answer, [ONE_TO_ONE]).text == answer
    # The notes write the budget bare: the answer's currency is the model's reading, not a misquote — kept
    # where the passages count in it elsewhere, taken off where they never name it (the 1.5B writes "$").
    budget = "Monthly budget\ngroceries 700\neating out / takeaways 150"
    answer = "Your monthly food budget is €700 [1]."
    assert ground(answer, [budget, ONE_TO_ONE]).text == answer
    assert ground(answer, [budget]).text == "Your monthly food budget is 700 [1]."
    assert ground("Your monthly food budget is $700 [1].", [budget, ONE_TO_ONE]).text == (
        "Your monthly food budget is 700 [1]."
    )


ARCHITECT = (
    "met Siobhan Kearney (architect) at the house\n"
    "rooflight over the table instead of 2 velux - cost about the same, €3k more light\n"
    "steel beam needed where the back wall comes out - engineer Colm to check, ~€1,200 for calcs\n"
    "she said budget realistic is 85-95k incl VAT, NOT the 60k we had in mind"
)


def test_a_sum_of_money_the_notes_never_give_is_dropped() -> None:
    """Seen in a browser walk: "How much will the extension cost?" → "The extension will cost €3,200 [1]."."""
    assert ground("The extension will cost €3,200 [1].", [ARCHITECT]).text == ""
    for answer in (
        "The architect thinks a realistic budget is €85,000 to €95,000 including VAT [1].",
        "The structural calculations cost about €1,200 [1].",
        "The realistic budget is €35,000 more than the €60,000 you had in mind [1].",  # 95k less 60k
    ):
        assert ground(answer, [ARCHITECT]).text == answer


def test_a_lead_in_with_nothing_after_its_colon_is_no_answer() -> None:
    # Seen in a browser walk (2026-12-07): "What did the doctor say?" → "Dr Okafor: [1]", the note's title
    # and a colon, kept because the passage "supports" its one word.
    note = "Dr Okafor 10.30 Tues\nbloods came back fine, vit D a bit low -> 1000 IU daily over winter"
    assert ground("Dr Okafor:", [note]).text == ""
    listed = ground("Dr Okafor said:\n- bloods came back fine [1]", [note])
    assert listed.text.startswith("Dr Okafor said:") and listed.text.endswith("\n- bloods came back fine [1]")
