"""Retrieval quality on LoCoMo, measured by the benchmark's own harness through the public API."""

import json
from typing import Any

import pytest

from bench import locomo
from tests.scripted_model import ScriptedModel


def test_evidence_is_read_in_rank_order_within_the_word_budget() -> None:
    passages = ["alpha beta gamma", "delta epsilon", "zeta eta theta"]
    assert locomo.evidence_recall(passages, ["delta epsilon"], budget=5) == 1.0
    # The second passage is cut at the budget: only half of the evidence fits.
    assert locomo.evidence_recall(passages, ["delta epsilon", "zeta eta"], budget=5) == 0.5
    assert locomo.evidence_recall(passages, ["delta   epsilon"], budget=4) == 0.0
    assert locomo.evidence_recall(reversed(passages), ["alpha beta"], budget=7) == 1.0
    assert locomo.evidence_recall(reversed(passages), ["alpha beta"], budget=6) == 0.0


def test_sessions_become_dated_notes_and_questions_keep_their_evidence_text() -> None:
    data = locomo.conversations()
    assert [c.sample_id for c in data] == ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]
    first = data[0].sessions[0]
    assert first.occurred_at.isoformat() == "2023-05-08T13:56:00+00:00"
    assert first.text.startswith("# Caroline and Melanie, 1:56 pm on 8 May, 2023\n\nCaroline: Hey Mel!")
    questions = [q for c in data for q in c.questions]
    # 762 questions in categories 1-4; three cite only evidence ids that match no turn.
    assert len(questions) == 759
    assert {q.category for q in questions} == {1, 2, 3, 4}


def test_sessions_can_be_typed_line_by_line_and_the_halves_split_the_conversations() -> None:
    typed = locomo.conversations(note_format="typed")[0].sessions[0]
    assert typed.text.startswith("Caroline: Hey Mel!") and "\n\n" not in typed.text
    blank = locomo.conversations()[0].sessions[0]
    assert [line for line in blank.text.splitlines()[1:] if line] == typed.text.splitlines()
    tune, confirm = locomo.HALVES["tune"], locomo.HALVES["confirm"]
    assert not set(tune) & set(confirm)
    assert sorted(tune + confirm) == sorted(c.sample_id for c in locomo.conversations())


def test_answer_f1_is_locomos_token_f1_with_porter_stems() -> None:
    from bench.answers import answer_f1

    # Markers, case, punctuation and articles do not count; "dance" and "dancing" are one stem.
    assert answer_f1("The Minnesota Wolves [4].", "The Minnesota Wolves", 4) == 1.0
    assert answer_f1("Dance [1]", "by dancing", 4) == pytest.approx(2 / 3)
    assert answer_f1("Yoga studio", "Kickboxing", 4) == 0.0
    # Multi-hop references are lists: each part is matched by the best part of the answer.
    assert answer_f1("taekwondo, kickboxing", "Kickboxing, Taekwondo", 1) == 1.0
    assert answer_f1("kickboxing", "Kickboxing, Taekwondo", 1) == 0.5


def test_regrade_reports_each_checks_share_and_the_verdicts_that_changed(tmp_path: Any) -> None:
    """`bench answers --regrade` re-checks stored model answers with today's code, without the model."""
    from bench.answers import regrade

    passage = {
        "text": "Caroline: I moved here from Sweden four years ago.\nMelanie: That's a big move!",
        "source_title": "Caroline and Melanie — session 1",
        "occurred_at": "2023-05-08T13:56:00+00:00",
        "anchor": {},
    }
    stored = [
        # Answered now, though the run turned it away (as an older check would have).
        {"question": "Where did Caroline move from?", "category": 4, "reference": "Sweden",
         "model_answer": "Sweden [1]", "abstained_by": "person", "answer": "", "passages": [passage]},
        {"question": "Where did Melanie move from?", "category": 5, "reference": "Sweden",
         "model_answer": "I couldn't find that in your notes.", "abstained_by": "model", "answer": "", "passages": [passage]},
        {"question": "What did Caroline say about the budget?", "category": 5, "reference": "",
         "model_answer": "", "abstained_by": "retrieval", "answer": "", "passages": []},
    ]  # fmt: skip
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(stored))
    lines: list[str] = []
    regrade([path], log=lines.append)
    assert (
        "right 67% | category 5 abstained 2/2 (100.0%), 1-4 answered 0/1 (0.0%), contains gold 0/1, F1 0.000"
        in lines[1]
    )
    assert (
        "right 100% | category 5 abstained 2/2 (100.0%), 1-4 answered 1/1 (100.0%), contains gold 1/1, F1 1.000"
        in lines[2]
    )
    assert "  turned away, category 5: model 1, retrieval 1" in lines
    assert "  verdicts changed: 1" in lines
    assert lines[-1].startswith("    cat 4 person -> answered | Where did Caroline move from? -> 'Sweden [1]'")


def test_replay_asks_the_model_again_only_the_prompts_todays_code_writes_differently(
    scripted_model: ScriptedModel,
) -> None:
    """`--replay` measures a change of the prompt in minutes: an unchanged prompt keeps its stored answer."""
    from bench.answers import Passage, replayed
    from chat import services

    passage = {
        "text": "Caroline: I moved here from Sweden four years ago.",
        "source_title": "Caroline and Melanie — session 1",
        "occurred_at": "2023-05-08T13:56:00+00:00",
        "anchor": {},
    }
    question = "Where did Caroline move from?"
    today = services.prompt_of(question=question, hits=[Passage.of(passage)], history=[])  # type: ignore[list-item]
    yesterday = [{**today[0], "content": today[0]["content"].replace("numbered sources", "sources")}, today[-1]]
    stored = [
        {"question": question, "prompt": prompt, "model_answer": "Norway [1]", "abstained_by": "",
         "answer": "Norway [1]", "passages": [passage]}
        for prompt in (today, yesterday)
    ]  # fmt: skip
    lines: list[str] = []
    again = replayed(stored, log=lines.append)
    assert scripted_model.script.requests == 1
    assert again[0]["model_answer"] == "Norway [1]" and again[0]["first_token"] is None
    assert again[1]["model_answer"] == "The tomatoes go in on 12 May [1]." and again[1]["prompt"] == today
    assert again[1]["first_token"] is not None
    assert lines[-1] == "  1 of 2 prompts asked again"
