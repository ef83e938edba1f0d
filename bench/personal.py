"""Personal notes (issue 19): does a person's search find the words that answer their question?

`tests/data/personal` is material of the kinds people keep, written for this project: notes typed line
by line, Markdown plans, transcripts with and without speakers, two PDFs with running heads and page
footers. One user saves the notes (`POST /api/notes`, with their titles and dates) and uploads the PDFs
(`POST /api/uploads`); each question goes to `GET /api/search` and counts as answered when its
answer, a verbatim span of its file, stands in the passages read in rank order up to 300 words. The
split is by file: questions marked `tune` may guide a change, those marked `confirm` decide whether
it is kept. BM25, dense and RRF references over the app's own passages are computed in the same run.

    python -m bench personal
    python -m bench personal --url http://127.0.0.1:8000
"""

import argparse
import functools
import json
import secrets
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bench.locomo import PASSWORD, Api, _ok, app_search, open_api, rankers_over_passages, read_within, wait_for_jobs

if TYPE_CHECKING:
    from ingestion.pipeline import Passage

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "personal"
BUDGET_WORDS = 300


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    answer: str
    file: str
    split: str
    kind: str


@dataclass(frozen=True)
class Document:
    file: str
    title: str
    occurred_at: str

    @property
    def path(self) -> Path:
        return DATA / self.file


def documents() -> list[Document]:
    return [
        Document(item["file"], item["title"], item["occurred_at"])
        for item in json.loads((DATA / "meta.json").read_text())
    ]


def questions() -> list[Question]:
    return [
        Question(q["id"], q["question"], q["answer"], q["file"], q["split"], q["kind"])
        for q in json.loads((DATA / "questions.json").read_text())
    ]


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def answered(passages: Iterable[str], answer: str, budget: int = BUDGET_WORDS) -> bool:
    """Whether `answer` stands in `passages` read in rank order until `budget` words are spent."""
    return any(_normal(answer) in passage.lower() for passage in read_within(passages, budget))


def app_passages(document: Document) -> "list[Passage]":
    """The passages the app makes of the document, computed here for the references."""
    from ingestion.extract import pdf
    from ingestion.models import Source
    from ingestion.pipeline import _file_passages, _note_passages

    if document.path.suffix == ".pdf":
        source = Source(kind=Source.Kind.PDF, title=document.title)
        return list(_file_passages(source, pdf.extract(document.path, lambda done: None)))
    return list(_note_passages(document.title, document.path.read_text()))


def ingest(api: Api, docs: list[Document]) -> str:
    username = f"personal-{secrets.token_hex(3)}"
    token: str = _ok(api.request("POST", "/api/auth/register", body={"username": username, "password": PASSWORD}), 201)[
        "token"
    ]
    jobs = []
    for doc in docs:
        if doc.path.suffix == ".pdf":
            result = api.upload(doc.path, {"title": doc.title, "occurred_at": doc.occurred_at}, token=token)
        else:
            body = {"title": doc.title, "text": doc.path.read_text(), "occurred_at": doc.occurred_at}
            result = api.request("POST", "/api/notes", token=token, body=body)
        jobs.append(_ok(result, 202)["job_id"])
    wait_for_jobs(api, token, jobs, username)
    return token


def evaluate(api: Api, *, with_references: bool = True, log: Callable[[str], None] = print) -> None:
    docs, asked = documents(), questions()
    started = time.perf_counter()
    token = ingest(api, docs)
    log(f"{len(docs)} notes and PDFs ingested in {time.perf_counter() - started:.1f} s; {len(asked)} questions")
    rankers = rankers_over_passages([p for doc in docs for p in app_passages(doc)]) if with_references else {}
    hits: dict[tuple[str, str], list[bool]] = defaultdict(list)  # (split, ranker) → answered or not
    by_kind: dict[tuple[str, str], list[bool]] = defaultdict(list)  # (split, kind of file) → the app's
    missed: list[str] = []
    for question in asked:
        found = answered(app_search(api, token, question.text), question.answer)
        hits[question.split, "Second Brain"].append(found)
        by_kind[question.split, _file_kind(question.file)].append(found)
        if not found and question.split == "tune":
            missed.append(f"    {question.id} {question.text!r} → {question.answer!r} ({question.file})")
        for name, ranker in rankers.items():
            hits[question.split, name].append(answered(ranker(question.text), question.answer))
    log(f"Personal notes, the answer within {BUDGET_WORDS} words:")
    for split in ("tune", "confirm"):
        log(f"  {split} half:")
        for name in ("Second Brain", *rankers):
            found_all = hits[split, name]
            log(f"    {name:<22} {sum(found_all) / len(found_all):.3f} ({sum(found_all)} of {len(found_all)})")
        kinds = sorted(kind for s, kind in by_kind if s == split)
        log(
            "    by kind of file: " + ", ".join(f"{k} {sum(by_kind[split, k])}/{len(by_kind[split, k])}" for k in kinds)
        )
    if missed:
        log("  missed in the tuning half:\n" + "\n".join(missed))


@functools.cache
def _file_kind(file: str) -> str:
    if file.endswith(".pdf"):
        return "pdf"
    if file.endswith(".md"):
        return "markdown"
    text = (DATA / file).read_text()
    return "typed" if "\n\n" not in text.strip() else "paragraphs"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench personal", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running app's base URL; default: in process")
    parser.add_argument("--no-references", action="store_true")
    args = parser.parse_args(argv or [])
    with open_api(args.url, with_references=not args.no_references) as api:
        evaluate(api, with_references=not args.no_references)


if __name__ == "__main__":
    main()
