import importlib
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import User
from ingestion.chunking import SENTENCES_MAX, chunk_markdown, sentences
from ingestion.models import Job, Source


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


def test_no_passage_lies_whole_inside_the_next_one() -> None:
    """A sentence flushed alone (it and the next would pass the budget) is not carried as the next
    passage's seam: the search would return the same words twice (seen on the register PDF's page 2)."""
    from ingestion.chunking import chunk_text

    twelve = "The STS provides automatic trim of the horizontal stabilizer during manual flight."
    fifty = "It compares the elevator position " + "with the position that would be needed " * 6 + "for trim."
    twenty_eight = "The system was added " + "so that the handling stays the same " * 3 + "across its range of weights."
    forty_one = "It stops as soon as a pilot uses the switches " + "and it starts again later " * 6 + "on its own."
    page = " ".join([twelve, fifty, twenty_eight, forty_one, twelve])
    pieces = [" ".join(piece.text.split()) for piece in chunk_text(page)]
    assert all(len(piece.split()) <= 60 + 40 for piece in pieces)
    for before, after in zip(pieces, pieces[1:], strict=False):
        assert before not in after
    assert any(twenty_eight in piece for piece in pieces)


def test_plain_text_keeps_hash_lines_and_fences_as_text() -> None:
    from ingestion.chunking import chunk_text

    pieces = chunk_text("# of cases 42\n\nTotal ``` 17")
    assert [(p.heading, p.text) for p in pieces] == [((), "# of cases 42\n\nTotal ``` 17")]


def test_a_note_typed_line_by_line_is_cut_between_its_lines_as_if_they_were_paragraphs() -> None:
    turns = [
        f"{'Ana' if i % 2 else 'Ben'}: turn {i} about the plan for the allotment and the shed roof." for i in range(40)
    ]
    # Now and then someone says a lot at once: a line of 90 words is one thought, kept whole.
    turns[17] = "Ana: " + " ".join(
        f"Then the shed roof leaked again on day {day}, so we moved the seed trays." for day in range(6)
    )
    typed = chunk_markdown("\n".join(turns))
    spaced = chunk_markdown("\n\n".join(turns))
    assert len(typed) > 5
    # Every passage is whole lines, no line is cut or repeated, and the blank-line version matches.
    assert [p.text.split("\n") for p in typed] == [p.text.split("\n\n") for p in spaced]
    assert [line for p in typed for line in p.text.split("\n")] == turns
    assert turns[17] in [p.text for p in typed]
    assert all(len(p.text.split()) <= 60 for p in typed if p.text != turns[17])


def test_prose_wrapped_at_the_line_end_stays_whole_sentences() -> None:
    sentence = "The committee agreed that the summer fair raised more than expected, mostly thanks to the weather."
    words = (sentence + " ") * 12
    wrapped, line = [], ""
    for word in words.split():  # wrapped at 60 characters, as an e-mail client does
        if len(line) + len(word) > 60:
            wrapped.append(line)
            line = ""
        line = f"{line} {word}".strip()
    wrapped.append(line)
    pieces = chunk_markdown("\n".join(wrapped))
    assert all(piece.text.replace("\n", " ").endswith("weather.") for piece in pieces)


def test_a_note_typed_in_lower_case_keeps_its_lines_apart() -> None:
    # Lines typed as thoughts, most not ending a sentence, the next starting in lower case: not wrapped prose.
    feel = ["fine", "calves wrecked after, the hill on the far side of the loop", "lashing rain", "skipped, Finn sick"]
    runs = [f"wk{week} run{run} - park loop, {week + run / 10:.1f}km, {feel[(week + run) % 4]}" for week in range(1, 6)
            for run in range(1, 4)]  # fmt: skip
    note = "\n".join(["c25k again, w Aoife on sat mornings", *runs, "old PB 5k 27:55"])
    assert len(note.split()) > 100  # over a paragraph's whole size: cut between units
    pieces = chunk_markdown(note)
    lines = [line for piece in pieces for line in piece.text.split("\n")]
    assert lines == note.split("\n")
    assert all(len(piece.text.split()) <= 60 for piece in pieces)


def test_typed_lines_of_alike_lengths_are_statements_of_their_own() -> None:
    # Each line stops well short of where the next line's first word would have run past the longest.
    gp = (
        "rx naproxen 500mg 2x/day w food for 10 days, + omeprazole 20mg to protect the stomach while on it\n"
        "referral to physio - she recommended Declan Moran @ Phibsboro Physio, said 6 sessions\n"
        "bloods for vit D + iron (no need to fast), results in about a wk, they text"
    )
    assert sentences(gp) == gp.split("\n")
    # Prose wrapped at a width goes on in lower case on lines that could not take another word.
    wrapped = "Martin says the electrician can come round on\nthe Thursday morning if someone is in to let\nhim in, or else next week. Sorry!"
    assert sentences(wrapped) == [
        "Martin says the electrician can come round on the Thursday morning if someone is in to let him in, or else next week.",
        "Sorry!",
    ]


def test_a_pdf_page_is_not_cut_at_its_printed_line_ends() -> None:
    from ingestion.chunking import chunk_text

    lines = [f"line {i} of a justified paragraph that goes on without a full stop" for i in range(30)]  # 13 words
    pieces = chunk_text("\n".join(lines))
    assert any(not piece.text.endswith("stop") for piece in pieces)  # cut by words, not at the page's lines


_TYPED = "\n".join(f"Line {i}: call the plumber about the boiler and the sink." for i in range(30))
_LONG_LINE = "Line 30: " + " ".join(f"then the boiler stopped again on day {day}." for day in range(10))


@pytest.mark.django_db
def test_a_passages_sentences_are_its_typed_lines_and_their_sentences() -> None:
    passage = "Mon: called the plumber about the tap\nTue: dentist at 9. Then the dry cleaning!\n\nSam's key is cut"
    assert sentences(passage) == [
        "Mon: called the plumber about the tap",
        "Tue: dentist at 9.",
        "Then the dry cleaning!",
        "Sam's key is cut",
    ]


def test_a_pdf_passages_sentences_run_across_the_pages_wrapping() -> None:
    passage = "The tenant keeps the bins clean and puts the\nrecycling out on alternate Thursdays. Pets need\nwritten consent."
    assert sentences(passage, lines=False) == [
        "The tenant keeps the bins clean and puts the recycling out on alternate Thursdays.",
        "Pets need written consent.",
    ]


def test_a_passage_of_one_sentence_has_none_of_its_own_and_a_long_one_at_most_the_cap() -> None:
    assert sentences("Renewed the car insurance, 412 pounds.") == []
    assert len(sentences(" ".join(f"Line {n} is here." for n in range(40)))) == SENTENCES_MAX


@pytest.mark.parametrize(
    ("migration_name", "changed"),
    [
        ("0007_rechunk_notes_typed_line_by_line", ["typed", "typed with a long line"]),
        ("0009_rechunk_notes_long_typed_lines", ["typed with a long line"]),
        (
            "0011_rechunk_paragraphs_over_100_words",
            ["a paragraph of 120 words", "typed in lower case", "wrapped prose"],
        ),
        ("0017_rechunk_notes_typed_in_lower_case", ["typed in lower case"]),
        ("0020_rechunk_without_whole_seams", ["a paragraph of 120 words"]),
        ("0022_rechunk_typed_lines_of_alike_lengths", ["short", "typed in lower case"]),
    ],
)
def test_a_rechunking_migration_queues_again_only_the_notes_it_changes(
    user: User, migration_name: str, changed: list[str]
) -> None:
    from django.apps import apps

    migration = importlib.import_module(f"ingestion.migrations.{migration_name}")
    texts = {
        "typed": _TYPED,
        "typed with a long line": _TYPED + "\n" + _LONG_LINE,
        "spaced": (_TYPED + "\n" + _LONG_LINE).replace("\n", "\n\n"),
        "short": "milk\neggs\nbread",
        "a paragraph of 120 words": " ".join(["The boiler man came at nine and left at ten again."] * 11),
        "typed in lower case": "\n".join(
            f"wk{week} - park loop{', calves sore after the hill' * (week % 3)}, {week}.5km" for week in range(12)
        ),
        "wrapped prose": "\n".join(["The boiler man came at nine and left at ten, he said the"] * 12),
    }
    sources = {
        name: Source.objects.create(
            owner=user,
            kind="note",
            title=name,
            text=text,
            mime_type="text/markdown",
            size=len(text),
            sha256=name,
            status="ready",
        )  # fmt: skip
        for name, text in texts.items()
    }
    migration.queue_rechunking(apps, None)
    queued = Job.objects.filter(status="queued").order_by("source_id")
    assert [job.source_id for job in queued] == [sources[name].pk for name in changed]
    # Dated back, so the sweeper sends it to a worker (no broker is needed while migrating).
    assert all(job.updated_at < timezone.now() - timedelta(minutes=30) for job in queued)


def test_the_sentence_embeddings_migration_queues_ready_notes_and_pdfs_only(user: User) -> None:
    from django.apps import apps

    migration = importlib.import_module("ingestion.migrations.0018_chunk_sentence_embeddings")
    sources = {
        (kind, status): Source.objects.create(
            owner=user, kind=kind, title=f"{kind} {status}", text="x", size=1, sha256=f"{kind}{status}", status=status
        )
        for kind in ("note", "pdf", "audio")
        for status in ("ready", "failed")
    }
    migration.queue_embedding(apps, None)
    queued = Job.objects.filter(status="queued").order_by("source_id")
    assert [job.source_id for job in queued] == [sources["note", "ready"].pk, sources["pdf", "ready"].pk]
