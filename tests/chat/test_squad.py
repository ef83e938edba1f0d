"""The SQuAD yardstick's own rules: the answer's words in the article, read within 300 words."""

from bench import squad


def test_an_answer_is_found_by_its_own_words_not_by_its_text_alone() -> None:
    context = "The Normans gave their name to Normandy, a region in France. They were descended from Norse raiders."
    ending, starting = squad.answer_windows(context, context.index("France"), "France")
    assert ending == "their name to Normandy, a region in France."
    assert starting == "France. They were descended from Norse raiders."
    question = squad.Question("Where is Normandy?", (squad._normal(ending), squad._normal(starting)))
    assert squad.found(["Something else entirely.", context], question)
    # "France" alone elsewhere is not the answer's place in the article.
    assert not squad.found(["Paris is the capital of France."], question)
    # Read in rank order within the budget: past 300 words it does not count.
    assert not squad.found([" ".join(["filler"] * 300), context], question)


def test_the_articles_split_into_a_tuning_and_a_confirming_half_of_answerable_questions() -> None:
    articles = squad.articles()
    assert [a.title for a in articles][:2] == ["Normans", "Huguenot"] and len(articles) == 8
    assert sum(len(a.questions) for a in articles) == 1299  # the answerable ones
    for article in articles:
        text = squad._normal(article.text)
        assert all(window in text for q in article.questions for window in q.windows)
    assert "\n\n" in articles[0].text  # paragraphs stay apart, as a person pastes them
