"""LoCoMo evidence recall (issues 4 and 19), through the public HTTP API only.

Each conversation of `locomo_dev.json` becomes a user (registered with `POST /api/auth/register`),
each session a note (`POST /api/notes`) whose `occurred_at` is the session's date-time, in one of two
formats: `typed`, as a person types it (a line per turn, single newlines), or `blank` (a heading, then
turns separated by blank lines). Conversations 0–2 are the tuning half, 3–4 the confirming half: a
change is kept only when the confirming half holds, in both formats. Every question
of categories 1–4 goes to `GET /api/search`. A question scores the share of its evidence turns whose
text appears in the returned passages taken in rank order up to a budget of 1,500 words (the last
passage cut at the budget), so making passages huge does not help. Reported per category and overall,
with the search latency seen by the client.

Beside the app's figures it prints simple references on the same passages (the app's own chunker and
embedding model, computed in this process): BM25 alone, dense (MiniLM cosine) alone and their RRF.

    python -m bench locomo                      # in-process: a bench database and a Celery worker thread
    python -m bench locomo --url http://127.0.0.1:8000   # against a running app (sign-up must be open)
    python -m bench locomo --format typed --half confirm  # one format, one half

The data is CC BY-NC 4.0 (tests/data/locomo/LICENSE.txt): Maharana et al., "Evaluating Very
Long-Term Conversational Memory of LLM Agents", ACL 2024.
"""

import argparse
import functools
import json
import math
import re
import secrets
import statistics
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ingestion.pipeline import Passage

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "locomo" / "locomo_dev.json"
BUDGET_WORDS = 1500
SEARCH_K = 50
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
FORMATS = ("typed", "blank")
HALVES = {"tune": ("conv-26", "conv-30", "conv-41"), "confirm": ("conv-42", "conv-43")}
# Unlike every bench username ("locomo-conv-30-1a2b3c"), or Django's similarity check refuses it now and then.
PASSWORD = "Tr4velling-salesman-on-a-bicycle"


# --- The data ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    number: int
    occurred_at: datetime
    title: str
    text: str


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]  # the evidence turns' texts (ids that match no turn are left out)


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]


def session_time(text: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023" (UTC: the users' zone is UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turn_line(turn: dict[str, Any]) -> str:
    line = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        line += f" [shares a photo: {turn['blip_caption']}]"
    return line


def conversations(path: Path = DATA, *, note_format: str = "blank") -> list[Conversation]:
    """The conversations with their sessions written as notes in `note_format` (see FORMATS)."""
    if note_format not in FORMATS:
        raise ValueError(f"note_format must be one of {FORMATS}, not {note_format!r}")
    result = []
    for sample in json.loads(path.read_text()):
        talk = sample["conversation"]
        turns: dict[str, str] = {}
        sessions = []
        numbers = sorted(int(key.split("_")[1]) for key in talk if re.fullmatch(r"session_\d+", key))
        for number in numbers:
            lines = talk[f"session_{number}"]
            if not lines:
                continue  # some sessions have a date and no turns
            when = talk[f"session_{number}_date_time"]
            turns |= {turn["dia_id"]: turn["text"] for turn in lines}
            title = f"{talk['speaker_a']} and {talk['speaker_b']} — session {number}"
            if note_format == "typed":
                text = "\n".join(turn_line(turn) for turn in lines) + "\n"
            else:
                heading = f"# {talk['speaker_a']} and {talk['speaker_b']}, {when}"
                text = heading + "\n\n" + "\n\n".join(turn_line(turn) for turn in lines) + "\n"
            sessions.append(Session(number, session_time(when), title, text))
        questions = []
        for qa in sample["qa"]:
            evidence = tuple(turns[ref] for ref in qa.get("evidence", []) if ref in turns)
            if qa["category"] in CATEGORIES and evidence:
                questions.append(Question(qa["question"], qa["category"], evidence))
        result.append(Conversation(sample["sample_id"], tuple(sessions), tuple(questions)))
    return result


# --- The metric ----------------------------------------------------------------------------------


def _normal(text: str) -> str:
    return " ".join(text.split())


def read_within(passages: Iterable[str], budget: int) -> list[str]:
    """What a reader takes of `passages` read in rank order until `budget` words are spent (the last
    one cut there), whitespace normalised: every yardstick scores what stands in these, so that
    making passages huge does not help."""
    taken = []
    left = budget
    for passage in passages:
        words = passage.split()
        taken.append(" ".join(words[:left]))
        left -= min(left, len(words))
        if not left:
            break
    return taken


def evidence_recall(passages: Iterable[str], evidence: Iterable[str], budget: int = BUDGET_WORDS) -> float:
    """The share of evidence texts found in `passages` read in order until `budget` words are spent."""
    taken = read_within(passages, budget)
    wanted = [_normal(text) for text in evidence]
    return sum(any(text in passage for passage in taken) for text in wanted) / len(wanted)


@dataclass
class Scores:
    by_category: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    latencies: list[float] = field(default_factory=list)

    def add(self, category: int, score: float) -> None:
        self.by_category[category].append(score)

    def overall(self) -> float:
        values = [value for values in self.by_category.values() for value in values]
        return sum(values) / len(values)

    def category(self, category: int) -> float:
        values = self.by_category[category]
        return sum(values) / len(values)

    def line(self, name: str) -> str:
        parts = [f"{name:<22} overall {self.overall():.3f}"]
        parts += [f"{CATEGORIES[c]} {self.category(c):.3f}" for c in sorted(CATEGORIES) if self.by_category[c]]
        if self.latencies:
            ordered = sorted(self.latencies)
            p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
            parts.append(f"search p50 {statistics.median(ordered) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms")
        return " · ".join(parts)


# --- The API, over HTTP or in process --------------------------------------------------------------


class Api(Protocol):
    def request(self, method: str, path: str, *, token: str | None = None, body: Any = None) -> tuple[int, Any]: ...

    def upload(self, path: Path, fields: dict[str, str], *, token: str) -> tuple[int, Any]:
        """`POST /api/uploads` with the file and form fields, as multipart."""
        ...


class HttpApi:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    def request(self, method: str, path: str, *, token: str | None = None, body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def upload(self, path: Path, fields: dict[str, str], *, token: str) -> tuple[int, Any]:
        boundary = secrets.token_hex(16)
        parts = [
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            for name, value in fields.items()
        ]
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n".encode()
            + path.read_bytes()
            + b"\r\n"
        )
        data = b"".join(parts) + f"--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Authorization": f"Bearer {token}"}
        request = urllib.request.Request(self.base_url + "/api/uploads", data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")


class DjangoApi:
    """Django's test client: the same URLs, views and JSON, without a socket."""

    def __init__(self) -> None:
        from django.test import Client

        self.client = Client()

    def request(self, method: str, path: str, *, token: str | None = None, body: Any = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        data = json.dumps(body) if body is not None else None
        response = self.client.generic(method, path, data or "", content_type="application/json", headers=headers)
        return response.status_code, response.json() if response.content else None

    def upload(self, path: Path, fields: dict[str, str], *, token: str) -> tuple[int, Any]:
        from django.core.files.uploadedfile import SimpleUploadedFile

        data = {"file": SimpleUploadedFile(path.name, path.read_bytes()), **fields}
        response = self.client.post("/api/uploads", data, headers={"Authorization": f"Bearer {token}"})
        return response.status_code, response.json() if response.content else None


def _ok(result: tuple[int, Any], *expected: int) -> Any:
    status, body = result
    if status not in expected:
        raise RuntimeError(f"unexpected HTTP {status}: {body}")
    return body


def ingest(api: Api, conversation: Conversation, *, timeout: float = 600.0) -> str:
    """Register the conversation's user, add its sessions as notes, wait for them; return its token."""
    username = f"locomo-{conversation.sample_id}-{secrets.token_hex(3)}"
    token = _ok(api.request("POST", "/api/auth/register", body={"username": username, "password": PASSWORD}), 201)[
        "token"
    ]
    jobs = [
        _ok(
            api.request(
                "POST",
                "/api/notes",
                token=token,
                body={"title": s.title, "text": s.text, "occurred_at": s.occurred_at.isoformat()},
            ),
            202,
        )["job_id"]
        for s in conversation.sessions
    ]
    wait_for_jobs(api, token, jobs, username, timeout=timeout)
    return token


def wait_for_jobs(api: Api, token: str, jobs: list[int], username: str, *, timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    for job_id in jobs:
        while (job := _ok(api.request("GET", f"/api/jobs/{job_id}", token=token), 200))["status"] != "done":
            if job["status"] in {"failed", "cancelled"} or time.monotonic() > deadline:
                raise RuntimeError(f"job {job_id} of {username}: {job}")
            time.sleep(0.2)


def app_search(api: Api, token: str, question: str) -> list[str]:
    query = urllib.parse.urlencode({"q": question, "k": SEARCH_K})
    body = _ok(api.request("GET", f"/api/search?{query}", token=token), 200)
    return [result["text"] for result in body["results"]]


# --- References: BM25, dense, and their RRF on the same passages -----------------------------------

_TOKEN = re.compile(r"\w+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class Bm25:
    """Okapi BM25 (k1 1.2, b 0.75) over a user's passages: the textbook reference, no stemming."""

    def __init__(self, passages: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = [Counter(_tokens(text)) for text in passages]
        self.lengths = [sum(doc.values()) for doc in self.docs]
        self.average = sum(self.lengths) / len(self.lengths)
        frequency = Counter(term for doc in self.docs for term in doc)
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in frequency.items()}
        self.k1, self.b = k1, b

    def rank(self, query: str) -> list[int]:
        terms = set(_tokens(query))
        scores = []
        for index, doc in enumerate(self.docs):
            norm = self.k1 * (1 - self.b + self.b * self.lengths[index] / self.average)
            score = sum(self.idf[t] * doc[t] * (self.k1 + 1) / (doc[t] + norm) for t in terms if t in doc)
            scores.append((score, index))
        return [index for score, index in sorted(scores, key=lambda pair: (-pair[0], pair[1])) if score > 0]


def _rrf(*rankings: list[int], k: int = 60) -> list[int]:
    fused: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, index in enumerate(ranking, start=1):
            fused[index] += 1 / (k + rank)
    return sorted(fused, key=lambda index: -fused[index])


def references(conversation: Conversation) -> dict[str, Callable[[str], list[str]]]:
    return rankers_over([(session.title, session.text) for session in conversation.sessions])


def rankers_over(notes: list[tuple[str, str]]) -> dict[str, Callable[[str], list[str]]]:
    """BM25, dense and RRF over the passages the app makes of these (title, text) notes (its chunker,
    its embedding model): the references every yardstick prints beside the app's figure."""
    from ingestion.pipeline import _note_passages

    return rankers_over_passages([p for title, text in notes for p in _note_passages(title, text)])


def rankers_over_passages(passages: "list[Passage]") -> dict[str, Callable[[str], list[str]]]:
    import numpy as np

    from ingestion.embeddings import embed_texts

    texts = [p.text for p in passages]
    bm25 = Bm25(texts)
    vectors = embed_texts([f"{p.context}\n{p.text}" for p in passages])

    def dense(question: str) -> list[int]:
        return list(np.argsort(-(vectors @ embed_texts([question])[0]), kind="stable"))

    rankers: dict[str, Callable[[str], list[int]]] = {
        "BM25": bm25.rank,
        "dense (MiniLM)": dense,
        "RRF(BM25, dense)": lambda question: _rrf(bm25.rank(question), dense(question)),
    }

    def ranked(rank: Callable[[str], list[int]], question: str) -> list[str]:
        return [texts[i] for i in rank(question)]

    return {name: functools.partial(ranked, rank) for name, rank in rankers.items()}


# --- The run -------------------------------------------------------------------------------------


def evaluate(
    api: Api, data: list[Conversation], *, with_references: bool = True, log: Callable[[str], None] = print
) -> dict[str, Scores]:
    results: dict[str, Scores] = defaultdict(Scores)
    for conversation in data:
        started = time.perf_counter()
        token = ingest(api, conversation)
        log(
            f"{conversation.sample_id}: {len(conversation.sessions)} sessions ingested in "
            f"{time.perf_counter() - started:.1f} s; {len(conversation.questions)} questions"
        )
        rankers = references(conversation) if with_references else {}
        for question in conversation.questions:
            asked = time.perf_counter()
            passages = app_search(api, token, question.text)
            results["Second Brain"].latencies.append(time.perf_counter() - asked)
            results["Second Brain"].add(question.category, evidence_recall(passages, question.evidence))
            for name, ranker in rankers.items():
                results[name].add(question.category, evidence_recall(ranker(question.text), question.evidence))
    return results


def report(results: dict[str, Scores], log: Callable[[str], None] = print, *, heading: str = "") -> None:
    log(f"LoCoMo dev{heading}, evidence recall within {BUDGET_WORDS} words:")
    for name, scores in results.items():
        log("  " + scores.line(name))


@contextmanager
def in_process() -> Iterator[Api]:
    """A bench database, a real Celery worker thread on the real broker, and Django's test client."""
    from celery.contrib.testing.worker import start_worker

    from bench.common import bench_database, setup_django

    setup_django()
    with bench_database():
        from secondbrain.celery import app

        with start_worker(app, pool="solo", perform_ping_check=False, queues=["ingest"], loglevel="WARNING"):
            yield DjangoApi()


@contextmanager
def open_api(url: str | None, *, with_references: bool) -> Iterator[Api]:
    """A running app at `url`, or one in this process (a bench database and a worker thread)."""
    if url is None:
        with in_process() as api:
            yield api
        return
    if with_references:
        from bench.common import setup_django

        setup_django()  # the references use the app's chunker, readers and embedding model
    yield HttpApi(url)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench locomo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running app's base URL; default: in process")
    parser.add_argument("--format", choices=[*FORMATS, "both"], default="both", help="how sessions are typed")
    parser.add_argument("--half", choices=[*HALVES, "both"], default="both", help="tuning or confirming half")
    parser.add_argument("--limit", type=int, help="only the first N conversations of each half")
    parser.add_argument("--no-references", action="store_true")
    args = parser.parse_args(argv or [])
    with open_api(args.url, with_references=not args.no_references) as api:
        for note_format in FORMATS if args.format == "both" else (args.format,):
            data = conversations(note_format=note_format)
            for half, ids in HALVES.items() if args.half == "both" else [(args.half, HALVES[args.half])]:
                chosen = [c for c in data if c.sample_id in ids][: args.limit]
                results = evaluate(api, chosen, with_references=not args.no_references)
                report(
                    results, heading=f", {half} half ({', '.join(c.sample_id for c in chosen)}), {note_format} notes"
                )


if __name__ == "__main__":
    main()
