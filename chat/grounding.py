"""Tie each sentence of an answer to the passage that supports it.

Small local models often answer correctly but cite nothing, or cite the wrong number. So markers
are not trusted as written: every sentence is scored against every passage (shared content words
and embedding similarity), a marker survives only if its passage supports the sentence, and a
sentence left without one is attributed to its best-supporting passage when that support clears
the threshold. A sentence nothing supports keeps no marker.
"""

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from chat import quantities
from ingestion.embeddings import embed_texts

# Support = mean of lexical coverage and cosine similarity (supported sentences score 0.6-0.9, unrelated
# ones under 0.3). Calibrated on stored LoCoMo answers (bench/answers.py --regrade): with the 1.5B model's
# 100 answers 0.40 keeps 85 % of categories 1-4 answered against 81 % at 0.45, with the same category-5
# abstention (50 %); the 0.5B's 100: 82 % against 80 % (70 % both); its earlier 30: 0.35 lets a trap through.
# Support by a passage's best statement as well as by the whole (2026-11-25, the 1.5B's stored answers to
# 160 questions of categories 1-4 and all 237 of category 5): 4 more answered ("National park", right;
# "John Greene", wrong; a list with one of three places right; a vague guess), no trap let through.
SUPPORT_THRESHOLD = 0.40
_MARKER = re.compile(r"\s*\[(\d{1,3})\]")
# A sentence ends at . ! or ? and a space, but not after an initial ("C. S. Lewis") or a title ("Dr. Lee").
SENTENCE = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\b(?:Mr|Ms|Dr|St)\.)(?<!\bMrs\.)\s+")
WORD = re.compile(r"\w+", re.UNICODE)
# A list item's bullet or number ("- ", "2. "): kept in front of its line, never a sentence of its own.
_LIST_ITEM = re.compile(r"^(?:[-*•+]|\d{1,3}[.)])\s+")
STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being it its this that "
    "these those i you he she we they me my your our their his her them do does did have has had not no so "
    "than then there here what which who whom when where why how all any some can could would should will "
    "about into after before during".split()
)


@dataclass(frozen=True)
class Grounded:
    text: str  # the supported sentences, each with the markers that survived the check
    markers: list[int]  # distinct, in order of first use; 1-based indexes into the passages
    check: dict[str, Any]  # the outcome, stored with the message

    @property
    def supported(self) -> bool:
        return bool(self.markers)


def without_markers(text: str) -> str:
    return _MARKER.sub("", text)


def content_words(text: str) -> set[str]:
    return {word for word in WORD.findall(text.lower()) if word not in STOPWORDS}


def ground(
    answer: str, passages: list[str], headers: list[str] | None = None, *, threshold: float = SUPPORT_THRESHOLD
) -> Grounded:
    """Keep the sentences of `answer` that a passage supports, each with only the supporting markers.

    A marker survives only if its passage supports its sentence; a sentence without a surviving
    marker is attributed to its best-supporting passage when that clears the threshold. A claim
    (two or more content words) that no passage supports is removed; a marker that points to no
    passage never survives. A sentence that repeats one of `headers` (what a passage is introduced
    with: "Tim and John — session 4 (2 August 2023, …)") is removed too: small models copy one when
    they find no answer, and the passage it introduces "supports" every word of it. So is one that
    quotes a number in a unit the passages never give it ("a $4 raise" from "4% raise":
    `chat.quantities`); a currency they never name is taken off a number they write bare. So is a lead-in
    that ends the answer with nothing after its colon ("Dr Okafor:"). `check` records each sentence's fate.
    """
    copied_headers = [header for header in headers or [] if header and header in answer]
    # Sentences, each with the line it stands on: a list keeps its lines and their bullets or numbers.
    bullets: dict[int, str] = {}
    placed: list[tuple[int, str]] = []
    for number, line in enumerate(answer.strip().split("\n")):
        line = line.strip()
        if item := _LIST_ITEM.match(line):
            bullets[number] = item.group(0).strip() + " "
            line = line[item.end() :]
        placed.extend((number, part) for part in SENTENCE.split(line) if part.strip())
    sentences = [part for _, part in placed]
    amounts = quantities.given(passages)
    plain = [quantities.without_unnamed_currency(_MARKER.sub("", sentence).strip(), amounts) for sentence in sentences]
    support = _support_matrix(plain, passages) if sentences and passages else np.zeros((len(sentences), 0))
    used: list[int] = []
    kept_lines: dict[int, list[str]] = {}
    records: list[dict[str, Any]] = []
    for index, sentence in enumerate(sentences):
        claimed = [int(number) for number in _MARKER.findall(sentence)]
        valid = [number for number in dict.fromkeys(claimed) if 1 <= number <= len(passages)]
        kept = [number for number in valid if support[index, number - 1] >= threshold]
        best = int(np.argmax(support[index])) if passages else -1
        best_support = float(support[index, best]) if passages else 0.0
        if not kept and best_support >= threshold:
            kept = [best + 1]
        is_claim = len(content_words(plain[index])) >= 2
        copied = any(header in sentence for header in copied_headers)
        misquoted = quantities.misquoted(plain[index], amounts) + quantities.invented(plain[index], amounts)
        lead_in = index == len(sentences) - 1 and plain[index].endswith(":")  # a list or a quote that never came
        removed = (is_claim and not kept) or copied or bool(misquoted) or lead_in
        records.append(
            {
                "text": plain[index],
                "claimed": claimed,
                "kept": kept,
                "support": round(best_support, 3),
                "removed": removed,
                **({"copied_header": True} if copied else {}),
                **({"misquoted": misquoted} if misquoted else {}),
                **({"lead_in": True} if lead_in else {}),
            }
        )
        if removed:
            continue
        used.extend(number for number in kept if number not in used)
        kept_lines.setdefault(placed[index][0], []).append(_with_markers(plain[index], kept))
    claimed_total = sum(len(record["claimed"]) for record in records)
    kept_claimed = sum(len(set(record["claimed"]) & set(record["kept"])) for record in records)
    check = {
        "threshold": threshold,
        "sentences": records,
        "markers_claimed": claimed_total,
        "markers_kept": kept_claimed,
        "markers_added": sum(len(set(record["kept"]) - set(record["claimed"])) for record in records),
        "sentences_removed": sum(record["removed"] for record in records),
    }
    text = "\n".join(bullets.get(number, "") + " ".join(line) for number, line in kept_lines.items())
    return Grounded(text, used, check)


def _support_matrix(sentences: list[str], passages: list[str]) -> np.ndarray:
    """How well each passage supports each sentence: the better of the whole passage's support and that of
    its best statement (a line, or a sentence of one, with two content words or more).

    A short answer ("National park") means little beside a whole passage, whose other lines pull the
    embedding elsewhere; beside the one statement it rests on, it is judged on that statement alone.
    Only statements that share a word with the answer are embedded (a statement sharing none would
    need a cosine of 0.8 to reach the threshold): 0.15 s per answer instead of 0.5 s."""
    said = [content_words(sentence) for sentence in sentences]
    said_words = set().union(*said)
    statements: list[str] = []
    statement_words: list[set[str]] = []
    owners: list[int] = []
    for column, passage in enumerate(passages):
        for line in passage.split("\n"):
            for statement in SENTENCE.split(line):
                words = content_words(statement)
                if len(words) >= 2 and words & said_words:
                    statements.append(statement)
                    statement_words.append(words)
                    owners.append(column)
    vectors = embed_texts(sentences + passages + statements)
    answer, whole, parts = np.split(vectors, [len(sentences), len(sentences) + len(passages)])
    support = _support(said, [content_words(passage) for passage in passages], answer @ whole.T)
    by_statement = _support(said, statement_words, answer @ parts.T)
    for column, owner in enumerate(owners):
        support[:, owner] = np.maximum(support[:, owner], by_statement[:, column])
    return support


def _support(said: list[set[str]], available: list[set[str]], cosine: np.ndarray) -> np.ndarray:
    """Mean of lexical coverage (the share of each sentence's content words a text has) and cosine similarity."""
    lexical = np.zeros_like(cosine)
    for row, words in enumerate(said):
        if words:
            for column, present in enumerate(available):
                lexical[row, column] = len(words & present) / len(words)
    return (lexical + np.clip(cosine, 0, 1)) / 2


def _with_markers(sentence: str, markers: list[int]) -> str:
    if not markers:
        return sentence
    tags = "".join(f"[{number}]" for number in markers)
    match = re.search(r"[.!?]+$", sentence)
    if match:
        return f"{sentence[: match.start()]} {tags}{match.group(0)}"
    return f"{sentence} {tags}"
