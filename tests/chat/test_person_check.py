"""The person check: an answer resting on a line about someone other than the person asked about.

Notes often speak of several people, and a question about one of them can find the line where
another tells of the same thing: the chat says Priya did the sponsored swim, the question asks what
Sam realised after his. Every word matches but the person, and the answer is about the wrong one.
"""

from chat.checks import about_others, about_someone_else, only_names, only_the_question, told_of_someone_else

TALK = """Sam and Priya — Sunday catch-up

Priya: I did a sponsored swim for the hospice last Saturday. It made me realise rest days really matter.

Sam: That's brilliant! Did you train for it long?

Priya: For two months. You love cycling too, so come along next time."""


def test_an_answer_from_a_line_about_someone_else_is_caught() -> None:
    question = "What did Sam realise after his sponsored swim?"
    assert about_someone_else(question, "He realised rest days really matter.", [TALK])


def test_an_answer_about_the_person_asked_about_passes() -> None:
    question = "What did Priya realise after her sponsored swim?"
    assert not about_someone_else(question, "She realised rest days really matter.", [TALK])


def test_you_points_at_the_other_speaker() -> None:
    # "You love cycling" is Priya telling Sam about Sam.
    assert not about_someone_else("What does Sam love?", "Sam loves cycling.", [TALK])
    assert about_someone_else("What does Priya love?", "She loves cycling.", [TALK])


def test_questions_in_the_notes_assert_nothing() -> None:
    # Dana's question shares more words with the answer than Omar's reply does, but only the reply says anything.
    passages = [
        "Dana: Good to see the club growing. Do you have any big goals for your cycling club this year?",
        "Omar: Yes! Winning the regional time trial is my number one goal. I also want more beginners riding.",
    ]
    question = "What are Omar's goals for his cycling club this year?"
    answer = "Omar's goals for his cycling club are winning the regional time trial and more beginners riding."
    assert not about_someone_else(question, answer, passages)


def test_a_named_speaker_outweighs_other_names_the_line_shares() -> None:
    # Sam's neighbour invited Sam; the question makes Alan Priya's neighbour.
    passages = [
        "Priya: Any plans for the weekend?",
        "Sam: Nothing much, but my neighbour Alan invited me to a pottery taster session.",
    ]
    question = "What did Priya's neighbour, Alan, invite her to?"
    assert about_someone_else(question, "A pottery taster session.", passages)
    assert not about_someone_else("What did Sam's neighbour, Alan, invite him to?", "Pottery.", passages)
    # A question naming no speaker still counts the names it shares with the line.
    assert not about_someone_else("What did Alan invite someone to?", "A pottery taster session.", passages)


def test_in_a_conversation_only_its_speakers_are_people_asked_about() -> None:
    # A meeting's transcript: the question names the project's tool, not anyone who speaks. Jonas's
    # line is no line "about someone else" for it (the check read "Figma" as the person asked about).
    passages = [
        "Design sync\nMaya: The Figma export is what the partners keep asking for.\n"
        "Jonas: I can take the database schema. Two weeks, I'd say.\nMaya: Great, thanks."
    ]
    question = "Who's doing the database schema for the Figma export?"
    assert not about_someone_else(question, "Jonas is doing the database schema [1].", passages)
    # A question about one of the speakers is still judged by whose line it is.
    assert about_someone_else("What is Maya doing for the Figma export?", "The database schema [1].", passages)


def test_a_note_typed_line_by_line_is_read_line_by_line() -> None:
    # No line ends with a full stop: read as one sentence, the streak was about Lucía and Seville.
    passages = [
        "Spanish evening class\nclass Weds 7-9 at the Instituto Cervantes - teacher Lucía (from Seville, v strict)\n"
        "duolingo streak 41 days - keep it going\nhomework: ex 2-3 on p. 12"
    ]
    assert not about_someone_else("How long is my Duolingo streak?", "Your Duolingo streak is 41 days [1].", passages)
    assert about_someone_else("Where is Pablo from?", "Seville [1].", passages)


def test_a_notes_lines_are_about_what_its_title_names() -> None:
    # The line names the seller; the note's title says whose tickets they are.
    passages = [
        "Hozier tickets\ngot 2 seated tix in the presale\nthey're in the Ticketmaster app, order no 77-10234/DUB"
    ]
    answer = "The order number is 77-10234/DUB [1]."
    assert not about_someone_else("What's the order number for the Hozier tickets?", answer, passages)
    assert about_someone_else("What's the order number for the Coldplay tickets?", answer, passages)


def test_a_place_named_in_capitals_is_no_one_a_line_is_about() -> None:
    # A parent's note never names their own child; "Dublin Zoo" and "Phoenix Park" are places, not people.
    passages = [
        "Parent-teacher meeting with Ms Gallagher\nschool tour: Dublin Zoo on the 14th, €22 on the school app\n"
        "sports day in Phoenix Park, bring a hat"
    ]
    answer = "The school tour is to Dublin Zoo on the 14th [1]."
    assert not about_someone_else("When is Finn's school tour?", answer, passages)
    # A person's surname that is a common word ("Hill") still names someone.
    passages = ["Book club\nTom Hill is hosting on the 14th, bring a bottle"]
    assert about_someone_else("When is Finn hosting?", "On the 14th [1].", passages)


def test_a_line_about_someone_it_calls_he_may_be_about_the_person_asked_about() -> None:
    # The note is about Conal's swimming; the coach's line says "his", and names only the club.
    passages = [
        "Swimming lessons\ncoach said Conal is doing great in the water\n"
        "needs to work on his breathing to the left side, the Marlins club has a drill for it"
    ]
    question = "What does Conal need to work on at swimming?"
    assert not about_someone_else(question, "His breathing to the left side [1].", passages)
    # A line that names someone else and no "he" or "she" is still someone else's.
    other = ["Swimming lessons\nZara needs to work on breathing to the left side, the Marlins club has a drill"]
    assert about_someone_else(question, "Breathing to the left side [1].", other)


def test_names_with_accents_are_names() -> None:
    passages = ["Garden today\nBernadette brought over 4 bags of compost from the allotment"]
    assert about_someone_else("What did Sinéad bring over for the garden?", "4 bags of compost [1].", passages)
    assert not about_someone_else("What did Bernadette bring over?", "4 bags of compost [1].", passages)


def test_a_line_found_mostly_by_the_question_still_counts() -> None:
    # The tapas bar and the book club are Sam's; the answer's own words are nowhere.
    passages = ["Sam: I went to the new tapas bar with my book club last week."]
    question = "What did Priya celebrate at the tapas bar with her book club?"
    assert about_someone_else(question, "Her birthday.", passages)
    assert not about_someone_else(
        "What did Sam celebrate at the tapas bar with his book club?", "A birthday.", passages
    )


def test_a_turn_that_greets_someone_says_you_to_them() -> None:
    # The passage is Sam's one turn, and it greets Priya: "your advice" is hers.
    passages = ["Sam: Hi Priya, hope the move went okay! I finally took your advice and read The Remains of the Day."]
    assert not about_someone_else("What is Priya's favourite novel?", "The Remains of the Day [1]", passages)


RECIPES = [
    "Sam: I've cooked all the recipes in that book, but the lentil soup is my top pick.",
    "Priya: Lentil soup is such a simple recipe - it's what I make every Sunday.",
]


def test_another_ending_of_a_word_is_the_same_word() -> None:
    # "recipe" and "recipes": Sam's own line matches the question as well as Priya's does.
    assert not about_someone_else("What is Sam's favourite recipe?", "Lentil soup [1]", RECIPES)


def test_lines_as_good_as_each_other_all_count() -> None:
    # Sam's line ties with Priya's, and the first of them used to decide; both love the lentil soup.
    assert not about_someone_else("What is Priya's favourite recipe?", "Lentil soup [2]", RECIPES)
    # A line that is better than the rest still decides alone.
    assert about_someone_else("What is Priya's top pick of the recipes in that book?", "Lentil soup [1]", RECIPES)


def test_a_short_name_of_a_speaker_is_that_speaker() -> None:
    # "Ben" is Benjamin and "Alex" Alexandra: people shorten the names of those they talk about.
    passages = ["Alexandra: What did you make?", "Benjamin: The kids and I made birdhouses at the woodwork class."]
    assert not about_someone_else("What did Ben and his kids make at the woodwork class?", "Birdhouses [1]", passages)
    assert about_someone_else("What did Alex make at the woodwork class?", "Birdhouses [1]", passages)
    assert about_others("What did Alex make at the woodwork class?", passages) == {
        "Benjamin": "What did Benjamin make at the woodwork class?"
    }


def test_a_speaker_given_as_the_answer_is_found_in_what_they_say() -> None:
    # Asked who inspired Priya, a model answers "Sam [1]"; it was his sister who inspired *him*.
    passages = [
        "Priya: Wow, Sam! That's a lot of money for a good cause. What made you decide to sign up?\n\n"
        "Sam: I started fundraising to give something back. My sister always believed in fundraising, so I'm "
        "inspired by her.",
    ]
    assert about_someone_else("Who inspired Priya to start fundraising?", "Sam [1]", passages)
    assert not about_someone_else("Who inspired Sam to start fundraising?", "His sister [1]", passages)
    # Named in Priya's line about Priya, Sam is the answer.
    passages.append("Priya: Sam got me to start fundraising for the food bank, and I love it.")
    assert not about_someone_else("Who got Priya to start fundraising?", "Sam [2]", passages)


def test_the_s_of_a_possessive_is_no_word_of_the_answer() -> None:
    # "Priya's godmother" would leave an "s" that Sam's "it's" has, and Sam's line, which has more of the
    # question's words, would win.
    passages = [
        "Sam: It's hard being a student with no money, and family help is what got my brother through those years.",
        "Priya: When I was at college, money was tight and I had to rely on my godmother.",
    ]
    question = "Who helped Priya with money when she was a student and the years were hard?"
    assert not about_someone_else(question, "Priya's godmother [2]", passages)
    assert about_someone_else(question.replace("Priya", "Sam"), "Sam's godmother [2]", passages)


def test_without_names_or_a_matching_line_it_has_no_opinion() -> None:
    assert not about_someone_else("What did I realise after the swim?", "Rest days matter.", [TALK])
    assert not about_someone_else("What is Sam's favourite colour?", "Teal.", [TALK])


def test_a_name_alone_answers_only_a_question_that_asks_who() -> None:
    # Fooled by a question about something never said, a small model answers with who is talking.
    passages = ["Sam: I dropped the old sofa off at the charity shop.", "Priya: That's so kind of you!"]
    assert only_names("What did Priya give to the antiques dealer?", "Sam and Priya [5]", passages)
    assert only_names("What was Omar's favourite holiday memory?", "Lena's [5]", ["Lena: Holidays are the best!"])
    assert not only_names("Who did Priya take the sofa with?", "Sam [1]", passages)
    assert not only_names("Whose sofa did Sam give away?", "Priya's.", passages)
    assert not only_names("What did Sam give away?", "The old sofa [1]", passages)
    assert not only_names("What is the name of Priya's cat?", "Biscuit [2]", passages)  # no speaker
    assert not only_names("Did Sam move from Leeds or York?", "Leeds [1]", passages)  # a place on offer
    assert not only_names("Which friend did Sam call?", "Priya [1]", passages)


def test_the_question_repeated_is_no_answer() -> None:
    # Lost, a small model answers with the question's own words: the premise restated as a fact.
    assert only_the_question("What kind of loaf does Omar often bake in his bread machine?", "Bread machine [4]")
    question = "What award did Lena receive at the school fete in June 2024?"
    assert only_the_question(question, "Lena received an award at the school fete in June 2024.")
    assert only_the_question("Who is Declan?", "Declan [1]")
    # Anything new is an answer, and so are a choice on offer, a yes or no, and a denial.
    assert not only_the_question("What kind of loaf does Omar bake in his bread machine?", "Rye [4]")
    assert not only_the_question("After how many weeks did the plumber call back?", "4 weeks [5]")
    assert not only_the_question("Would Lena like a camping trip or a city break?", "A camping trip [2]")
    assert not only_the_question("Which did Lena like more, the camping trip or the city break?", "The camping trip")
    assert not only_the_question("Did Lena receive an award at the fete?", "Lena received an award.")
    assert not only_the_question("What award did Lena receive at the fete?", "Lena received none [2]")


# --- Whose story is it? (the question asked again about the other speaker) ----------------------

SAM_LINES = [
    "Sam: I sketched the harbour after my life-drawing class. Drawing helps me switch off.",
    "Priya: That's lovely! You have such a good eye.",
]
PRIYA_LINES = [
    "Priya: I did a sponsored swim for the hospice last Saturday. It made me realise rest days really matter.",
    "Sam: Well done you!",
]


def test_the_question_is_asked_again_about_each_other_speaker() -> None:
    question = "What did Sam realise after the sponsored swim?"
    assert about_others(question, SAM_LINES) == {"Priya": "What did Priya realise after the sponsored swim?"}
    assert about_others("What did Sam and Priya draw?", SAM_LINES) == {}  # names both
    assert about_others("What did Omar draw?", SAM_LINES) == {}  # names no speaker


def test_a_question_whose_answer_is_someone_elses_is_told_of_them() -> None:
    question = "What did Sam realise after the sponsored swim?"
    assert told_of_someone_else(question, SAM_LINES, {"Priya": PRIYA_LINES}) == "Priya"


def test_the_named_persons_own_lines_keep_the_question_theirs() -> None:
    # Both did the swim: Sam's own line speaks to the question, whatever Priya's says.
    own = ["Sam: My sponsored swim went well, I realised how much I like the pool.", *SAM_LINES]
    question = "What did Sam realise after the sponsored swim?"
    assert told_of_someone_else(question, own, {"Priya": PRIYA_LINES}) is None
    asked_right = "What did Priya realise after the sponsored swim?"
    assert told_of_someone_else(asked_right, PRIYA_LINES, {"Sam": SAM_LINES}) is None


def test_another_speaker_who_also_misses_the_question_changes_nothing() -> None:
    question = "What did Sam realise after the sponsored swim?"
    assert told_of_someone_else(question, SAM_LINES, {"Priya": ["Priya: I love my allotment."]}) is None


def test_asking_about_the_topic_is_not_telling_of_it() -> None:
    # Omar asks Lena about her hobbies; his question says nothing of his own.
    lena = ["Lena: Besides knitting, I also enjoy baking and long walks."]
    omar = [
        "Omar: So what are your hobbies these days, Lena? I never know what to do with my evenings.",
        "Lena: Knitting!",
    ]
    assert told_of_someone_else("What are Lena's hobbies?", lena, {"Omar": omar}) is None
    omar_telling = ["Omar: My hobbies are climbing and brewing beer.", "Lena: Fun!"]
    assert told_of_someone_else("What are Lena's hobbies?", lena, {"Omar": omar_telling}) == "Omar"


def test_another_speakers_line_that_means_the_question_is_told_of_them() -> None:
    # Baking is Lena's therapy. Omar's line shares "office" with the question, Lena's "office" and
    # "therapy": too small a lead in words alone, but Lena's line means the question.
    omar = ["Omar: The office party was on Friday, what a night!", "Lena: Nice!"]
    lena = ["Lena: Baking bread is like therapy for me after a long week at the office.", "Omar: Sounds great."]
    question = "What hobby is a therapy for Omar when away from the office?"
    assert about_others(question, omar) == {"Lena": "What hobby is a therapy for Lena when away from the office?"}
    assert told_of_someone_else(question, omar, {"Lena": lena}) == "Lena"
    asked_right = "What hobby is a therapy for Lena when away from the office?"
    assert told_of_someone_else(asked_right, lena, {"Omar": omar}) is None


def test_a_reply_speaks_to_the_question_it_answers() -> None:
    # Sam's plans are his reply to Priya's question; Priya tells of her own.
    sam = [
        "Priya: The kids can't wait for half term! Any fun plans for the holidays?\n\n"
        "Sam: Looking at flats in Glasgow - it's been a dream to move back north."
    ]
    priya = ["Priya: We always make the same plans for the holidays: a week on a canal boat with the kids."]
    question = "What are Sam's plans for the holidays?"
    assert told_of_someone_else(question, sam, {"Priya": priya}) is None
    unanswered = ["Priya: The kids can't wait for half term!\n\nSam: I love looking at flats in Glasgow."]
    assert told_of_someone_else(question, unanswered, {"Priya": priya}) == "Priya"


ONE_ON_ONE = """Weekly 1:1, Tuesday
- Looker migration: she wants me to lead it. all 14 Tableau dashboards moved (or retired) by end of quarter
- feedback: analysis is great but speak up more in planning mtgs, don't wait to be asked
- I said I'm tired after 2 late nights on the claims report w Tomasz - Tomasz takes the Friday release, will do!!"""


def test_a_summary_naming_the_person_is_not_turned_away_for_lines_about_others() -> None:
    # A summary rests on many lines, several of them about me: the person check judges one-line
    # answers only (the 0.5B model's summary of this 1:1 was turned away by it).
    from chat.checks import objection

    question = "Summarize my 1:1 with Rebecca."
    answer = (
        "Rebecca asked me to lead the Looker migration [1]. She said to speak up more in planning meetings [1]. "
        "I was tired after two late nights on the claims report [1]."
    )
    assert objection(question, answer, [ONE_ON_ONE], shape="fact") == (
        "person",
        "The line the answer rests on is about someone other than the person asked about.",
    )
    assert objection(question, answer, [ONE_ON_ONE], shape="summary") is None


def test_a_word_that_opens_a_second_sentence_of_the_question_is_no_one() -> None:
    # "Anything" opens the question's second sentence with a capital: it names no one, so a line about
    # Dave is no line about someone else.
    note = "Boiler\nDave fixed the boiler on Tuesday, the pressure valve was stuck.\nPaid him 120 cash."
    question = "Who fixed the boiler? Anything I should watch for?"
    assert not about_someone_else(question, "Dave fixed it [1].", [note])
    # A name there is still a name.
    assert about_someone_else("Did the boiler get fixed? Ciaran said he would.", "Dave fixed it [1].", [note])


def test_a_people_named_in_a_speech_is_not_someone_else() -> None:
    """The browser walk's recording: "What did Kennedy say?" answered from the speech, which never names
    him but speaks to "my fellow Americans" — a people, not another person the line could be about."""
    speech = "jfk\nAnd so my fellow Americans, ask not what your country can do for you, ask what you can do for your country."
    answer = 'Kennedy said "ask not what your country can do for you, ask what you can do for your country" [1].'
    assert not about_someone_else("What did Kennedy say in the recording?", answer, [speech])
    told = "Memo\nMaria told the Americans on the team that the launch moves to May."
    assert about_someone_else("What did Kennedy tell the team?", "The launch moves to May [1].", [told])


INSURANCE = """Car insurance renewal
Aviva quote came in at €612 for the year, last year was €540
rang them - agent (Siobhán) knocked it down to €575 if I pay in one go
Daniel wants to add the roadside cover, +€38"""


def test_a_firm_named_as_where_something_happened_is_no_one_asked_about() -> None:
    # Seen in a browser walk (2026-12-07): "at Aviva" made Aviva the person asked about, and the line
    # naming the agent was "about someone else", so the chat answered "I couldn't find anything".
    assert not about_someone_else("Who did I speak to at Aviva?", "You spoke to Siobhán [1].", [INSURANCE])
    # The person the question does ask about still counts.
    assert about_someone_else("Who did Daniel speak to at Aviva?", "He spoke to Siobhán [1].", [INSURANCE])
