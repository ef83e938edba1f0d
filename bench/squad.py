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

SQuAD 2.0 (Rajpurkar, Jia and Liang, ACL 2018) is CC BY-SA 4.0 (tests/data/squad2/LICENSE.md).
"""

import argparse
import json
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from bench.locomo import PASSWORD, Api, _ok, app_search, open_api, rankers_over, read_within, wait_for_jobs

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


def evaluate(
    api: Api, data: list[Article], *, with_references: bool = True, log: Callable[[str], None] = print
) -> None:
    started = time.perf_counter()
    username = f"squad-{secrets.token_hex(3)}"
    registered = api.request("POST", "/api/auth/register", body={"username": username, "password": PASSWORD})
    token: str = _ok(registered, 201)["token"]
    jobs = [
        _ok(api.request("POST", "/api/notes", token=token, body={"title": a.title, "text": a.text}), 202)["job_id"]
        for a in data
    ]
    wait_for_jobs(api, token, jobs, username)
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench squad", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running app's base URL; default: in process")
    parser.add_argument("--no-references", action="store_true")
    args = parser.parse_args(argv or [])
    with open_api(args.url, with_references=not args.no_references) as api:
        evaluate(api, articles(), with_references=not args.no_references)


if __name__ == "__main__":
    main()
