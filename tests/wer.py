"""Word error rate, for the transcription tests and benchmarks."""

import re

_WORD = re.compile(r"\w+(?:'\w+)*")


def words(text: str) -> list[str]:
    """Lower-case words without punctuation: "Don't stop, 3:2!" → ["don't", "stop", "3", "2"]."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def edit_distance(reference: list[str], hypothesis: list[str]) -> int:
    """Substitutions + deletions + insertions that turn `reference` into `hypothesis` (Levenshtein)."""
    previous = list(range(len(hypothesis) + 1))
    for i, expected in enumerate(reference, start=1):
        current = [i]
        for j, heard in enumerate(hypothesis, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (expected != heard)))
        previous = current
    return previous[-1]


def wer(reference: str, hypothesis: str) -> float:
    """Word errors per reference word, after normalizing case and punctuation."""
    expected = words(reference)
    if not expected:
        raise ValueError("the reference has no words")
    return edit_distance(expected, words(hypothesis)) / len(expected)
