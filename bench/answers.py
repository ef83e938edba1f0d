"""LoCoMo answers (issue 5), through `POST /api/ask` as Server-Sent Events.

Each conversation of `locomo_dev.json` becomes a user and each session a note (as in `bench.locomo`);
then a sample of questions — the same number from each category, spread over the conversations — is
asked. Reported:

- category 5 (the answer is not in the conversation): the share of answers that abstain;
- categories 1–4: the share that do not abstain, and token F1 against the reference answer as LoCoMo
  defines it (lower-case, punctuation and articles stripped, tokens Porter-stemmed and compared;
  multi-hop answers are compared part by part, split at commas);
- the share of the model's citation markers that passed the citation check;
- time to first token and to the last token as the client sees them (p50, p95), and the time the
  model server itself needs to read the same prompts (each stored prompt sent again with
  `max_tokens=1`), so the app's own overhead is visible.

    python -m bench answers --per-category 20                  # in process: bench DB, worker, daphne
    python -m bench answers --url http://127.0.0.1:8000        # a running app (no server prompt times)
    python -m bench answers --categories 5 --per-category 1000 # every category-5 question (237)
    python -m bench answers --person-check                     # calibrates the person check, no model
    python -m bench answers --regrade var/bench/answers-*.json # stored answers checked again by today's code
    python -m bench answers --replay var/bench/answers-<model>.json  # the stored prompts asked again (`replayed`)

An in-process run also writes every question's model answer (before the check) and the passages it
was given to `var/bench/answers-<model>.json`; `--regrade` runs the answer checks again on those —
the figures, how many answers each check turned away, and every question whose verdict changed since
the run (`--sweep`: at other support thresholds too) — which calibrates the checks on the model's real
answers without asking the model again.

`--person-check` runs every question's retrieval in process and applies the answer checks — the
person test (chat/checks.py `about_someone_else`) and the detail test (`missing_details`, at
several thresholds), each alone and both together — with the reference answer standing in for the
model's: for category 5 the adversarial answer, which is what a fooled model says. It also applies
the check that needs no answer (`told_of_someone_else`: the question searched about the other
speaker), alone and with the others as the app uses them ("all in use").

The chat model is whatever OPENAI_BASE_URL serves; `python -m secondbrain.stack bench answers` with
`CHAT_MODEL_PATH` set to another GGUF measures another local model.
"""

import argparse
import functools
import json
import os
import re
import statistics
import string
import time
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from bench.common import percentile
from bench.connections import in_process
from bench.locomo import DATA, HALVES, HttpApi, conversations, ingest

if TYPE_CHECKING:
    from chat.selectors import Hit

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "not in notes"}
DETAIL_SWEEP = (2500, 5000, 8000, 10000)  # how many common words the detail check ignores, calibrated by --person-check
_MARKER = re.compile(r"\s*\[\d{1,3}\]")
FACT_MAX_WORDS = 60


@dataclass(frozen=True)
class Asked:
    sample_id: str
    text: str
    category: int
    reference: str


@dataclass
class Outcome:
    asked: Asked
    answer: str = ""
    abstained: bool = False
    f1: float = 0.0
    first_token: float | None = None
    last_token: float = 0.0
    markers_claimed: int = 0
    markers_kept: int = 0
    message_id: int | None = None
    error: str = ""


# --- LoCoMo's answer metric -----------------------------------------------------------------------


def normalize(text: str) -> str:
    text = _MARKER.sub("", text).lower().replace(",", " ")
    text = "".join(character for character in text if character not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the|and)\b", " ", text)
    return " ".join(text.split())


@functools.cache
def _stem(word: str) -> str:
    from nltk.stem import PorterStemmer  # what LoCoMo's task_eval/evaluation.py stems with

    return PorterStemmer().stem(word)


def token_f1(prediction: str, reference: str) -> float:
    predicted = [_stem(word) for word in normalize(prediction).split()]
    wanted = [_stem(word) for word in normalize(reference).split()]
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def answer_f1(prediction: str, reference: str, category: int) -> float:
    """LoCoMo's scoring: multi-hop references are lists, each part matched by its best predicted part."""
    if category == 3:
        reference = reference.split(";")[0]
    if category != 1:
        return token_f1(prediction, reference)
    parts = [part for part in prediction.split(",") if part.strip()] or [prediction]
    wanted = [part for part in reference.split(",") if part.strip()]
    return statistics.mean(max(token_f1(part, piece) for part in parts) for piece in wanted)


def squad_normal(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = _MARKER.sub("", text).lower()
    text = "".join(character for character in text if character not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def contains_gold(prediction: str, reference: str, category: int) -> bool:
    """Issue 20's answer metric: the reference stands in the answer (each part of a multi-hop list), and
    the answer is under FACT_MAX_WORDS words, so that pasting passages cannot win."""
    if len(prediction.split()) > FACT_MAX_WORDS:
        return False
    answer = squad_normal(prediction)
    parts = reference.split(",") if category == 1 else [reference.split(";")[0]]
    wanted = [squad_normal(part) for part in parts if squad_normal(part)]
    return bool(wanted) and all(part in answer for part in wanted)


# --- The sample ------------------------------------------------------------------------------------


def sample(per_category: int, path: Path = DATA, categories: tuple[int, ...] = tuple(CATEGORIES)) -> list[Asked]:
    """`per_category` questions of each of `categories`, taken from the conversations in turn."""
    by_category: dict[int, list[list[Asked]]] = defaultdict(list)
    for item in json.loads(path.read_text()):
        questions = defaultdict(list)
        for qa in item["qa"]:
            reference = str(qa.get("answer", qa.get("adversarial_answer", "")))
            questions[qa["category"]].append(Asked(item["sample_id"], qa["question"], qa["category"], reference))
        for category, asked in questions.items():
            by_category[category].append(asked)
    chosen = []
    for category in sorted(categories):
        pools = by_category[category]
        taken = 0
        for index in range(max(map(len, pools))):
            for pool in pools:
                if index < len(pool) and taken < per_category:
                    chosen.append(pool[index])
                    taken += 1
    return chosen


# --- Asking ----------------------------------------------------------------------------------------


@dataclass
class Streamed:
    """One `POST /api/ask` as Server-Sent Events: the `done` event, an error code, the client's times."""

    done: dict[str, Any]
    error: str = ""
    first_token: float | None = None  # seconds from sending the request
    seconds: float = 0.0


def ask_streamed(base_url: str, token: str, body: dict[str, Any]) -> Streamed:
    request = urllib.request.Request(
        base_url.rstrip("/") + "/api/ask",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": "text/event-stream", "Authorization": f"Bearer {token}"},
        method="POST",
    )
    streamed = Streamed(done={})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as response:
        for kind, event in _events(response):
            if kind == "token" and streamed.first_token is None:
                streamed.first_token = time.perf_counter() - started
            elif kind == "error":
                streamed.error = event.get("code", "error")
            elif kind == "done":
                streamed.done = event
    streamed.seconds = time.perf_counter() - started
    return streamed


def ask(base_url: str, token: str, asked: Asked) -> Outcome:
    """One question as SSE; times are from sending the request."""
    streamed = ask_streamed(base_url, token, {"question": asked.text})
    done, check = streamed.done, streamed.done.get("check") or {}
    outcome = Outcome(
        asked,
        answer=done.get("answer", ""),
        abstained=done.get("abstained", False),
        first_token=streamed.first_token,
        last_token=streamed.seconds,
        markers_claimed=check.get("markers_claimed", 0),
        markers_kept=check.get("markers_kept", 0),
        message_id=done.get("message_id"),
        error=streamed.error,
    )
    if not outcome.abstained:
        outcome.f1 = answer_f1(outcome.answer, asked.reference, asked.category)
    return outcome


def _events(response: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    kind, data = "", ""
    for raw in response:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
        elif not line and kind:
            yield kind, json.loads(data)
            kind, data = "", ""


def server_prompt_seconds(message_ids: list[int]) -> dict[int, float]:
    """Send each stored prompt to the model server again, `max_tokens=1`: the server's own reading time,
    by message (those the model was asked for)."""
    import openai
    from django.conf import settings

    from chat.models import Message

    client = openai.OpenAI(base_url=settings.OPENAI_BASE_URL, api_key=settings.OPENAI_API_KEY, max_retries=0)
    seconds = {}
    for message in Message.objects.filter(pk__in=message_ids).exclude(trace__prompt=None).order_by("pk"):
        started = time.perf_counter()
        client.chat.completions.create(
            model=settings.CHAT_MODEL, messages=message.trace["prompt"], max_tokens=1, temperature=0.0
        )
        seconds[message.pk] = time.perf_counter() - started
    return seconds


# --- Report ----------------------------------------------------------------------------------------


def report(outcomes: list[Outcome], server_seconds: list[float], log: Any = print) -> None:
    model = os.environ.get("CHAT_MODEL") or "the configured model"
    log(f"LoCoMo dev answers through POST /api/ask ({model}), {len(outcomes)} questions:")
    for half, sample_ids in HALVES.items():
        asked = [o for o in outcomes if o.asked.sample_id in sample_ids]
        if not asked:
            continue
        log(f"  {half} half ({', '.join(sample_ids)}):")
        answerable = [o for o in asked if o.asked.category != 5]
        unanswerable = [o for o in asked if o.asked.category == 5]
        right = sum(o.abstained for o in unanswerable) + sum(
            not o.abstained and contains_gold(o.answer, o.asked.reference, o.asked.category) for o in answerable
        )
        log(f"    right (category 5 abstained, 1-4 with the gold answer): {right / len(asked):.0%} of {len(asked)}")
        if unanswerable:
            abstained = sum(o.abstained for o in unanswerable)
            log(f"    category 5 abstained: {abstained / len(unanswerable):.0%} of {len(unanswerable)}")
        if answerable:
            answered = [o for o in answerable if not o.abstained]
            golden = [o for o in answered if contains_gold(o.answer, o.asked.reference, o.asked.category)]
            log(f"    categories 1-4 answered: {len(answered) / len(answerable):.0%} of {len(answerable)}; "
                f"the answer contains the gold answer (under {FACT_MAX_WORDS} words): "
                f"{len(golden) / len(answerable):.0%}")  # fmt: skip
            log(f"    token F1 over 1-4 (an abstention scores 0): {statistics.mean(o.f1 for o in answerable):.3f}")
            for category in (1, 2, 3, 4):
                scored = [o.f1 for o in answerable if o.asked.category == category]
                if scored:
                    log(f"      {CATEGORIES[category]:<12} F1 {statistics.mean(scored):.3f} ({len(scored)})")
    claimed = sum(o.markers_claimed for o in outcomes)
    kept = sum(o.markers_kept for o in outcomes)
    log(
        f"  citation markers written by the model that passed the check: {kept}/{claimed}"
        + (f" ({kept / claimed:.0%})" if claimed else "")
    )
    errors = Counter(o.error for o in outcomes if o.error)
    if errors:
        log(f"  errors: {dict(errors)}")
    firsts = [o.first_token for o in outcomes if o.first_token is not None and not o.abstained]
    lasts = [o.last_token for o in outcomes if not o.abstained]
    if firsts:
        log(
            f"  first token: p50 {statistics.median(firsts):.2f} s, p95 {percentile(firsts, 0.95):.2f} s (answered questions)"
        )
        log(f"  last token:  p50 {statistics.median(lasts):.2f} s, p95 {percentile(lasts, 0.95):.2f} s")
    if server_seconds:
        log(
            f"  model server reading the same prompts (max_tokens=1): p50 {statistics.median(server_seconds):.2f} s, "
            f"p95 {percentile(server_seconds, 0.95):.2f} s"
        )


def run(base_url: str, per_category: int, categories: tuple[int, ...], *, log: Any = print) -> list[Outcome]:
    chosen = sample(per_category, categories=categories)
    needed = {asked.sample_id for asked in chosen}
    api = HttpApi(base_url)
    tokens = {}
    for conversation in conversations():
        if conversation.sample_id in needed:
            started = time.perf_counter()
            tokens[conversation.sample_id] = ingest(api, conversation)
            log(f"{conversation.sample_id}: ingested in {time.perf_counter() - started:.1f} s")
    outcomes = []
    for number, asked in enumerate(chosen, start=1):
        outcome = ask(base_url, tokens[asked.sample_id], asked)
        outcomes.append(outcome)
        verdict = "abstained" if outcome.abstained else f"F1 {outcome.f1:.2f}"
        log(
            f"[{number}/{len(chosen)}] cat {asked.category} {verdict} {outcome.last_token:.1f} s | {asked.text} → {outcome.answer[:100]!r} (ref {asked.reference[:60]!r})"
        )
    return outcomes


# --- In process: a bench database, a worker thread and daphne on it --------------------------------


def stored_answer(message_id: int | None) -> dict[str, Any] | None:
    """An answer as `recheck` reads it: the model's own answer (before the checks), the passages it was given
    (in order), which check turned it away ("retrieval": nothing relevant found, the model not asked), the
    answer shown and the titles it cites."""
    from chat.models import Message
    from ingestion.models import Chunk

    message = Message.objects.filter(pk=message_id).first() if message_id else None
    if message is None:
        return None
    shown = message.trace.get("passages", [])
    ids = [chunk_id for passage in shown for chunk_id in (passage["chunk_id"], *passage.get("joined", []))]
    chunks = {
        pk: {"text": text, "source_title": title, "occurred_at": when.isoformat(), "anchor": anchor, "kind": kind}
        for pk, text, title, when, anchor, kind in Chunk.objects.filter(pk__in=ids).values_list(
            "pk", "text", "source__title", "occurred_at", "anchor", "source__kind"
        )
    }
    check = message.citation_check
    asked_model = message.route == Message.Route.QUESTION
    return {
        "question": message.trace.get("question", ""),  # as the checks read it (a follow-up too)
        "model_answer": check.get("model_answer", ""),
        "abstained_by": check.get("abstained_by") or ("retrieval" if message.abstained and asked_model else ""),
        "answer": message.content,
        "abstained": message.abstained,
        "cited": [
            {"source_title": title, "text": excerpt}
            for title, excerpt in message.citations.order_by("marker").values_list("source_title", "excerpt")
        ],
        "passages": [_as_shown(passage, chunks) for passage in shown if passage["chunk_id"] in chunks],
        "prompt": message.trace.get("prompt"),  # as the model read it: `--replay` asks again
        "shape": message.trace.get("shape"),
    }


def _as_shown(passage: dict[str, Any], chunks: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """A passage of a message's trace as the model read it: its chunk with those it was joined with."""
    from chat.services import joined_text

    first = dict(chunks[passage["chunk_id"]])
    for chunk_id in passage.get("joined", []):
        if chunk_id in chunks:
            first["text"] = joined_text(first["text"], chunks[chunk_id]["text"])
    return first


def dump(outcomes: list[Outcome], path: Path) -> None:
    """Each answered question with the model's own answer and the passages it was given (in order)."""
    records = []
    for outcome in outcomes:
        stored = stored_answer(outcome.message_id)
        if stored is not None:
            asked = outcome.asked
            records.append({**stored, "question": asked.text, "sample_id": asked.sample_id,
                            "category": asked.category, "reference": asked.reference})  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=1))


def regrade(paths: list[Path], *, sweep: bool = False, ablate: bool = False, log: Any = print) -> None:
    """Stored answers checked again by the code as it is now, against the verdicts stored when they were asked.

    Prints the figures at the app's thresholds, how many answers each check turned away (answerable and
    category 5 apart), and every question whose verdict changed, with the check that changed it. With
    `sweep`, the figures at several support thresholds, with and without the checks that need the question;
    with `ablate`, the figures with each of `chat.checks.CHECKS` left out, and with none of them.
    """
    from bench.common import setup_django

    setup_django()
    from chat import grounding

    records = [record for path in paths for record in json.loads(path.read_text())]
    log(f"{', '.join(path.name for path in paths)}: {len(records)} answers")
    now = [recheck(record) for record in records]
    stored = [
        Verdict(record["abstained_by"], record["answer"], record.get("cited", []), bool(record["abstained_by"]))
        for record in records
    ]
    log("  as stored: " + _regrade_figures(records, stored))
    log(f"  now (support {grounding.SUPPORT_THRESHOLD:.2f}): " + _regrade_figures(records, now))
    reasons: dict[str, Counter[str]] = {"1-4": Counter(), "5": Counter()}
    for record, (by, _, _, _) in zip(records, now, strict=True):
        if by:
            reasons["5" if record["category"] == 5 else "1-4"][by] += 1
    for group, counted in reasons.items():
        log(
            f"  turned away, category {group}: " + (", ".join(f"{by} {n}" for by, n in counted.most_common()) or "none")
        )
    changed = [
        (record, by, text)
        for record, (by, text, _, _) in zip(records, now, strict=True)
        if by != record["abstained_by"]
    ]
    log(f"  verdicts changed: {len(changed)}")
    for record, by, text in changed:
        was = record["abstained_by"] or "answered"
        log(
            f"    cat {record['category']} {was} -> {by or 'answered'} | {record['question']} -> "
            f"{(text if not by else record['model_answer'])[:90]!r} (ref {record['reference'][:50]!r})"
        )
    if ablate:
        for label, options in ablations():
            for half, mine in _halves(records).items():
                verdicts = [recheck(record, **options) for record in mine]
                log(f"  {label:<22} {half:<8} | " + _regrade_figures(mine, verdicts))
    if not sweep:
        return
    log("  support, checks that need the question | figures")
    for threshold in (0.3, 0.35, 0.4, 0.45, 0.5):
        for person in (False, True):
            verdicts = [recheck(record, with_question=person, support=threshold) for record in records]
            log(f"  {threshold:.2f}, {'with' if person else 'without'} | " + _regrade_figures(records, verdicts))


def _halves(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The records of each half (by conversation); all in one group for a dump made before halves were kept."""
    if not all("sample_id" in record for record in records):
        return {"all": records}
    return {half: [record for record in records if record["sample_id"] in ids] for half, ids in HALVES.items()}


def ablations() -> list[tuple[str, dict[str, Any]]]:
    """The answer as the app checks it, each check left out in turn, the detail check reading every source
    (as before 2026-12-01), and no checks:
    (label, `recheck`'s keyword arguments)."""
    from chat.checks import CHECKS, Check, detail

    def with_detail(**options: Any) -> dict[str, Any]:
        variant = Check("detail", functools.partial(detail, **options))
        return {"answer_checks": tuple(variant if c.name == "detail" else c for c in CHECKS)}

    return [
        ("all checks", {"answer_checks": CHECKS}),
        *((f"without {left.name}", {"answer_checks": tuple(c for c in CHECKS if c is not left)}) for left in CHECKS),
        ("detail in any source", with_detail(within_source=False)),
        ("no checks", {"answer_checks": ()}),
    ]


BEFORE_THE_MODEL = ("retrieval", "elsewhere")  # verdicts settled before the model was asked: nothing to re-check
_CHOSEN_FOR = re.compile(r"\nThe sources were chosen for this time: (.*)\.$")


def replayed(records: list[dict[str, Any]], *, log: Any = print) -> list[dict[str, Any]]:
    """Each stored answer asked of the model again: its question, earlier turns and passages (as the run
    retrieved them) in a prompt written by today's code (`chat.services.prompt_of`); the new answer and the
    seconds to its first token in place of the old (`first_token`). Verdicts settled before the model was
    asked are kept. A change of the instructions or of how a source is shown, measured in minutes: a prompt
    that today's code writes as the run did is not asked again (the model answers one prompt the same way
    each time), and only the prompts asked again have a first token."""
    import asyncio

    from django.conf import settings

    from chat import intent, llm, services

    async def answer_of(prompt: list[dict[str, str]], shape: str) -> tuple[str, float | None]:
        """The answer and the seconds to its first token."""
        factor = 1 if shape == intent.FACT else services.LONG_SHAPE_FACTOR
        started, first, parts = time.perf_counter(), None, []
        async for token in llm.chat_stream(prompt, max_tokens=settings.CHAT_MAX_TOKENS * factor):
            first = first or time.perf_counter() - started
            parts.append(token)
        return "".join(parts), first

    again = []
    for number, record in enumerate(records, start=1):
        if not record.get("prompt") or record["abstained_by"] in BEFORE_THE_MODEL:
            again.append({**record, "first_token": None})
            continue
        shape = record.get("shape") or intent.FACT
        chosen_for = _CHOSEN_FOR.search(record["prompt"][0]["content"])
        prompt = services.prompt_of(
            question=record["prompt"][-1]["content"],
            hits=cast("list[Hit]", [Passage.of(passage) for passage in record["passages"]]),
            history=record["prompt"][1:-1],
            range_label=chosen_for.group(1) if chosen_for else "",
            shape=shape,
        )
        if prompt == record["prompt"]:
            again.append({**record, "first_token": None})
            continue
        answer, first_token = asyncio.run(answer_of(prompt, shape))
        again.append(
            {**record, "model_answer": answer, "abstained_by": "", "prompt": prompt, "first_token": first_token}
        )
        if number % 20 == 0:
            log(f"  replayed {number} of {len(records)}")
    log(f"  {sum(1 for record in again if record['first_token'] is not None)} of {len(records)} prompts asked again")
    return again


def replay_file(path: Path, *, log: Any = print) -> Path:
    """`replayed` on a run's stored answers, written beside them; the new file's path (to `--regrade`)."""
    from bench.common import setup_django

    setup_django()
    from django.conf import settings

    records = replayed(json.loads(path.read_text()), log=log)
    firsts = [record["first_token"] for record in records if record.get("first_token") is not None]
    if firsts:
        log(
            f"  first token p50 {statistics.median(firsts):.2f} s, p95 {percentile(firsts, 0.95):.2f} s ({len(firsts)} answers)"
        )
    stored = path.with_name(f"{path.stem}-replayed-{settings.CHAT_MODEL}.json")
    stored.write_text(json.dumps(records, indent=1))
    log(f"  replayed answers: {stored}")
    return stored


def recheck(
    record: dict[str, Any],
    *,
    with_question: bool = True,
    support: float | None = None,
    answer_checks: tuple[Any, ...] | None = None,
) -> "Verdict":
    """Which check turns the stored model answer away now ("" for none), the answer as it would be shown and
    the passages it would cite.

    An answer settled before the model was asked (no relevant passage, told of someone else, a conversation
    reply or a listing) stays as it was.
    """
    from chat import grounding, intent, services

    if record["abstained_by"] in BEFORE_THE_MODEL or not record.get("model_answer") and not record["abstained_by"]:
        by = record["abstained_by"]
        return Verdict(by, record["answer"], record.get("cited", []), record.get("abstained", bool(by)))
    hits = [Passage.of(passage) for passage in record["passages"]]
    grounded = services.check_answer(
        question=record["question"] if with_question else "",
        answer=record["model_answer"],
        # Stored passages stand in for hits: check_answer reads only what Passage has.
        hits=cast("list[Hit]", hits),
        support=grounding.SUPPORT_THRESHOLD if support is None else support,
        answer_checks=answer_checks,
        shape=intent.shape_of(record["question"]),
    )
    cited = [record["passages"][number - 1] for number in grounded.markers]
    by = grounded.check.get("abstained_by", "")
    return Verdict(by, grounded.text, cited, bool(by))


class Verdict(NamedTuple):
    by: str  # the check that turned the answer away, "" when it is answered
    text: str  # the answer as shown
    cited: list[dict[str, Any]]  # the passages it cites: their `source_title` and `text`
    abstained: bool


def _regrade_figures(records: list[dict[str, Any]], verdicts: list[Verdict]) -> str:
    """The benchmark's figures for these verdicts: (the check that turned an answer away or "", the answer shown)."""
    five = [bool(by) for record, (by, _, _, _) in zip(records, verdicts, strict=True) if record["category"] == 5]
    answerable = [
        (record, by, text)
        for record, (by, text, _, _) in zip(records, verdicts, strict=True)
        if record["category"] != 5
    ]
    answered = sum(not by for _, by, _ in answerable)
    f1 = [0.0 if by else answer_f1(text, record["reference"], record["category"]) for record, by, text in answerable]
    gold = sum(
        not by and contains_gold(text, record["reference"], record["category"]) for record, by, text in answerable
    )
    right = (sum(five) + gold) / max(1, len(records))  # category 5 abstained, or 1-4 with the gold answer
    return (
        f"right {right:.0%} | "
        f"category 5 abstained {sum(five)}/{len(five)} ({sum(five) / max(1, len(five)):.1%}), "
        f"1-4 answered {answered}/{len(answerable)} ({answered / max(1, len(answerable)):.1%}), "
        f"contains gold {gold}/{len(answerable)}, F1 {statistics.mean(f1 or [0.0]):.3f}"
    )


@dataclass(frozen=True)
class Passage:
    """What `services.check_answer` reads of a hit."""

    text: str
    source_title: str
    occurred_at: datetime
    anchor: dict[str, Any]
    kind: str = "note"

    @classmethod
    def of(cls, stored: dict[str, Any]) -> "Passage":
        return cls(
            stored["text"],
            stored["source_title"],
            datetime.fromisoformat(stored["occurred_at"]),
            stored["anchor"],
            stored.get("kind", "note"),
        )


def person_check(log: Any = print) -> None:
    from bench.locomo import in_process

    with in_process() as api:
        from django.conf import settings

        from accounts.models import User
        from chat import checks, selectors, services

        tokens = {conversation.sample_id: ingest(api, conversation) for conversation in conversations()}
        del tokens  # the users exist now; retrieval runs as them directly
        turned_away: dict[tuple[str, int], list[bool]] = defaultdict(list)
        for asked in sample(10_000):
            user = User.objects.filter(username__startswith=f"locomo-{asked.sample_id}-").get()
            retrieval = selectors.retrieve(owner=user, query=asked.text, k=settings.ANSWER_CONTEXT_PASSAGES)
            relevant = services._relevant(retrieval)
            passages = [hit.text for hit in relevant]
            person = checks.about_someone_else(asked.text, asked.reference, passages)
            turned_away[("person", asked.category)].append(person)
            details = {
                common: bool(checks.missing_details(asked.text, asked.reference, passages, common=common))
                for common in DETAIL_SWEEP
            }
            for common, detail in details.items():
                turned_away[(f"detail {common}", asked.category)].append(detail)
                turned_away[(f"both {common}", asked.category)].append(person or detail)
            # Settled before the model is asked, so it needs no answer: the question searched about the other speaker.
            elsewhere = (
                bool(relevant)
                and services._told_elsewhere(user=user, question=asked.text, hits=relevant, ignore_dates=False)
                is not None
            )
            in_use = person or details[checks.DETAIL_COMMON_WORDS]
            turned_away[("elsewhere", asked.category)].append(elsewhere)
            turned_away[("all in use", asked.category)].append(in_use or elsewhere)
    log("Person and detail checks on LoCoMo dev (reference answers standing in for the model's): share turned away")
    log(
        "  detail N: a rare word of the question (not among the N most common) in no passage; "
        f"in use: {checks.DETAIL_COMMON_WORDS}"
    )
    names = list(dict.fromkeys(check for check, _ in turned_away))
    log(f"  {'check':<12} " + " ".join(f"{CATEGORIES[category]:>12}" for category in sorted(CATEGORIES)) + "   cat 1-4")
    for check in names:
        cells = [turned_away[(check, category)] for category in sorted(CATEGORIES)]
        answerable = [value for category in (1, 2, 3, 4) for value in turned_away[(check, category)]]
        log(
            f"  {check:<12} "
            + " ".join(f"{sum(values) / max(1, len(values)):>12.0%}" for values in cells)
            + f"   {sum(answerable) / max(1, len(answerable)):>7.0%}"
        )
    counts = ", ".join(f"{category}: {len(turned_away[('person', category)])}" for category in sorted(CATEGORIES))
    log(f"  questions per category: {counts}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench answers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running app's base URL; default: in process")
    parser.add_argument("--per-category", type=int, default=20, help="questions asked per category (default 20)")
    parser.add_argument(
        "--categories",
        default="1,2,3,4,5",
        help="which categories to ask, e.g. 5 with --per-category 1000 for all of it",
    )
    parser.add_argument("--person-check", action="store_true", help="calibrate the person and detail checks (no model)")
    parser.add_argument(
        "--regrade", type=Path, nargs="+", help="check runs' stored answers again with the code as it is now"
    )
    parser.add_argument("--sweep", action="store_true", help="with --regrade: at several support thresholds too")
    parser.add_argument("--ablate", action="store_true", help="with --regrade: each answer check left out in turn")
    parser.add_argument(
        "--replay", type=Path, help="ask the model again with a run's stored prompts in today's wording; then regrade"
    )
    args = parser.parse_args(argv or [])
    categories = tuple(sorted({int(part) for part in args.categories.split(",")}))
    if args.replay:
        regrade([replay_file(args.replay)], ablate=args.ablate)
        return
    if args.regrade:
        regrade(args.regrade, sweep=args.sweep, ablate=args.ablate)
        return
    if args.person_check:
        person_check()
        return
    if args.url:
        report(run(args.url, args.per_category, categories), [])
        return
    with in_process() as base_url:
        outcomes = run(base_url, args.per_category, categories)
        server_seconds = list(
            server_prompt_seconds([o.message_id for o in outcomes if o.message_id and not o.abstained]).values()
        )
        from django.conf import settings

        which = "" if categories == tuple(CATEGORIES) else "-category-" + "".join(map(str, categories))
        stored = Path(settings.BASE_DIR) / "var" / "bench" / f"answers-{settings.CHAT_MODEL}{which}.json"
        dump(outcomes, stored)
    report(outcomes, server_seconds)
    print(f"  answers and passages: {stored} (python -m bench answers --regrade {stored})")


if __name__ == "__main__":
    main()
