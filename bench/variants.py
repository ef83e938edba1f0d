"""Ranking variants side by side on all three retrieval yardsticks (issue 19), one process, one database.

Every yardstick's users (SQuAD's eight articles, the personal notes, LoCoMo's five conversations in
both formats) are ingested once into a database that is kept (`bench_variants`), through the public
API with a worker thread; then each variant sets `chat.selectors.RANKING` and asks every question
through `GET /api/search`. The BM25, dense and RRF references are computed on the very passages the
app stored (their text and stored embedding), exactly, in this process. Per question results go to
`var/bench/variants-<variant>.jsonl` for diffs.

    python -m bench variants                        # today's RANKING
    python -m bench variants --set after=0 --set before=0 --label no-spread
    python -m bench variants --fresh                # drop the kept database and ingest again

All sets share one table, so the owner-filtered vector search walks the HNSW index where the
separate databases of `python -m bench squad` etc. are scanned exactly: compare rows of one harness.
"""

import argparse
import functools
import json
import pickle
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import locomo, personal, squad

BASE = Path(__file__).resolve().parent.parent
STATE = BASE / "var" / "bench" / "variants-state.json"
EMBED_CACHE = BASE / "var" / "bench" / "variants-embeddings.pkl"
DATABASE = "bench_variants"


def _database(fresh: bool) -> None:
    from django.db import connection

    connection.settings_dict["TEST"]["NAME"] = DATABASE
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=not fresh)


def _ingest_all(api: locomo.Api) -> dict[str, Any]:
    state: dict[str, Any] = {"locomo": {}}
    started = time.perf_counter()
    state["squad"] = squad.ingest(api, squad.articles())
    print(f"squad ingested ({time.perf_counter() - started:.0f} s)", flush=True)
    state["personal"] = personal.ingest(api, personal.documents())
    print(f"personal ingested ({time.perf_counter() - started:.0f} s)", flush=True)
    for note_format in locomo.FORMATS:
        for conversation in locomo.conversations(note_format=note_format):
            if any(conversation.sample_id in ids for ids in locomo.HALVES.values()):
                state["locomo"][f"{note_format}/{conversation.sample_id}"] = locomo.ingest(api, conversation)
                print(f"locomo {note_format} {conversation.sample_id} ingested ({time.perf_counter() - started:.0f} s)",
                      flush=True)  # fmt: skip
    return state


def _cached_embeddings() -> None:
    """Questions are embedded once across runs: the variants differ in ranking, not in the query's vector."""
    import numpy as np

    from chat import selectors

    cache: dict[str, Any] = pickle.loads(EMBED_CACHE.read_bytes()) if EMBED_CACHE.exists() else {}
    original = selectors.embed_texts

    def embed(texts: list[str]) -> Any:
        missing = [text for text in texts if text not in cache]
        if missing:
            for text, vector in zip(missing, original(missing), strict=True):
                cache[text] = np.asarray(vector)
        return np.stack([cache[text] for text in texts])

    selectors.embed_texts = embed
    import atexit

    atexit.register(lambda: EMBED_CACHE.write_bytes(pickle.dumps(cache)))


def _reference_rankers(token: str) -> dict[str, Callable[[str], list[str]]]:
    """BM25, dense and RRF over the passages the app stored for this token's user, in reading order."""
    import numpy as np

    from chat import selectors
    from ingestion.models import Chunk

    owner_id = _owner(token)
    rows = list(
        Chunk.objects.filter(owner_id=owner_id).order_by("source_id", "ordinal").values_list("text", "embedding")
    )
    texts = [text for text, _ in rows]
    vectors = np.stack([np.asarray(vector, dtype=np.float32) for _, vector in rows])
    bm25 = locomo.Bm25(texts)

    def dense(question: str) -> list[int]:
        query = np.asarray(selectors.embed_texts([question])[0], dtype=np.float32)
        return list(np.argsort(-(vectors @ query), kind="stable"))

    rankers: dict[str, Callable[[str], list[int]]] = {
        "BM25": bm25.rank,
        "dense": dense,
        "RRF": lambda question: locomo._rrf(bm25.rank(question), dense(question)),
    }

    def ranked(rank: Callable[[str], list[int]], question: str) -> list[str]:
        return [texts[i] for i in rank(question)]

    return {name: functools.partial(ranked, rank) for name, rank in rankers.items()}


def _owner(token: str) -> int:
    from accounts.services import token_user

    user = token_user(raw=token)
    assert user is not None
    return user.pk


Judge = Callable[[list[str]], float]


def _squad_judge(question: squad.Question) -> Judge:
    return lambda passages: float(squad.found(passages, question))


def _personal_judge(question: personal.Question) -> Judge:
    return lambda passages: float(personal.answered(passages, question.answer))


def _locomo_judge(question: locomo.Question) -> Judge:
    return lambda passages: locomo.evidence_recall(passages, question.evidence)


def run(api: locomo.Api, state: dict[str, Any], *, label: str, references: bool, only: set[str]) -> None:
    rows: list[dict[str, Any]] = []

    def ask(yardstick: str, half: str, token: str, text: str, judge: Judge,
            rankers: dict[str, Callable[[str], list[str]]], category: str = "") -> None:  # fmt: skip
        row: dict[str, Any] = {"set": yardstick, "half": half, "q": text, "category": category}
        row["app"] = judge(locomo.app_search(api, token, text))
        for name, ranker in rankers.items():
            row[name] = judge(ranker(text))
        rows.append(row)

    if "squad" in only:
        rankers = _reference_rankers(state["squad"]) if references else {}
        for index, article in enumerate(squad.articles()):
            half = "tune" if index < squad.TUNE_ARTICLES else "confirm"
            for asked in article.questions:
                ask("squad", half, state["squad"], asked.text, _squad_judge(asked), rankers)
    if "personal" in only:
        rankers = _reference_rankers(state["personal"]) if references else {}
        for note in personal.questions():
            ask("personal", note.split, state["personal"], note.text, _personal_judge(note), rankers,
                personal._file_kind(note.file))  # fmt: skip
    if "locomo" in only:
        for note_format in locomo.FORMATS:
            for conversation in locomo.conversations(note_format=note_format):
                halves = [h for h, ids in locomo.HALVES.items() if conversation.sample_id in ids]
                if not halves:
                    continue
                token = state["locomo"][f"{note_format}/{conversation.sample_id}"]
                rankers = _reference_rankers(token) if references else {}
                for turn in conversation.questions:
                    ask(f"locomo-{note_format}", halves[0], token, turn.text, _locomo_judge(turn), rankers,
                        locomo.CATEGORIES[turn.category])  # fmt: skip
    dump = BASE / "var" / "bench" / f"variants-{label}.jsonl"
    dump.write_text("".join(json.dumps(row) + "\n" for row in rows))
    table: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        for name in ("app", "BM25", "dense", "RRF"):
            if name in row:
                table[row["set"], row["half"]][name].append(row[name])
    print(f"variant {label}: tune / confirm", flush=True)
    for yardstick in ("squad", "personal", "locomo-typed", "locomo-blank"):
        if (yardstick, "tune") not in table:
            continue
        parts = []
        for name in ("app", "BM25", "dense", "RRF"):
            values = [table[yardstick, half].get(name) for half in ("tune", "confirm")]
            if all(values):
                parts.append(f"{name} " + " / ".join(f"{sum(v) / len(v):.3f}" for v in values if v))
        print(f"  {yardstick:<13} " + " · ".join(parts), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench variants", description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", default=[], help="a RANKING value, name=number")
    parser.add_argument("--label", default="today")
    parser.add_argument("--fresh", action="store_true", help="drop the kept database and ingest again")
    parser.add_argument("--no-references", action="store_true")
    parser.add_argument("--only", default="squad,personal,locomo")
    args = parser.parse_args(argv or [])
    from celery.contrib.testing.worker import start_worker

    from bench.common import setup_django

    setup_django()
    _database(args.fresh)
    _cached_embeddings()
    api = locomo.DjangoApi()
    if args.fresh or not STATE.exists():
        from secondbrain.celery import app

        with start_worker(app, pool="solo", perform_ping_check=False, queues=["ingest"], loglevel="WARNING"):
            state = _ingest_all(api)
        STATE.parent.mkdir(parents=True, exist_ok=True)
        STATE.write_text(json.dumps(state))
    state = json.loads(STATE.read_text())
    from chat import selectors

    for assignment in args.set:
        name, value = assignment.split("=")
        if name not in selectors.RANKING:
            raise SystemExit(f"no RANKING value {name!r}")
        selectors.RANKING[name] = float(value)
    run(api, state, label=args.label, references=not args.no_references, only=set(args.only.split(",")))


if __name__ == "__main__":
    main()
