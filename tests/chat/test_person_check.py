"""The person check: an answer resting on a line about someone other than the person asked about.

LoCoMo's "not in the notes" questions are mostly real questions with the person swapped: the notes
tell of Melanie's race, the question asks what Caroline realised after hers.
"""

from chat.checks import about_others, about_someone_else, only_names, only_the_question, told_of_someone_else

TALK = """Caroline and Melanie — session 4

Melanie: I ran a charity race for mental health last Saturday. It made me realise self-care is really important.

Caroline: That's amazing! Did you train for it long?

Melanie: For two months. You love running too, so come along next time."""


def test_an_answer_from_a_line_about_someone_else_is_caught() -> None:
    question = "What did Caroline realize after her charity race?"
    assert about_someone_else(question, "She realised self-care is really important.", [TALK])


def test_an_answer_about_the_person_asked_about_passes() -> None:
    question = "What did Melanie realize after her charity race?"
    assert not about_someone_else(question, "She realised self-care is really important.", [TALK])


def test_you_points_at_the_other_speaker() -> None:
    # "you love running" is Melanie telling Caroline about Caroline.
    assert not about_someone_else("What does Caroline love?", "Caroline loves running.", [TALK])
    assert about_someone_else("What does Melanie love?", "She loves running.", [TALK])


def test_questions_in_the_notes_assert_nothing() -> None:
    # Tim's question shares more words with the answer than John's reply does (LoCoMo conv-43).
    passages = [
        "Tim: It's awesome how our passions shape our lives. Do you have any big goals for your basketball career?",
        "John: Yeah! Winning a championship is my number one goal. I also want to make a difference off the court.",
    ]
    question = "What are John's goals with regards to his basketball career?"
    answer = "John's goals for his basketball career are winning a championship and making a difference."
    assert not about_someone_else(question, answer, passages)


def test_a_named_speaker_outweighs_other_names_the_line_shares() -> None:
    # LoCoMo conv-41: John's colleague invited John; the question makes Rob Maria's colleague.
    passages = [
        "Maria: Any plans for the weekend?",
        "John: Nothing too soon, but my colleague Rob invited me to a beginner's yoga class.",
    ]
    question = "What activity did Maria's colleague, Rob, invite her to?"
    assert about_someone_else(question, "A beginner's yoga class.", passages)
    assert not about_someone_else("What activity did John's colleague, Rob, invite him to?", "Yoga.", passages)
    # A question naming no speaker still counts the names it shares with the line.
    assert not about_someone_else("What class did Rob invite someone to?", "A beginner's yoga class.", passages)


def test_a_line_found_mostly_by_the_question_still_counts() -> None:
    # LoCoMo conv-43: the restaurant and the teammates are John's; the answer's own words are nowhere.
    passages = ["John: I went to a local restaurant with some new teammates last week."]
    question = "What did Tim celebrate at a restaurant with teammates?"
    assert about_someone_else(question, "A tough win.", passages)
    assert not about_someone_else("What did John celebrate at a restaurant with teammates?", "A tough win.", passages)


def test_a_turn_that_greets_someone_says_you_to_them() -> None:
    # LoCoMo conv-42: the passage is Joanna's one turn; "your recommendation" is Nate's.
    passages = [
        "Joanna: Hey Nate, how's it going? I took your recommendation and watched The Lord of the Rings Trilogy!"
    ]
    assert not about_someone_else("What is Nate's favorite movie trilogy?", "The Lord of the Rings [1]", passages)


def test_another_ending_of_a_word_is_the_same_word() -> None:
    # "dance" and "dances": Jon's own line matches the question as well as Gina's does.
    passages = [
        "Jon: I love all dances, but contemporary is my top pick.",
        "Gina: Contemporary dance is so expressive and graceful - it really speaks to me.",
    ]
    assert not about_someone_else("What is Jon's favorite style of dance?", "Contemporary [1]", passages)


def test_lines_as_good_as_each_other_all_count() -> None:
    # LoCoMo conv-30: Jon's line ties with Gina's, and the first of them used to decide; both love contemporary.
    passages = [
        "Jon: I love all dances, but contemporary is my top pick.",
        "Gina: Contemporary dance is so expressive and graceful - it really speaks to me.",
    ]
    assert not about_someone_else("What is Gina's favorite style of dance?", "Contemporary [2]", passages)
    # A line that is better than the rest still decides alone.
    assert about_someone_else("What is Gina's top pick of all dances?", "Contemporary [1]", passages)


def test_a_short_name_of_a_speaker_is_that_speaker() -> None:
    # LoCoMo conv-26: "Mel" is Melanie; six answerable questions about her were turned away.
    passages = ["Caroline: What did you make?", "Melanie: The kids and I made pots at the pottery workshop."]
    assert not about_someone_else("What did Mel and her kids make at the workshop?", "Pots [1]", passages)
    assert about_someone_else("What did Caro make at the workshop?", "Pots [1]", passages)
    assert about_others("What did Caro realize after her charity race?", CAROLINE_LINES) == {
        "Melanie": "What did Melanie realize after her charity race?"
    }


def test_a_speaker_given_as_the_answer_is_found_in_what_they_say() -> None:
    # LoCoMo conv-41: the 1.5B model answered "Maria [1]"; it was her aunt who inspired *her*.
    passages = [
        "John: Wow, Maria! That's really making a big impact. What made you decide to get involved with that?\n\n"
        "Maria: I started volunteering to help make a difference. My aunt believed in volunteering, so I'm inspired by her.",
    ]
    assert about_someone_else("Who inspired John to start volunteering?", "Maria [1]", passages)
    assert not about_someone_else("Who inspired Maria to start volunteering?", "Her aunt [1]", passages)
    # Named in John's line about John, Maria is the answer.
    passages.append("John: Maria got me to start volunteering at the shelter, and it changed my life.")
    assert not about_someone_else("Who got John to start volunteering?", "Maria [2]", passages)


def test_the_s_of_a_possessive_is_no_word_of_the_answer() -> None:
    # LoCoMo conv-41: "Maria's auntie" left an "s" that John's "each other's back" has, and John's line won.
    passages = [
        "John: We have each other's back through good times and bad. It's important to help family during hard times.",
        "Maria: When I was younger, we had some money problems and had to rely on outside help from our auntie.",
    ]
    question = "Who gave Maria's family money when she was younger and her family was going through tough times?"
    assert not about_someone_else(question, "Maria's auntie [2]", passages)
    assert about_someone_else(question.replace("Maria's", "John's"), "John's auntie [2]", passages)


def test_without_names_or_a_matching_line_it_has_no_opinion() -> None:
    assert not about_someone_else("What did I realise after the race?", "Self-care is important.", [TALK])
    assert not about_someone_else("What is Caroline's favourite colour?", "Teal.", [TALK])


def test_a_name_alone_answers_only_a_question_that_asks_who() -> None:
    # What the 1.5B model wrote for two of LoCoMo's traps (conv-41, conv-30).
    passages = ["John: I dropped off the old car at the shelter.", "Maria: That's so kind of you!"]
    assert only_names("What did Maria donate to a luxury store?", "John and Maria [5]", passages)
    assert only_names("What was Jon's favorite dancing memory?", "Gina's [5]", ["Gina: Dancing is my life!"])
    assert not only_names("Who did Maria donate the car with?", "John [1]", passages)
    assert not only_names("Whose car did John donate?", "Maria's.", passages)
    assert not only_names("What did John donate?", "The old car [1]", passages)
    assert not only_names("What is the name of Maria's puppy?", "Shadow [2]", passages)  # no speaker
    assert not only_names("Did John move from Sweden or Norway?", "Sweden [1]", passages)  # a place on offer
    assert not only_names("Which friend did John call?", "Maria [1]", passages)


def test_the_question_repeated_is_no_answer() -> None:
    # What the 1.5B model wrote for LoCoMo traps (conv-43, conv-41): the premise restated as a fact.
    assert only_the_question("What type of meal does Tim often cook using a slow cooker?", "Slow cooker [4]")
    question = "What recognition did John receive at the homeless shelter in August 2023?"
    assert only_the_question(question, "John received recognition at the homeless shelter in August 2023.")
    assert only_the_question("Who is Anthony?", "Anthony [1]")
    # Anything new is an answer, and so are a choice on offer, a yes or no, and a denial.
    assert not only_the_question("What type of meal does Tim cook using a slow cooker?", "Stews [4]")
    assert not only_the_question("After how many weeks did Tim call back?", "4 weeks [5]")
    assert not only_the_question("Would Melanie like a national park or a theme park?", "A national park [2]")
    assert not only_the_question(
        "Which did Melanie like more, the national park or the theme park?", "The national park"
    )
    assert not only_the_question("Did John receive recognition at the shelter?", "John received recognition.")
    assert not only_the_question("What recognition did John receive at the shelter?", "John received none [2]")


# --- Whose story is it? (the question asked again about the other speaker) ----------------------

CAROLINE_LINES = [
    "Caroline: I painted a sunset after my pottery class. Painting helps me relax.",
    "Melanie: That looks lovely! You have such an eye for colour.",
]
MELANIE_LINES = [
    "Melanie: I ran a charity race for mental health last Saturday. It made me realise self-care is really important.",
    "Caroline: That's amazing, Mel!",
]


def test_the_question_is_asked_again_about_each_other_speaker() -> None:
    question = "What did Caroline realize after her charity race?"
    assert about_others(question, CAROLINE_LINES) == {"Melanie": "What did Melanie realize after her charity race?"}
    assert about_others("What did Caroline and Melanie paint?", CAROLINE_LINES) == {}  # names both
    assert about_others("What did Rob paint?", CAROLINE_LINES) == {}  # names no speaker


def test_a_question_whose_answer_is_someone_elses_is_told_of_them() -> None:
    question = "What did Caroline realize after her charity race?"
    assert told_of_someone_else(question, CAROLINE_LINES, {"Melanie": MELANIE_LINES}) == "Melanie"


def test_the_named_persons_own_lines_keep_the_question_theirs() -> None:
    # Both ran a race: Caroline's own line speaks to the question, whatever Melanie's says.
    own = ["Caroline: My charity race went well, I realised how much I like running.", *CAROLINE_LINES]
    question = "What did Caroline realize after her charity race?"
    assert told_of_someone_else(question, own, {"Melanie": MELANIE_LINES}) is None
    asked_right = "What did Melanie realize after her charity race?"
    assert told_of_someone_else(asked_right, MELANIE_LINES, {"Caroline": CAROLINE_LINES}) is None


def test_another_speaker_who_also_misses_the_question_changes_nothing() -> None:
    question = "What did Caroline realize after her charity race?"
    assert told_of_someone_else(question, CAROLINE_LINES, {"Melanie": ["Melanie: I love my garden."]}) is None


def test_asking_about_the_topic_is_not_telling_of_it() -> None:
    # LoCoMo conv-42: Nate asks Joanna about her hobbies; his question says nothing of his own.
    joanna = ["Joanna: Besides writing, I also enjoy reading and exploring nature."]
    nate = ["Nate: What are your hobbies, Joanna? Mine keep changing.", "Joanna: Writing, mostly!"]
    assert told_of_someone_else("What are Joanna's hobbies?", joanna, {"Nate": nate}) is None
    nate_telling = ["Nate: My hobbies are gaming and making ice cream.", "Joanna: Fun!"]
    assert told_of_someone_else("What are Joanna's hobbies?", joanna, {"Nate": nate_telling}) == "Nate"


def test_another_speakers_line_that_means_the_question_is_told_of_them() -> None:
    # LoCoMo conv-43: cooking is John's therapy. Tim's line shares "court" with the question, John's
    # "court" and "therapy": too small a lead in words alone, but John's line means the question.
    tim = ["Tim: I sat right by the court at the game last night, what a thrill!", "John: Nice!"]
    john = ["John: Cooking is like therapy for me after a long day on the court.", "Tim: Sounds great."]
    question = "What hobby is a therapy for Tim when away from the court?"
    assert about_others(question, tim) == {"John": "What hobby is a therapy for John when away from the court?"}
    assert told_of_someone_else(question, tim, {"John": john}) == "John"
    asked_right = "What hobby is a therapy for John when away from the court?"
    assert told_of_someone_else(asked_right, john, {"Tim": tim}) is None


def test_a_reply_speaks_to_the_question_it_answers() -> None:
    # LoCoMo conv-26: Caroline's plans are her reply to Melanie's question; Melanie tells of her own.
    caroline = [
        "Melanie: My kids are so excited about summer break! Any fun plans for the summer?\n\n"
        "Caroline: Researching adoption agencies - it's been a dream to have a family."
    ]
    melanie = ["Melanie: Our summer plans? Camping next month with the kids, like every summer."]
    question = "What are Caroline's plans for the summer?"
    assert told_of_someone_else(question, caroline, {"Melanie": melanie}) is None
    unanswered = ["Melanie: My kids are so excited about summer break!\n\nCaroline: I love adoption agencies."]
    assert told_of_someone_else(question, unanswered, {"Melanie": melanie}) == "Melanie"
