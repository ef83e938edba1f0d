from ingestion.chunking import chunk_markdown


def test_each_chunk_keeps_its_heading_path() -> None:
    text = "# Work\n\n## Budget\n\nWe agreed on 40k.\n\n## Hiring\n\nTwo engineers.\n\n# Home\n\nPaint the door."
    pieces = chunk_markdown(text)
    assert [(p.heading, p.text) for p in pieces] == [
        (("Work", "Budget"), "We agreed on 40k."),
        (("Work", "Hiring"), "Two engineers."),
        (("Home",), "Paint the door."),
    ]


def test_a_code_block_is_never_split() -> None:
    code = "```python\n" + "\n\n".join(f"x{i} = {i}  # " + "word " * 20 for i in range(30)) + "\n```"
    pieces = chunk_markdown(f"Intro.\n\n{code}\n\nOutro.", max_words=50)
    assert any(piece.text == code for piece in pieces)
    assert all(piece.text.count("```") in {0, 2} for piece in pieces)


def test_long_text_is_split_between_sentences_with_overlap() -> None:
    sentences = [f"Sentence number {i} talks about topic {i}." for i in range(100)]
    pieces = chunk_markdown(" ".join(sentences), max_words=60, overlap_words=20)
    assert len(pieces) > 5
    assert all(len(piece.text.split()) <= 60 + 20 for piece in pieces)
    for piece in pieces:
        assert piece.text.endswith(".")
    for before, after in zip(pieces, pieces[1:], strict=False):
        assert after.text.split(". ")[0].rstrip(".") in before.text


def test_one_enormous_line_without_punctuation_is_split_by_words() -> None:
    pieces = chunk_markdown("word " * 1000, max_words=100)
    assert len(pieces) >= 10
    assert sum(len(p.text.split()) for p in pieces) >= 1000


def test_blank_text_gives_no_chunks() -> None:
    assert chunk_markdown(" \n\n \t") == []


def test_no_chunk_is_only_the_overlap_of_its_neighbour() -> None:
    text = "First short sentence here. " * 5 + "\n\n" + "long " * 170 + "end."
    pieces = chunk_markdown(text, max_words=180, overlap_words=40)
    texts = [piece.text for piece in pieces]
    assert "First short sentence here." not in texts
    assert len(set(texts)) == len(texts)


def test_plain_text_keeps_hash_lines_and_fences_as_text() -> None:
    from ingestion.chunking import chunk_text

    pieces = chunk_text("# of cases 42\n\nTotal ``` 17")
    assert [(p.heading, p.text) for p in pieces] == [((), "# of cases 42\n\nTotal ``` 17")]
