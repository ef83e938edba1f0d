"""What the model is shown (issue 20): which similarity gate, and how many passages?

Before the model is asked, the chat keeps only the passages whose cosine similarity to the question
is at least `RELEVANCE_MIN_SIMILARITY`, and says "not in your notes" without the model when none is
left. A gate set too high drops the passage that answers ("when is my next physio session?"); set too
low, it lets through questions the notes know nothing of. This measures both sides on every
yardstick's halves, through `GET /api/search` (its `similarity` field) with the `k` the chat reads:

- kept: the share of answerable questions for which a passage holding the answer is among the
  results and at or above the threshold (the gate does not cost the answer);
- turned away: the share of unanswerable questions for which no result reaches the threshold.

Answerable and unanswerable per yardstick: the first week's facts, paraphrases, who, when, lists and
summaries against its absent facts (a false premise's topic is in the notes, so the gate is not the
check for it; shown on its own row); SQuAD 2.0's answerable questions against its `is_impossible`
ones (written against the same paragraph: the gate cannot tell those apart and should not try);
LoCoMo's categories 1–4 against category 5 (typed format).

It also prints, for the answerable questions, how often a passage holding the answer is among the
first n results (n up to the `k` the chat reads): the cost of showing the model fewer passages, which
is most of its time to the first word; and, for margins below the best result's similarity, how often
the answer is still among the results a fact question shows the model (`RELEVANCE_MARGIN`) and how many
words they come to.

    python -m bench context              # in process: a bench database and a worker thread
    python -m bench context --per-article 20 --per-category 16 --show 0.2
"""

import argparse
import json
import urllib.parse
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from bench import firstweek, locomo, squad
from bench.locomo import Api, _ok

THRESHOLDS = (0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40)
SENTENCE_THRESHOLDS = (0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.70)
MARGINS = (0.05, 0.10, 0.15, 0.20, 0.25, None)  # below the best passage's similarity; None: no margin
ANSWERABLE_TYPES = {"fact", "paraphrase", "who", "when", "list", "summary"}
# Questions about the world, not the person's notes: what the gate is for. Written for this bench.
OFF_TOPIC = (
    "What's the capital of Australia?",
    "How many moons does Jupiter have?",
    "Who won the World Cup in 2018?",
    "How do you say good morning in Japanese?",
    "What's the boiling point of water at altitude?",
    "Who wrote Pride and Prejudice?",
    "What is the square root of 144?",
    "How tall is the Eiffel Tower?",
)


@dataclass(frozen=True)
class Probe:
    yardstick: str
    half: str
    group: str  # "answerable", "unanswerable", or a group shown on its own ("false premise", "off topic")
    text: str
    holds: Callable[[str], bool]  # whether a passage holds the answer (answerable questions)


@dataclass(frozen=True)
class Seen:
    probe: Probe
    similarities: list[float]  # of every result, in rank order
    answering: list[float]  # of the results that hold the answer
    # Each result's by its nearest sentence (`sentence_similarity`), and of the results that hold the answer.
    nearest: list[float]
    answering_nearest: list[float]
    first: int | None  # the rank (from 1) of the first result that holds it
    holding: tuple[int, ...] = ()  # the ranks (from 1) of every result that holds it
    words: tuple[int, ...] = ()  # each result's length in words


def _never(_: str) -> bool:
    return False


def _words_in(words: Iterable[str]) -> Callable[[str], bool]:
    wanted = [word.lower() for word in words]
    return lambda text: any(word in text.lower() for word in wanted)


def firstweek_probes(api: Api) -> tuple[str, list[Probe]]:
    token = firstweek.ingest(api, datetime.now(UTC))
    probes = []
    for question in firstweek.questions():
        rule = question.rule
        words = (
            rule.get("contains_any", []) + rule.get("contains_all", []) + rule.get("contains_min", {}).get("words", [])
        )
        if question.type in ANSWERABLE_TYPES and words:
            probes.append(Probe("first week", question.half, "answerable", question.text, _words_in(words)))
        elif question.type == "absent":
            probes.append(Probe("first week", question.half, "unanswerable", question.text, _never))
        elif question.type == "false_premise":
            probes.append(Probe("first week", question.half, "false premise", question.text, _never))
    half = len(OFF_TOPIC) // 2
    for number, text in enumerate(OFF_TOPIC):
        probes.append(Probe("first week", "tune" if number < half else "confirm", "off topic", text, _never))
    return token, probes


def squad_probes(api: Api, per_article: int) -> tuple[str, list[Probe]]:
    data = squad.articles()
    token = squad.ingest(api, data)
    probes = []
    for half, asked in squad.asked_of(data, per_article).items():
        for one in asked:
            group = "answerable" if one.golds else "unanswerable"
            holds = (lambda golds: lambda text: squad.holds_gold(text, golds))(one.golds)
            probes.append(Probe("SQuAD 2.0", half, group, one.text, holds if one.golds else _never))
    return token, probes


def locomo_probes(api: Api, per_category: int) -> dict[str, tuple[str, list[Probe]]]:
    """Per conversation of both halves: its token and its first `per_category` questions of each category."""
    raw = {item["sample_id"]: item for item in json.loads(locomo.DATA.read_text())}
    result = {}
    for conversation in locomo.conversations(note_format="typed"):
        half = next((name for name, ids in locomo.HALVES.items() if conversation.sample_id in ids), None)
        if half is None:
            continue
        token = locomo.ingest(api, conversation)
        probes = []
        by_category: dict[int, int] = defaultdict(int)
        for question in conversation.questions:
            if by_category[question.category] < per_category:
                by_category[question.category] += 1
                holds = (lambda evidence: lambda text: any(" ".join(e.split()) in text for e in evidence))(
                    question.evidence
                )
                probes.append(Probe("LoCoMo", half, "answerable", question.text, holds))
        adversarial = [qa["question"] for qa in raw[conversation.sample_id]["qa"] if qa["category"] == 5]
        probes += [Probe("LoCoMo", half, "unanswerable", text, _never) for text in adversarial[:per_category]]
        result[conversation.sample_id] = (token, probes)
    return result


def look(api: Api, token: str, probe: Probe, k: int) -> Seen:
    query = urllib.parse.urlencode({"q": probe.text, "k": k})
    results = _ok(api.request("GET", f"/api/search?{query}", token=token), 200)["results"]
    similarities = [result["similarity"] for result in results]
    nearest = [result["sentence_similarity"] for result in results]
    normal = [" ".join(result["text"].split()) for result in results]
    holding = [rank for rank, text in enumerate(normal, start=1) if probe.holds(text)]
    answering = [similarities[rank - 1] for rank in holding]
    answering_nearest = [nearest[rank - 1] for rank in holding]
    first = holding[0] if holding else None
    words = tuple(len(text.split()) for text in normal)
    return Seen(probe, similarities, answering, nearest, answering_nearest, first, tuple(holding), words)


def kept_within(row: Seen, margin: float | None) -> list[int]:
    """The ranks (from 1) the chat would show the model of a fact question at `margin` (`services.kept_ranks`)."""
    from chat.services import kept_ranks

    return [index + 1 for index in kept_ranks(row.similarities, row.nearest, margin=margin)]


def _within_margin(rows: list[Seen], margin: float | None) -> tuple[float, float]:
    """Of these answerable questions at `margin`: the share whose kept passages hold the answer, and the mean
    words shown."""
    held = words = 0
    for row in rows:
        ranks = kept_within(row, margin)
        held += bool(set(ranks) & set(row.holding))
        words += sum(row.words[rank - 1] for rank in ranks)
    return held / max(1, len(rows)), words / max(1, len(rows))


def _reaches(similarities: list[float], nearest: list[float], threshold: float, sentence: float | None) -> bool:
    """Whether a result passes the gate: its own similarity reaches `threshold`, or (with `sentence`)
    its nearest sentence's reaches `sentence`."""
    return any(
        s >= threshold or (sentence is not None and n >= sentence) for s, n in zip(similarities, nearest, strict=True)
    )


def report(seen: list[Seen], gate: float, log: Callable[[str], None] = print) -> None:
    groups: dict[tuple[str, str, str], list[Seen]] = defaultdict(list)
    for one in seen:
        groups[(one.probe.yardstick, one.probe.group, one.probe.half)].append(one)
    log("The relevance gate by threshold: answerable kept (a passage holding the answer reaches it) · "
        "unanswerable turned away (no result reaches it); tune / confirm")  # fmt: skip
    _gate_table(seen, groups, [(threshold, None) for threshold in THRESHOLDS], log)
    log(f"The gate at {gate:.2f}, or a passage kept by its nearest sentence at (tune / confirm):")
    _gate_table(seen, groups, [(gate, sentence) for sentence in SENTENCE_THRESHOLDS], log)
    log("A passage holding the answer among the first n results (answerable questions), tune / confirm:")
    for yardstick in dict.fromkeys(one.probe.yardstick for one in seen):
        halves = [groups.get((yardstick, "answerable", half), []) for half in ("tune", "confirm")]
        cells = []
        for n in range(1, max(len(one.similarities) for one in seen) + 1):
            within = [
                sum(row.first is not None and row.first <= n for row in rows) / max(1, len(rows)) for rows in halves
            ]
            cells.append(f"n {n}: " + " / ".join(f"{share:.0%}" for share in within))
        log(f"  {yardstick:<12} " + " · ".join(cells))
    log("Passages within a margin of the best one's similarity (the question's or its nearest sentence's), "
        "past the gate: answerable kept · mean words shown, tune / confirm")  # fmt: skip
    for yardstick in dict.fromkeys(one.probe.yardstick for one in seen):
        halves = [groups.get((yardstick, "answerable", half), []) for half in ("tune", "confirm")]
        cells = []
        for margin in MARGINS:
            name = "none" if margin is None else f"{margin:.2f}"
            figures = [_within_margin(rows, margin) for rows in halves]
            shares = " / ".join(f"{share:.0%}" for share, _ in figures)
            cells.append(f"{name}: {shares} · " + " / ".join(f"{words:.0f}" for _, words in figures))
        log(f"  {yardstick:<12} " + " | ".join(cells))
    reachable = [one for one in seen if one.probe.group == "answerable" and one.answering]
    missing = len([one for one in seen if one.probe.group == "answerable"]) - len(reachable)
    log(
        f"  ({missing} answerable questions had no result holding the answer at any threshold: retrieval's, not the gate's)"
    )


def _gate_table(
    seen: list[Seen],
    groups: dict[tuple[str, str, str], list[Seen]],
    gates: list[tuple[float, float | None]],
    log: Callable[[str], None],
) -> None:
    log(f"  {'':<34}" + "".join(f"{sentence if sentence is not None else gate:>14.2f}" for gate, sentence in gates))
    for yardstick in dict.fromkeys(one.probe.yardstick for one in seen):
        for group in ("answerable", "unanswerable", "false premise", "off topic"):
            halves = [groups.get((yardstick, group, half), []) for half in ("tune", "confirm")]
            if not any(halves):
                continue
            cells = []
            for gate, sentence in gates:
                shares = []
                for rows in halves:
                    if group == "answerable":
                        hits = sum(_reaches(row.answering, row.answering_nearest, gate, sentence) for row in rows)
                    else:
                        hits = sum(not _reaches(row.similarities, row.nearest, gate, sentence) for row in rows)
                    shares.append(f"{hits / max(1, len(rows)):.0%}")
                cells.append(" / ".join(shares))
            sizes = "/".join(str(len(rows)) for rows in halves)
            log(f"  {yardstick + ', ' + group + ' (' + sizes + ')':<34}" + "".join(f"{cell:>14}" for cell in cells))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench context", description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-article", type=int, default=10, help="SQuAD: answerable and unanswerable per article")
    parser.add_argument("--per-category", type=int, default=8, help="LoCoMo: questions per category and conversation")
    parser.add_argument("--show", type=float, help="list the tuning half's answerable questions dropped at this gate")
    args = parser.parse_args(argv or [])
    with locomo.in_process() as api:
        from django.conf import settings

        k, gate = settings.ANSWER_CONTEXT_PASSAGES, settings.RELEVANCE_MIN_SIMILARITY
        sets = [firstweek_probes(api), squad_probes(api, args.per_article)]
        sets += list(locomo_probes(api, args.per_category).values())
        seen = [look(api, token, probe, k) for token, probes in sets for probe in probes]
    report(seen, gate)
    if args.show is not None:
        for one in seen:
            dropped = one.answering and max(one.answering) < args.show
            if one.probe.half == "tune" and one.probe.group == "answerable" and dropped:
                print(
                    f"  dropped at {args.show}: {one.probe.yardstick}: {one.probe.text!r} (answer at {max(one.answering):.2f})"
                )
