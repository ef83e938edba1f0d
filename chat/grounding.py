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

from ingestion.embeddings import embed_texts

# Support = mean of lexical coverage and cosine similarity; calibrated by eye on the garden and
# LoCoMo examples (supported sentences score 0.6-0.9, unrelated ones under 0.3).
SUPPORT_THRESHOLD = 0.45
_MARKER = re.compile(r"\s*\[(\d{1,3})\]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\w+", re.UNICODE)
_STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being it its this that "
    "these those i you he she we they me my your our their his her them do does did have has had not no so "
    "than then there here what which who whom when where why how all any some can could would should will".split()
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
    return {word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS}


def ground(answer: str, passages: list[str]) -> Grounded:
    """Keep the sentences of `answer` that a passage supports, each with only the supporting markers.

    A marker survives only if its passage supports its sentence; a sentence without a surviving
    marker is attributed to its best-supporting passage when that clears the threshold. A claim
    (two or more content words) that no passage supports is removed; a marker that points to no
    passage never survives. `check` records each sentence's fate.
    """
    sentences = [part for part in _SENTENCE.split(answer.strip()) if part.strip()]
    plain = [_MARKER.sub("", sentence).strip() for sentence in sentences]
    support = _support_matrix(plain, passages) if sentences and passages else np.zeros((len(sentences), 0))
    used: list[int] = []
    kept_sentences: list[str] = []
    records: list[dict[str, Any]] = []
    for index, sentence in enumerate(sentences):
        claimed = [int(number) for number in _MARKER.findall(sentence)]
        valid = [number for number in dict.fromkeys(claimed) if 1 <= number <= len(passages)]
        kept = [number for number in valid if support[index, number - 1] >= SUPPORT_THRESHOLD]
        best = int(np.argmax(support[index])) if passages else -1
        best_support = float(support[index, best]) if passages else 0.0
        if not kept and best_support >= SUPPORT_THRESHOLD:
            kept = [best + 1]
        is_claim = len(content_words(plain[index])) >= 2
        removed = is_claim and not kept
        records.append(
            {
                "text": plain[index],
                "claimed": claimed,
                "kept": kept,
                "support": round(best_support, 3),
                "removed": removed,
            }
        )
        if removed:
            continue
        used.extend(number for number in kept if number not in used)
        kept_sentences.append(_with_markers(plain[index], kept))
    claimed_total = sum(len(record["claimed"]) for record in records)
    kept_claimed = sum(len(set(record["claimed"]) & set(record["kept"])) for record in records)
    check = {
        "threshold": SUPPORT_THRESHOLD,
        "sentences": records,
        "markers_claimed": claimed_total,
        "markers_kept": kept_claimed,
        "markers_added": sum(len(set(record["kept"]) - set(record["claimed"])) for record in records),
        "sentences_removed": sum(record["removed"] for record in records),
    }
    return Grounded(" ".join(kept_sentences), used, check)


def _support_matrix(sentences: list[str], passages: list[str]) -> np.ndarray:
    vectors = embed_texts(sentences + passages)
    cosine = vectors[: len(sentences)] @ vectors[len(sentences) :].T
    passage_words = [content_words(passage) for passage in passages]
    lexical = np.zeros_like(cosine)
    for row, sentence in enumerate(sentences):
        words = content_words(sentence)
        if words:
            for column, available in enumerate(passage_words):
                lexical[row, column] = len(words & available) / len(words)
    return (lexical + np.clip(cosine, 0, 1)) / 2


def _with_markers(sentence: str, markers: list[int]) -> str:
    if not markers:
        return sentence
    tags = "".join(f"[{number}]" for number in markers)
    match = re.search(r"[.!?]+$", sentence)
    if match:
        return f"{sentence[: match.start()]} {tags}{match.group(0)}"
    return f"{sentence} {tags}"
