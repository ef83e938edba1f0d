"""SQuAD 2.0 prose (issue 19): is the gold answer, in its own words, among the first 300 words found?

The eight Wikipedia articles of `tests/data/squad2` become one user's notes (`POST /api/notes`), each
article a note with its paragraphs separated by blank lines. Every answerable question goes to
`GET /api/search`; it counts as found when the 8 words of the article ending at a gold answer, or
the 8 starting with it, stand in the passages read in rank order up to 300 words (the last one cut at
the budget). The first four articles are the tuning half, the last four the confirming half: a change
is kept only when the confirming half holds. BM25, dense and RRF references over the app's own
passages of the same notes are computed in the same run.

    python -m bench squad                          # in process: a bench database and a worker thread
    python -m bench squad --url http://127.0.0.1:8000
    python -m bench squad --answers --per-article 10   # answers through POST /api/ask (issue 20)
    python -m bench squad --regrade var/bench/squad-<model>.json --ablate
    python -m bench squad --replay var/bench/squad-<model>.json   # the stored prompts asked again, today's wording

`--answers` asks, of each article, its first N answerable and first N unanswerable questions
(`is_impossible`) through `POST /api/ask` and reports per half: the share of unanswerable questions
that abstain, of answerable ones answered, of answerable ones whose answer contains a gold answer
(SQuAD normalisation, under 60 words), and of answered ones where a cited passage holds a gold
answer; with first-token times. An in-process run stores each answer with the model's own words and
its passages; `--regrade` judges them again with today's answer checks (`--ablate`: each left out).

SQuAD 2.0 (Rajpurkar, Jia and Liang, ACL 2018) is CC BY-SA 4.0 (tests/data/squad2/LICENSE.md).
"""

import argparse
import json
import secrets
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.locomo import (
    PASSWORD,
    Api,
    HttpApi,
    _ok,
    app_search,
    open_api,
    rankers_over,
    read_within,
    wait_for_jobs,
)

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "squad2" / "squad2_dev.json"
BUDGET_WORDS = 300
WINDOW_WORDS = 8
TUNE_ARTICLES = 4  # the first four articles; the other four confirm


@dataclass(frozen=True)
class Question:
    text: str
    windows: tuple[str, ...]  # each gold answer's 8 words ending at it and 8 starting with it


@dataclass(frozen=True)
class Article:
    title: str
    text: str
    questions: tuple[Question, ...]


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def answer_windows(context: str, start: int, answer: str) -> tuple[str, str]:
    """The 8 words of `context` ending with the answer's last word, and the 8 starting with its first."""
    first = len(context[:start].split())
    if context[:start] and not context[:start][-1].isspace():
        first -= 1  # the answer starts inside a word ("$5 million" in "US$5 million"): that word counts
    last = len(context[: start + len(answer)].split()) - 1
    words = context.split()
    return " ".join(words[max(0, last - WINDOW_WORDS + 1) : last + 1]), " ".join(words[first : first + WINDOW_WORDS])


def articles(path: Path = DATA) -> list[Article]:
    result = []
    for article in json.loads(path.read_text())["data"]:
        questions = []
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                if qa.get("is_impossible") or not qa["answers"]:
                    continue
                spans = {(gold["answer_start"], gold["text"]) for gold in qa["answers"]}
                windows = {
                    _normal(w) for start, text in spans for w in answer_windows(paragraph["context"], start, text)
                }
                questions.append(Question(qa["question"], tuple(sorted(windows))))
        text = "\n\n".join(paragraph["context"].strip() for paragraph in article["paragraphs"])
        result.append(Article(article["title"].replace("_", " "), text, tuple(questions)))
    return result


def found(passages: Iterable[str], question: Question, budget: int = BUDGET_WORDS) -> bool:
    """Whether one of the question's windows stands in `passages` read in order until `budget` words."""
    taken = [passage.lower() for passage in read_within(passages, budget)]
    return any(window in passage for window in question.windows for passage in taken)


def ingest(api: Api, data: list[Article]) -> str:
    """A new user with each article as a note, its jobs done: that user's token."""
    username = f"squad-{secrets.token_hex(3)}"
    registered = api.request("POST", "/api/auth/register", body={"username": username, "password": PASSWORD})
    token: str = _ok(registered, 201)["token"]
    jobs = [
        _ok(api.request("POST", "/api/notes", token=token, body={"title": a.title, "text": a.text}), 202)["job_id"]
        for a in data
    ]
    wait_for_jobs(api, token, jobs, username)
    return token


def evaluate(
    api: Api, data: list[Article], *, with_references: bool = True, log: Callable[[str], None] = print
) -> None:
    started = time.perf_counter()
    token = ingest(api, data)
    log(f"{len(data)} articles ingested in {time.perf_counter() - started:.1f} s")
    rankers = rankers_over([(a.title, a.text) for a in data]) if with_references else {}
    halves = {"tune": data[:TUNE_ARTICLES], "confirm": data[TUNE_ARTICLES:]}
    log(f"SQuAD 2.0, gold answer in its own words within {BUDGET_WORDS} words (answerable questions):")
    latencies: list[float] = []
    for half, chosen in halves.items():
        scores: dict[str, list[bool]] = {"Second Brain": [], **{name: [] for name in rankers}}
        for article in chosen:
            for question in article.questions:
                asked = time.perf_counter()
                scores["Second Brain"].append(found(app_search(api, token, question.text), question))
                latencies.append(time.perf_counter() - asked)
                for name, ranker in rankers.items():
                    scores[name].append(found(ranker(question.text), question))
        titles = ", ".join(article.title for article in chosen)
        log(f"  {half} half ({titles}):")
        for name, hits in scores.items():
            log(f"    {name:<22} {sum(hits) / len(hits):.3f} ({sum(hits)} of {len(hits)})")
    ordered = sorted(latencies)
    log(
        f"  search p50 {ordered[len(ordered) // 2] * 1000:.0f} ms, p95 {ordered[int(0.95 * (len(ordered) - 1))] * 1000:.0f} ms"
    )


# --- Answers (issue 20) ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Asked:
    article: str
    text: str
    golds: tuple[str, ...]  # empty: unanswerable


def asked_of(data: list[Article], per_article: int, path: Path = DATA) -> dict[str, list[Asked]]:
    """Per half, each article's first `per_article` answerable and first `per_article` unanswerable questions."""
    chosen: dict[str, list[Asked]] = {"tune": [], "confirm": []}
    titles = [article.title for article in data]
    for index, article in enumerate(json.loads(path.read_text())["data"]):
        title = article["title"].replace("_", " ")
        if title not in titles:
            continue
        answerable: list[Asked] = []
        impossible: list[Asked] = []
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                golds = tuple(dict.fromkeys(gold["text"] for gold in qa["answers"]))
                (impossible if qa.get("is_impossible") or not golds else answerable).append(
                    Asked(title, qa["question"], () if qa.get("is_impossible") else golds)
                )
        half = "tune" if index < TUNE_ARTICLES else "confirm"
        chosen[half] += answerable[:per_article] + impossible[:per_article]
    return chosen


def holds_gold(text: str, golds: Iterable[str]) -> bool:
    from bench.answers import squad_normal

    normal = squad_normal(text)
    return any(squad_normal(gold) and squad_normal(gold) in normal for gold in golds)


def contains_gold(answer: str, golds: Iterable[str]) -> bool:
    from bench.answers import FACT_MAX_WORDS

    return len(answer.split()) <= FACT_MAX_WORDS and holds_gold(answer, golds)


@dataclass
class Answered:
    asked: Asked
    text: str
    abstained: bool
    cited: list[str]  # the cited passages' text
    first_token: float | None = None
    message_id: int | None = None


def figures(rows: list[Answered]) -> str:
    impossible = [row for row in rows if not row.asked.golds]
    answerable = [row for row in rows if row.asked.golds]
    answered = [row for row in answerable if not row.abstained]
    abstained = sum(row.abstained for row in impossible)
    gold = sum(contains_gold(row.text, row.asked.golds) for row in answered)
    cited = sum(any(holds_gold(text, row.asked.golds) for text in row.cited) for row in answered)
    # One figure for trade-offs: the share handled right (an abstention where nothing answers, the gold answer
    # where something does).
    right = (abstained + gold) / max(1, len(rows))
    return (
        f"right {right:.0%} | "
        f"unanswerable abstained {abstained}/{len(impossible)} ({abstained / max(1, len(impossible)):.0%}), "
        f"answerable answered {len(answered)}/{len(answerable)} ({len(answered) / max(1, len(answerable)):.0%}), "
        f"contains gold {gold / max(1, len(answerable)):.2f}, "
        f"a cited passage holds it {cited}/{len(answered)} ({cited / max(1, len(answered)):.0%})"
    )


def answer_run(base_url: str, per_article: int, *, log: Callable[[str], None] = print) -> dict[str, list[Answered]]:
    from bench.answers import ask_streamed

    data = articles()
    token = ingest(HttpApi(base_url), data)
    results: dict[str, list[Answered]] = {}
    for half, chosen in asked_of(data, per_article).items():
        rows = results.setdefault(half, [])
        for number, asked in enumerate(chosen, start=1):
            streamed = ask_streamed(base_url, token, {"question": asked.text})
            done = streamed.done
            row = Answered(
                asked,
                done.get("answer", ""),
                done.get("abstained", False),
                [citation["excerpt"] for citation in done.get("citations", [])],
                streamed.first_token,
                done.get("message_id"),
            )
            rows.append(row)
            kind = "answerable" if asked.golds else "unanswerable"
            log(f"[{half} {number}/{len(chosen)}] {kind:<12} {'abstained' if row.abstained else 'answered '} "
                f"{streamed.seconds:4.1f} s | {asked.text} → {row.text[:90]!r} (gold {asked.golds[:1]})")  # fmt: skip
    return results


def answer_report(results: dict[str, list[Answered]], log: Callable[[str], None] = print) -> None:
    log("SQuAD 2.0 answers through POST /api/ask, tuning / confirming half:")
    for half, rows in results.items():
        log(f"  {half}: {figures(rows)}")
        firsts = [row.first_token for row in rows if row.first_token is not None and not row.abstained]
        if firsts:
            log(f"    first token p50 {statistics.median(firsts):.2f} s ({len(firsts)} answers)")


def answer_dump(results: dict[str, list[Answered]], path: Path) -> None:
    from bench.answers import stored_answer

    records = []
    for half, rows in results.items():
        for row in rows:
            stored = stored_answer(row.message_id)
            if stored is not None:
                records.append({**stored, "half": half, "golds": list(row.asked.golds), "article": row.asked.article})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=1))


def regrade(path: Path, *, ablate: bool = False, log: Callable[[str], None] = print) -> None:
    """Stored answers judged again with today's answer checks (with `ablate`, each check left out in turn)."""
    from bench.answers import ablations, recheck
    from bench.common import setup_django

    setup_django()
    records: list[dict[str, Any]] = json.loads(path.read_text())
    log(f"{path.name}: {len(records)} answers")
    for label, options in ablations() if ablate else ablations()[:1]:
        for half in ("tune", "confirm"):
            rows = []
            for record in (record for record in records if record["half"] == half):
                verdict = recheck(record, **options)
                cited = [passage["text"] for passage in verdict.cited]
                rows.append(Answered(Asked(record["article"], record["question"], tuple(record["golds"])),
                                     verdict.text, verdict.abstained, cited))  # fmt: skip
            log(f"  {label:<22} {half:<8} | {figures(rows)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench squad", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running app's base URL; default: in process")
    parser.add_argument("--no-references", action="store_true")
    parser.add_argument("--answers", action="store_true", help="answers through POST /api/ask instead of search")
    parser.add_argument(
        "--per-article", type=int, default=10, help="with --answers: questions of each kind per article"
    )
    parser.add_argument("--regrade", type=Path, help="judge a run's stored answers again with today's checks")
    parser.add_argument("--ablate", action="store_true", help="with --regrade: each answer check left out in turn")
    parser.add_argument(
        "--replay", type=Path, help="ask the model again with a run's stored prompts in today's wording; then regrade"
    )
    args = parser.parse_args(argv or [])
    if args.replay:
        from bench.answers import replay_file

        regrade(replay_file(args.replay), ablate=args.ablate)
        return
    if args.regrade:
        regrade(args.regrade, ablate=args.ablate)
        return
    if args.answers:
        if args.url:
            answer_report(answer_run(args.url, args.per_article))
            return
        from bench.connections import in_process

        with in_process() as url:
            results = answer_run(url, args.per_article)
            from django.conf import settings

            stored = Path(settings.BASE_DIR) / "var" / "bench" / f"squad-{settings.CHAT_MODEL}.json"
            answer_dump(results, stored)
        answer_report(results)
        print(f"  answers and passages: {stored} (python -m bench squad --regrade {stored} --ablate)")
        return
    with open_api(args.url, with_references=not args.no_references) as api:
        evaluate(api, articles(), with_references=not args.no_references)


if __name__ == "__main__":
    main()
