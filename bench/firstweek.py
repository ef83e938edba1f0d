"""A person's first week (issue 20): do the chat's answers give them what they asked for?

`tests/data/firstweek` is material written for this project before any tuning: notes of the kinds
people keep, dated over two weeks before the run, and the questions of a first week — facts,
paraphrases, who and when, lists, summaries, time listings, follow-ups, greetings, questions about
the assistant, absent facts and false premises — each with a plain pass rule. One user saves the
notes (`POST /api/notes`); each question goes to `POST /api/ask` as Server-Sent Events (follow-ups
in the conversation of the question they follow), and its final answer is judged by its rule.
Questions marked `tune` may guide a change, those marked `confirm` decide whether it is kept; only
the tuning half's failures are printed.

    python -m bench firstweek                   in process: a bench database, a worker, daphne
    python -m bench firstweek --url http://127.0.0.1:8000
    python -m bench firstweek --types when,fact   only the conversations asking these kinds of question
    python -m bench firstweek --regrade var/bench/firstweek-<model>.json --ablate
    python -m bench firstweek --replay var/bench/firstweek-<model>.json

An in-process run writes each answer with the model's own words and its passages to
`var/bench/firstweek-<model>.json`; `--regrade` judges those again with today's answer checks, and
`--ablate` with each check of `chat.checks.CHECKS` left out in turn, without asking the model again.
`--replay` asks the model again with each stored question, its earlier turns and the passages the run
retrieved, in a prompt written by today's code (`chat.services.prompt_of`), and judges the new answers:
a change of the instructions or of how a source is shown, measured in minutes.
"""

import argparse
import json
import re
import secrets
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from datetime import time as clock
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.answers import ablations, ask_streamed, recheck, replayed, server_prompt_seconds, stored_answer
from bench.common import percentile
from bench.connections import in_process
from bench.locomo import PASSWORD, Api, HttpApi, _ok, wait_for_jobs

if TYPE_CHECKING:
    pass

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "firstweek"
ABSTAINED = re.compile(r"couldn't find|could not find|not in your notes|nothing in your notes", re.IGNORECASE)


@dataclass(frozen=True)
class Note:
    file: str
    title: str
    days_ago: int
    hour: int

    def occurred_at(self, now: datetime) -> str:
        day = now.date() - timedelta(days=self.days_ago)
        # A note of today at an hour still to come is dated just before the run, in the order of their hours
        # (10 s apart): run just after midnight, all of today's notes are such, and "the last thing I wrote"
        # must still be the latest hour's.
        just_before = now - timedelta(minutes=5) + timedelta(seconds=10 * self.hour)
        return min(datetime.combine(day, clock(self.hour), tzinfo=UTC), just_before).isoformat()


@dataclass(frozen=True)
class Question:
    id: str
    conversation: str
    text: str
    type: str
    half: str
    rule: dict[str, Any]


@dataclass
class Answer:
    question: Question
    text: str = ""
    abstained: bool = False
    cited: list[str] = field(default_factory=list)  # the titles of the cited sources
    route: str = ""
    follow_up: str | None = None
    first_token: float | None = None
    seconds: float = 0.0
    conversation_id: int | None = None
    message_id: int | None = None
    error: str = ""


def notes() -> list[Note]:
    return [
        Note(n["file"], n["title"], n["days_ago"], n["hour"]) for n in json.loads((DATA / "notes.json").read_text())
    ]


def questions() -> list[Question]:
    return [
        Question(q["id"], q["conversation"], q["question"], q["type"], q["half"], q["pass"])
        for q in json.loads((DATA / "questions.json").read_text())
    ]


def passes(answer: Answer, rule: dict[str, Any], titles: dict[str, str]) -> bool:
    """Whether the answer meets its question's rule (see tests/data/firstweek/README.md)."""
    text = answer.text.lower()
    abstained = answer.abstained or bool(ABSTAINED.search(answer.text))

    def has(word: str) -> bool:
        return word.lower() in text

    checks: list[bool] = []
    if "abstain" in rule:
        checks.append(abstained == bool(rule["abstain"]))
    if "abstain_or_contains_any" in rule:
        checks.append(abstained or any(has(word) for word in rule["abstain_or_contains_any"]))
    if "contains_any" in rule:
        checks.append(not abstained and any(has(word) for word in rule["contains_any"]))
    if "contains_all" in rule:
        checks.append(not abstained and all(has(word) for word in rule["contains_all"]))
    if "contains_min" in rule:
        spec = rule["contains_min"]
        checks.append(not abstained and sum(has(word) for word in spec["words"]) >= spec["at_least"])
    if "contains_none" in rule:
        checks.append(not any(has(word) for word in rule["contains_none"]))
    if rule.get("no_sources"):
        checks.append(not answer.cited)
    if rule.get("not_abstain"):
        checks.append(not abstained)
    if "cites_any" in rule:
        checks.append(any(titles[file] in answer.cited for file in rule["cites_any"]))
    if "cites_all" in rule:
        checks.append(all(titles[file] in answer.cited for file in rule["cites_all"]))
    return bool(checks) and all(checks)


def ingest(api: Api, now: datetime) -> str:
    username = f"firstweek-{secrets.token_hex(3)}"
    registered = api.request("POST", "/api/auth/register", body={"username": username, "password": PASSWORD})
    token: str = _ok(registered, 201)["token"]
    jobs = []
    for note in notes():
        body = {"title": note.title, "text": (DATA / note.file).read_text(), "occurred_at": note.occurred_at(now)}
        jobs.append(_ok(api.request("POST", "/api/notes", token=token, body=body), 202)["job_id"])
    wait_for_jobs(api, token, jobs, username)
    return token


def ask(base_url: str, token: str, question: Question, conversation_id: int | None) -> Answer:
    body = {"question": question.text} | ({"conversation_id": conversation_id} if conversation_id else {})
    streamed = ask_streamed(base_url, token, body)
    done = streamed.done
    return Answer(
        question,
        text=done.get("answer", ""),
        abstained=done.get("abstained", False),
        cited=[citation["source_title"] for citation in done.get("citations", [])],
        route=done.get("route", ""),
        follow_up=done.get("follow_up"),
        first_token=streamed.first_token,
        seconds=streamed.seconds,
        conversation_id=done.get("conversation_id"),
        message_id=done.get("message_id"),
        error=streamed.error,
    )


def run(base_url: str, *, types: set[str] | None = None, log: Any = print) -> list[tuple[Answer, bool]]:
    api = HttpApi(base_url)
    now = datetime.now(UTC)
    started = time.perf_counter()
    token = ingest(api, now)
    titles = {note.file: note.title for note in notes()}
    asked = questions()
    if types:  # whole conversations, so a follow-up is still asked after the turn it follows
        kept = {question.conversation for question in asked if question.type in types}
        asked = [question for question in asked if question.conversation in kept]
    log(f"{len(titles)} notes saved in {time.perf_counter() - started:.1f} s; {len(asked)} questions")
    conversations: dict[str, int | None] = {}
    results = []
    for number, question in enumerate(asked, start=1):
        answer = ask(base_url, token, question, conversations.get(question.conversation))
        conversations[question.conversation] = answer.conversation_id
        ok = passes(answer, question.rule, titles)
        results.append((answer, ok))
        if question.half == "tune":
            mark = "pass" if ok else "FAIL"
            log(f"[{number}/{len(asked)}] {mark} {question.type:<13} {answer.seconds:4.1f} s {answer.route:<12} "
                f"{question.text!r} → {answer.text[:140]!r}")  # fmt: skip
    return results


def report(
    results: list[tuple[Answer, bool]], server_seconds: dict[int, float] | None = None, log: Any = print
) -> None:
    """The pass rates by half and type, the first tokens by route, and the model server's own on the
    prompts the model was asked (`server_seconds`, by message) beside the app's on the same, when measured."""
    log("First week, answers that meet their question's rule:")
    for half in ("tune", "confirm"):
        rows = [(answer, ok) for answer, ok in results if answer.question.half == half]
        by_type: dict[str, list[bool]] = defaultdict(list)
        for answer, ok in rows:
            by_type[answer.question.type].append(ok)
        passed = sum(ok for _, ok in rows)
        log(f"  {half} half: {passed / len(rows):.1%} ({passed} of {len(rows)})")
        log("    by type: " + ", ".join(f"{kind} {sum(oks)}/{len(oks)}" for kind, oks in sorted(by_type.items())))
        for route in ("conversation", "question", "listing"):
            first = [a.first_token for a, _ in rows if a.route == route and a.first_token is not None]
            if first:
                log(f"    first token, {route}: p50 {statistics.median(first):.2f} s, "
                    f"p95 {percentile(first, 0.95):.2f} s ({len(first)} answers)")  # fmt: skip
    if server_seconds:
        first = [
            answer.first_token for answer, _ in results if answer.message_id in server_seconds and answer.first_token
        ]
        app, server = statistics.median(first), statistics.median(server_seconds.values())
        log(f"  first token where the model was asked, both halves: p50 {app:.2f} s; the model server alone on the "
            f"same prompts (max_tokens=1): p50 {server:.2f} s, p95 {percentile(list(server_seconds.values()), 0.95):.2f} s "
            f"(the app x{app / server:.2f}, {len(first)} answers)")  # fmt: skip


def dump(results: list[tuple[Answer, bool]], path: Path) -> None:
    """Each answer as `bench.answers.recheck` reads it, with its question's id (in process only)."""
    records = []
    for answer, _ in results:
        stored = stored_answer(answer.message_id)
        if stored is not None:
            records.append({**stored, "id": answer.question.id})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=1))


def regrade(path: Path, *, ablate: bool = False, log: Any = print) -> None:
    """Stored answers judged again with today's checks (and, with `ablate`, with each check left out)."""
    from bench.common import setup_django

    setup_django()
    asked = {question.id: question for question in questions()}
    titles = {note.file: note.title for note in notes()}
    records = json.loads(path.read_text())
    runs = ablations() if ablate else ablations()[:1]
    log(f"{path.name}: {len(records)} answers, pass rate tune / confirm")
    for label, options in runs:
        rates = {}
        for half in ("tune", "confirm"):
            mine = [record for record in records if asked[record["id"]].half == half]
            passed = 0
            for record in mine:
                verdict = recheck(record, **options)
                cited = [passage["source_title"] for passage in verdict.cited]
                answer = Answer(asked[record["id"]], text=verdict.text, abstained=verdict.abstained, cited=cited)
                passed += passes(answer, answer.question.rule, titles)
            rates[half] = f"{passed}/{len(mine)} ({passed / max(1, len(mine)):.1%})"
        log(f"  {label:<22} {rates['tune']} / {rates['confirm']}")


def replay(path: Path, *, log: Any = print) -> None:
    """The stored questions and passages asked again in today's prompt (`bench.answers.replayed`); the new
    answers judged like a run's."""
    from bench.common import setup_django

    setup_django()
    from django.conf import settings

    asked = {question.id: question for question in questions()}
    titles = {note.file: note.title for note in notes()}
    records = json.loads(path.read_text())
    results: list[tuple[Answer, bool]] = []
    again = replayed(records, log=log)
    for before_record, record in zip(records, again, strict=True):
        question = asked[record["id"]]
        before = recheck(before_record)
        was = passes(Answer(question, text=before.text, abstained=before.abstained,
                            cited=[p["source_title"] for p in before.cited]), question.rule, titles)  # fmt: skip
        first_token = record.get("first_token")
        verdict = recheck(record)
        answer = Answer(question, text=verdict.text, abstained=verdict.abstained,
                        cited=[p["source_title"] for p in verdict.cited], first_token=first_token,
                        route="question" if first_token is not None else "")  # fmt: skip
        ok = passes(answer, question.rule, titles)
        results.append((answer, ok))
        if (ok != was or not ok) and question.half == "tune":
            mark = "now passes" if ok else "now FAILS " if was else "FAIL      "
            log(f"  {mark} {question.id} {question.type:<13} {question.text!r} "
                f"→ {record['model_answer'][:160]!r} ({verdict.by or 'answered'})")  # fmt: skip
    report(results, log=log)
    stored = path.with_name(f"{path.stem}-replayed-{settings.CHAT_MODEL}.json")
    stored.write_text(json.dumps(again, indent=1))
    log(f"  replayed answers: {stored} (--regrade it)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench firstweek", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running app's base URL; default: in process")
    parser.add_argument("--regrade", type=Path, help="judge a run's stored answers again with today's checks")
    parser.add_argument("--ablate", action="store_true", help="with --regrade: each answer check left out in turn")
    parser.add_argument(
        "--replay", type=Path, help="ask the model again with a run's stored questions and passages, in today's prompt"
    )
    parser.add_argument("--types", help="only the conversations holding questions of these types: when,fact,…")
    args = parser.parse_args(argv or [])
    types = set(args.types.split(",")) if args.types else None
    if args.regrade:
        regrade(args.regrade, ablate=args.ablate)
        return
    if args.replay:
        replay(args.replay)
        return
    if args.url:
        report(run(args.url, types=types))
        return
    with in_process() as url:
        results = run(url, types=types)
        from django.conf import settings

        stored = Path(settings.BASE_DIR) / "var" / "bench" / f"firstweek-{settings.CHAT_MODEL}.json"
        dump(results, stored)
        server_seconds = server_prompt_seconds([answer.message_id for answer, _ in results if answer.message_id])
    report(results, server_seconds)
    print(f"  answers and passages: {stored} (python -m bench firstweek --regrade {stored} --ablate)")


if __name__ == "__main__":
    main()
