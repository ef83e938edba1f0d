"""The detail check: a question with a rare word that none of the passages has.

A question can get one detail wrong and everything else right: the notes say Sam's watch was a gift
from his grandma, the question asks for his grandpa's; Priya keeps ferrets, the question
asks about her rabbits. The line about the real detail matches every other word, and a small model
answers from it.
"""

from dataclasses import replace
from datetime import UTC, datetime

from chat.checks import missing_details
from chat.selectors import Hit
from chat.services import check_answer

WATCH = """Sam and Priya — Sunday catch-up

Sam: This watch is really special to me - it was a gift from my grandma when I moved to Leeds.

Priya: It's lovely! Do you wear it every day?"""

PETS = "Priya: I've had my ferrets for 3 years now and they still make me laugh every day!"

FETE = "Lena: We're planning a bake sale and a quiz night for the school roof fundraiser."


def test_a_swapped_detail_is_caught() -> None:
    assert missing_details("What was the gift from Sam's grandpa?", "A watch.", [WATCH]) == ["grandpa"]
    assert missing_details("For how long has Priya had her rabbits?", "3 years.", [PETS]) == ["rabbits"]


def test_the_detail_the_notes_tell_of_passes() -> None:
    assert missing_details("What was the gift from Sam's grandma?", "A watch.", [WATCH]) == []
    assert missing_details("For how long has Priya had her ferrets?", "3 years.", [PETS]) == []


def test_another_ending_or_a_typo_is_the_same_word() -> None:
    assert missing_details("For how long has Priya had her ferret?", "3 years.", [PETS]) == []
    question = "What events is Lena planning for the school roof funraiser?"
    assert missing_details(question, "A bake sale and a quiz night.", [FETE]) == []


def test_a_word_typed_without_its_accents_is_the_same_word() -> None:
    dinner = "Friday\ndinner with Tom, his fiancée Orla is a vet in Naas"
    assert missing_details("What does Tom's fiancee do?", "She is a vet in Naas.", [dinner]) == []
    assert missing_details("What does Tom's bridesmaid do?", "She is a vet in Naas.", [dinner]) == ["bridesmaid"]


def test_the_doer_and_the_deed_are_one_word() -> None:
    # The note never says "fitter": it says the fitting is in the quote and when she can start.
    kitchen = "Kitchen\nquote came in at 8,450 incl fitting. Aoife says she can start 11 Jan"
    assert missing_details("When can the fitter start?", "She can start on 11 January.", [kitchen]) == []
    hike = "Sunday: hiking the Wicklow Way with Dara, 22 km, boots held up"
    assert missing_details("How far did the hikers go on Sunday?", "22 km.", [hike]) == []
    # A word of another root is still missing.
    assert missing_details("Who was the plumber for Priya?", "Her ferrets.", [PETS]) == ["plumber"]


def test_a_dislike_the_notes_never_state_is_caught() -> None:
    # Omar loves crime dramas; asked which shows he hates, the notes have no answer.
    shows = "Omar: Crime dramas are my thing - I can get through a whole series in a weekend."
    assert missing_details("What kind of shows does Omar hate watching the most?", "Crime dramas.", [shows]) == ["hate"]
    assert missing_details(
        "Which is Lena's least favourite board game?", "Monopoly.", ["Lena: Monopoly is my favourite!"]
    ) == ["least"]
    hated = "Omar: I hate reality shows, they make me cringe."
    assert missing_details("What kind of shows does Omar hate?", "Reality shows.", [hated]) == []


def test_common_words_and_what_people_do_are_paraphrased_freely() -> None:
    # "activity" is common; "publicize" stands where a verb does ("did Lena *publicize*").
    assert missing_details("What activity did Lena plan for the school?", "A bake sale.", [FETE]) == []
    assert missing_details("How did Lena publicize the school fundraiser?", "A bake sale.", [FETE]) == []


def test_a_word_in_s_before_its_object_is_what_someone_does() -> None:
    # The notes say the walks "clear my head", never "declutters".
    walks = "Lena: Long walks with the dog are how I switch off - they really clear my head."
    question = "Which activity helps Lena switch off and declutters her mind?"
    assert missing_details(question, "Long walks with the dog.", [walks]) == []
    book = "Omar: I'm reading Middlemarch at the moment and I'd tell anyone to give it a go."
    question = "What book is Omar currently reading and recommends to others?"
    assert missing_details(question, "Middlemarch.", [book]) == []
    # After an article, a possessive or "of", a word in -s is a thing: a detail the notes must have.
    assert missing_details("What did Priya buy her rabbits to eat?", "Ferrets.", [PETS]) == ["rabbits"]


def test_a_word_ending_in_ing_after_an_article_or_possessive_is_a_thing() -> None:
    # Sam's setback was in his painting, never in "sculpting".
    painting = "Sam: A big setback with my painting project last week: the canvas warped in the damp."
    question = "What was the setback Sam faced in his sculpting project?"
    assert missing_details(question, "The canvas warped.", [painting]) == ["sculpting"]
    question = "What was the setback Sam faced in his painting project?"
    assert missing_details(question, "The canvas warped.", [painting]) == []
    # Where a verb stands it is still left out: "Sam *sculpting*" is what he does.
    assert missing_details("What setback did Sam face while sculpting?", "The canvas warped.", [painting]) == []


def test_without_a_line_that_speaks_to_the_answer_it_has_no_opinion() -> None:
    assert missing_details("What was the gift from Sam's grandpa?", "A bicycle.", [WATCH]) == []


WATCH_HIT = Hit(
    chunk_id=1, source_id=1, source_title="Sam and Priya — Sunday catch-up", kind="note", text=WATCH,
    score=1.0, similarity=0.9, text_rank=0.0, occurred_at=datetime(2024, 4, 14, tzinfo=UTC), anchor={},
)  # fmt: skip


def test_an_answer_resting_on_a_swapped_detail_abstains() -> None:
    hit = WATCH_HIT
    swapped = check_answer(question="What was the gift from Sam's grandpa?", answer="A watch [1].", hits=[hit])
    assert swapped.check["abstained_by"] == "detail" and "'grandpa'" in swapped.check["reason"]
    assert not swapped.markers
    told = check_answer(question="What was the gift from Sam's grandma?", answer="A watch [1].", hits=[hit])
    assert "abstained_by" not in told.check and told.markers == [1]


def test_a_word_the_source_has_only_in_its_title_is_in_the_notes() -> None:
    # The person titled the recording "JFK inaugural address"; its transcript never says "JFK".
    speech = Hit(
        chunk_id=2, source_id=2, source_title="JFK inaugural address", kind="audio",
        text="And so, my fellow Americans: ask not what your country can do for you — ask what you can do for your country.",
        score=1.0, similarity=0.9, text_rank=0.0, occurred_at=datetime(2026, 11, 20, tzinfo=UTC), anchor={"start": 0},
    )  # fmt: skip
    question = "What did JFK ask his fellow Americans?"
    told = check_answer(question=question, answer="To ask what they can do for their country [1].", hits=[speech])
    assert "abstained_by" not in told.check and told.markers == [1]
    untitled = replace(speech, source_title="Recording 12")
    assert check_answer(question=question, answer=told.text, hits=[untitled]).check.get("abstained_by") == "detail"


def test_a_file_names_words_are_the_sources_words() -> None:
    # An upload keeps its file's name as its title; "the arXiv paper" is in it, though no passage says "arXiv".
    page = Hit(
        chunk_id=3, source_id=3, source_title="academic_arxiv2305.03393_page9", kind="pdf",
        text="It is evident that with OTSL, our model achieves the same TED score and slightly better mAP scores "
        "in comparison to HTML. However OTSL yields a 2x speed up in the inference runtime over HTML.",
        score=1.0, similarity=0.9, text_rank=0.0, occurred_at=datetime(2024, 8, 22, tzinfo=UTC), anchor={"page": 1},
    )  # fmt: skip
    answer = "The arXiv paper says OTSL yields a 2x speed up in inference over HTML [1]."
    told = check_answer(question="What does the arXiv paper say about OTSL?", answer=answer, hits=[page])
    assert "abstained_by" not in told.check and told.markers == [1]
    other = check_answer(question="What does the bioRxiv paper say about OTSL?", answer=answer, hits=[page])
    assert other.check.get("abstained_by") == "detail"


def test_an_answer_that_only_repeats_the_question_abstains() -> None:
    hit = WATCH_HIT
    question = "What gift did Sam get from his grandma?"
    echoed = check_answer(question=question, answer="Sam's gift from his grandma [1].", hits=[hit])
    assert echoed.check["abstained_by"] == "restated" and not echoed.markers
    told = check_answer(question=question, answer="Sam got a watch from his grandma [1].", hits=[hit])
    assert "abstained_by" not in told.check and told.markers == [1]


def test_the_checks_are_asked_in_order_and_a_bench_can_leave_one_out() -> None:
    from chat.checks import CHECKS, objection

    assert [check.name for check in CHECKS] == [
        "names",
        "restated",
        "person",
        "detail",
        "denial",
        "opposite",
        "other kind",
        "contradicted",
    ]
    question, answer = "What was the gift from Sam's grandpa?", "A watch."
    name, reason = objection(question, answer, [WATCH]) or ("", "")
    assert name == "detail" and "'grandpa'" in reason
    assert objection(question, answer, [WATCH], [check for check in CHECKS if check.name != "detail"]) is None


HOME_WIFI = """Home internet and wifi details
Brightwave fibre, the router is in the hall press
guest network: BrennanGuest, password fridge-magnet-42"""

TRIP = """Copenhagen trip
Hotel Axel Guldsmeden in Vesterbro, 3 nights; it has a sauna on the roof
flight SK538 Friday 06:25"""


def test_a_detail_only_another_source_tells_is_missing_from_the_answers_source() -> None:
    # The home network's note has the password; only the trip's note speaks of a sauna.
    question = "What's the password for the sauna?"
    answer = "The password for the sauna is fridge-magnet-42 [1]."
    assert missing_details(question, answer, [HOME_WIFI, TRIP]) == ["sauna"]
    assert missing_details(question, answer, [HOME_WIFI, TRIP], within_source=False) == []
    # Told in the same note as the password, it is answered.
    trip = TRIP + "\nsauna door code / password: 4471"
    assert missing_details(question, "The sauna's password is 4471 [2].", [HOME_WIFI, trip]) == []


def test_a_word_for_the_same_thing_or_a_kind_of_it_is_not_a_missing_detail() -> None:
    # A person's notes say it their way: the question's medication is the note's naproxen.
    gp = "GP, Tuesday\nshoulder still sore. rx naproxen 500mg 2x/day with food + omeprazole"
    question = "What medication did the doctor put me on for my shoulder?"
    assert missing_details(question, "Naproxen 500mg twice a day.", [gp]) == []
    dentist = "Dentist\nchipped filling lower left, back molar. Booked for the 9th at 10:30."
    assert (
        missing_details("Which tooth is the dentist going to look at?", "The back molar, lower left.", [dentist]) == []
    )
    plumber = "Plumber\nupstairs toilet keeps running: the fill valve in the cistern is shot."
    assert missing_details("What's wrong with the upstairs loo?", "The fill valve is shot.", [plumber]) == []


def test_a_word_of_the_same_family_is_still_another_detail() -> None:
    # Siblings in WordNet are not the same thing: a zoo is not an aquarium, turtles are not snakes.
    zoo = "Lena: We took the kids to the zoo on Saturday - the penguins were the hit of the day."
    assert missing_details("What did Lena see at the aquarium?", "The penguins.", [zoo]) == ["aquarium"]
    snakes = "Priya: I've had my turtles for 3 years now, and a pair of geckos."
    assert missing_details("For how long has Priya had her snakes?", "3 years.", [snakes]) == ["snakes"]


FLAT = "Flat hunting\nViewed the two-bed on Leeson St: 1,850 a month, 62 square metres, flat 4B on the 3rd floor."


def test_a_number_the_notes_never_give_is_a_swapped_detail() -> None:
    # The note's rent is 1,850 for 62 square metres: asked about another figure, it is about another flat.
    assert missing_details("Which flat was 2,100 a month?", "The two-bed on Leeson St.", [FLAT]) == ["2,100"]
    assert missing_details("Which flat had 75 square metres?", "The two-bed on Leeson St.", [FLAT]) == ["75"]
    assert missing_details("Which flat was 1850 a month?", "The two-bed on Leeson St.", [FLAT]) == []


def test_counts_dates_and_years_are_not_numbers_to_find() -> None:
    # Small counts are written as words or not at all; a day of the month and a year are times,
    # which the search reads: the note's date is not in its words.
    assert missing_details("Which 2 flats did I view?", "The two-bed on Leeson St.", [FLAT]) == []
    assert missing_details("Which flat did I view on 24 November?", "The two-bed on Leeson St.", [FLAT]) == []
    assert missing_details("Which flat did I view in summer 2026?", "The two-bed on Leeson St.", [FLAT]) == []
    history = "Paris\nThe Eiffel Tower was finished in 1889, and the Sacré-Cœur in 1914."
    assert missing_details("What was finished in the 1880s?", "The Eiffel Tower.", [history]) == []
    assert missing_details("What was finished in 1789?", "The Eiffel Tower.", [history]) == ["1789"]


def test_a_word_of_the_heading_over_the_passage_is_in_the_passages() -> None:
    # Seen in a browser walk (2026-12-07): "Which kitchen quote was cheaper?" over a Markdown note whose
    # quotes stand under "## Quotes" was turned away: "The passages never mention 'quote'."
    quotes = Hit(
        chunk_id=1, source_id=1, source_title="Kitchen renovation", kind="note", score=1.0, similarity=0.8,
        text="- Murphy Kitchens: €14,200, 6 weeks, can start 12 Jan\n- IKEA + fitter (Tomasz): €9,800, fitter available Feb",
        text_rank=0.0, occurred_at=datetime(2026, 12, 7, 18, 0, tzinfo=UTC),
        anchor={"heading": ["Kitchen renovation", "Quotes"]},
    )  # fmt: skip
    question, answer = "Which quote for the kitchen came from a fitter?", "IKEA + fitter (Tomasz): €9,800 [1]."
    answered = check_answer(question=question, answer=answer, hits=[quotes])
    assert answered.text == "IKEA + fitter (Tomasz): €9,800 [1]."
    # Where no heading says it, the word is still missing.
    answered = check_answer(question=question, answer=answer, hits=[replace(quotes, anchor={})])
    assert answered.check["abstained_by"] == "detail"
