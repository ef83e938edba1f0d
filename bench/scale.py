"""Scale benchmark (issue 4): the app's hybrid search over a synthetic corpus of many users.

    python -m bench scale --chunks 100000            the repeatable run (a few minutes)
    python -m bench scale --keep                     1,000,000 chunks of 100 users in bench_scale_1000000,
                                                     kept for the next run (which then only queries)
    python -m bench scale --chunks 100000 --builds 16:64,16:128,32:128    HNSW parameter sweep
    python -m bench scale --keep --storage-experiment    also time exact search with inline embeddings

The corpus lives in a database of its own, `bench_scale_<chunks>`, dropped afterwards unless `--keep`.
It is loaded with binary COPY into the app's migrated schema with every secondary index and constraint
dropped, which are then rebuilt and timed: btrees and constraints, GIN, HNSW.

Vectors are a Gaussian mixture, not uniform noise (which has no neighbourhoods to find): a chunk is a
shared topic + its owner's take on that topic + its source + noise whose variance decays like 1/i
over the 384 dimensions (effective dimension ≈ 26, like real sentence embeddings), normalised.
Different users share topics, so an owner's true neighbours sit among other users' chunks, which is
what makes the owner filter (1 % of rows) hard for HNSW. Text is drawn from the embedding model's
word list with Zipf frequencies plus topic words, so full-text search has realistic postings.
A query is a paraphrase of one of its owner's chunks (cosine ≈ 0.8 to it) and 2–4 of its words.

Each figure is printed beside a baseline from the same run: exact search for HNSW latency and recall.
"""

import argparse
import functools
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from bench.common import percentile, setup_django

DIMENSIONS = 384
GLOBAL_TOPICS = 200
TOPICS_PER_USER = 20
TOPIC_WORDS = 300
# Squared weights of a chunk vector's parts: shared topic, its owner's take on it, its source, noise.
WEIGHTS = np.sqrt([0.30, 0.10, 0.20, 0.40])
QUERY_NOISE = 0.75  # |noise| relative to the chunk: cosine(query, chunk) ≈ 1 / sqrt(1 + 0.75²) = 0.8
COMMON_WORDS = 100  # the Zipf head (the, and, was …) that a query does not pick
BATCH_SOURCES = 400
K = 10
HNSW_INDEX = "chunk_embedding_hnsw"
EF_SEARCH_SWEEP = [40, 100, 200, 400, 800]
STARTED = time.monotonic()


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S} +{time.monotonic() - STARTED:6.0f}s] {message}", flush=True)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench scale")
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--builds", help="m:ef_construction,… (default: the app's index)")
    parser.add_argument("--keep", action="store_true", help="keep (and reuse) bench_scale_<chunks>")
    parser.add_argument("--maintenance-work-mem", default="4GB")
    parser.add_argument("--storage-experiment", action="store_true", help="also time a copy with inline embeddings")
    parser.add_argument("--before", metavar="REV", help="also time the hybrid search of chat/selectors.py at REV")
    args = parser.parse_args(argv)
    setup_django()
    if args.builds:
        builds = [tuple(int(part) for part in build.split(":")) for build in args.builds.split(",")]
    else:
        builds = [app_hnsw()]
    with scale_database(f"bench_scale_{args.chunks}", keep=args.keep):
        corpus = Corpus(chunks=args.chunks, users=args.users, seed=args.seed)
        if not corpus_is_loaded(corpus):
            corpus_load(corpus, maintenance_work_mem=args.maintenance_work_mem)
        report_sizes()
        queries = queries_sample(corpus, args.queries)
        for m, ef_construction in builds:
            hnsw_build(m=m, ef_construction=ef_construction, maintenance_work_mem=args.maintenance_work_mem)
            log(f"== HNSW m={m} ef_construction={ef_construction}: {args.queries} queries, one owner each")
            with sampling() as memory:
                vector_search(queries)
                hybrid_search(queries, before=args.before)
                private_search(queries)
            log(f"postgres memory during the queries: {memory.describe()}")
        real_embedding_search(queries[:30])
        if args.storage_experiment:
            storage_experiment(queries)


# --- database ------------------------------------------------------------------------------------


@contextmanager
def scale_database(name: str, *, keep: bool) -> Iterator[None]:
    """Django on database `name`, created (or with `keep`, reused) and dropped afterwards unless `keep`."""
    from django.db import connection

    connection.settings_dict["TEST"]["NAME"] = name
    original = connection.settings_dict["NAME"]
    # serialize=False: Django would otherwise dump a kept million-row database into a string.
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False, keepdb=keep)
    log(f"database {name} ({'kept' if keep else 'dropped'} afterwards)")
    try:
        yield
    finally:
        connection.creation.destroy_test_db(original, verbosity=0, keepdb=keep)


def _exact_ids(sql: str, q: "Query") -> list[int]:
    return [row[0] for row in _execute(sql, [q.owner_id, _vector_literal(q.vector), 4 * K])]


def _text_ids(sql: str, q: "Query") -> list[int]:
    return [row[0] for row in _execute(sql, [" or ".join(q.words.split()), q.owner_id, 4 * K])]


def _execute_all(statements: list[str]) -> None:
    for sql in statements:
        _execute(sql)


def _execute(sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def _raw() -> Any:
    """The psycopg connection under Django's, for COPY."""
    from django.db import connection

    connection.ensure_connection()
    return connection.connection


# --- corpus --------------------------------------------------------------------------------------


@dataclass
class Corpus:
    chunks: int
    users: int
    seed: int
    vocabulary: np.ndarray = field(init=False)
    topics: np.ndarray = field(init=False)
    user_topics: np.ndarray = field(init=False)  # (users, TOPICS_PER_USER) → global topic
    user_topic_vectors: np.ndarray = field(init=False)
    topic_words: np.ndarray = field(init=False)
    noise_scale: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        rng = np.random.default_rng(self.seed)
        self.vocabulary = np.array(_words(), dtype=object)
        self.topics = _unit(rng.normal(size=(GLOBAL_TOPICS, DIMENSIONS)))
        self.user_topics = np.array(
            [rng.choice(GLOBAL_TOPICS, TOPICS_PER_USER, replace=False) for _ in range(self.users)]
        )
        self.user_topic_vectors = _unit(rng.normal(size=(self.users, TOPICS_PER_USER, DIMENSIONS)))
        self.topic_words = rng.integers(COMMON_WORDS, len(self.vocabulary), size=(GLOBAL_TOPICS, TOPIC_WORDS))
        variance = 1.0 / np.arange(1, DIMENSIONS + 1)
        self.noise_scale = np.sqrt(variance / variance.sum()).astype(np.float32)

    def noise(self, rng: np.random.Generator, rows: int) -> np.ndarray:
        """Noise with E|n|² = 1 whose variance decays like 1/i over the dimensions."""
        return rng.normal(size=(rows, DIMENSIONS)).astype(np.float32) * self.noise_scale


def _words() -> list[str]:
    """Lower-case whole words of the embedding model's vocabulary, roughly by frequency (BERT's order)."""
    from django.conf import settings

    path = Path(settings.EMBEDDING_MODEL) / "vocab.txt"
    if path.exists():
        words = [w for w in path.read_text().split("\n") if len(w) >= 3 and w.isascii() and w.isalpha() and w.islower()]
        if len(words) > 5000:
            return words
    rng = np.random.default_rng(0)  # pronounceable stand-ins when the model is elsewhere
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    return sorted({"".join(rng.choice(syllables, rng.integers(2, 4))) for _ in range(30000)})


def _unit(vectors: np.ndarray) -> np.ndarray:
    return (vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)).astype(np.float32)


@dataclass(frozen=True)
class Sources:
    """The corpus's sources in arrival order (users interleaved, as uploads arrive): row i has id i + 1."""

    owner: np.ndarray
    size: np.ndarray
    topic: np.ndarray  # index into the owner's topics
    occurred_at: list[datetime]


def sources_plan(corpus: Corpus) -> Sources:
    rng = np.random.default_rng(corpus.seed + 1)
    owners, sizes = [], []
    for user in range(corpus.users):
        remaining = corpus.chunks // corpus.users + (user < corpus.chunks % corpus.users)
        while remaining > 0:
            size = min(remaining, int(rng.integers(10, 91)))
            owners.append(user)
            sizes.append(size)
            remaining -= size
    order = rng.permutation(len(owners))
    start = datetime(2024, 1, 1, tzinfo=UTC)
    span = timedelta(days=730) / len(order)
    return Sources(
        owner=np.array(owners)[order],
        size=np.array(sizes)[order],
        topic=rng.integers(0, TOPICS_PER_USER, size=len(order)),
        occurred_at=[start + span * i for i in range(len(order))],
    )


def chunk_batches(corpus: Corpus, sources: Sources) -> Iterator[tuple[np.ndarray, list[str], np.ndarray, np.ndarray]]:
    """(vectors, texts, source index, ordinal) of each chunk of the next BATCH_SOURCES sources."""
    rng = np.random.default_rng(corpus.seed + 2)
    global_p = 1.0 / np.arange(1, len(corpus.vocabulary) + 1) ** 1.05
    global_p /= global_p.sum()
    local_p = 1.0 / np.arange(1, TOPIC_WORDS + 1)
    local_p /= local_p.sum()
    for first in range(0, len(sources.size), BATCH_SOURCES):
        sizes = sources.size[first : first + BATCH_SOURCES]
        of_chunk = np.repeat(np.arange(first, first + len(sizes)), sizes)
        owner, topic = sources.owner[of_chunk], sources.topic[of_chunk]
        global_topic = corpus.user_topics[owner, topic]
        source_vectors = _unit(rng.normal(size=(len(sizes), DIMENSIONS)))
        vectors = _unit(
            WEIGHTS[0] * corpus.topics[global_topic]
            + WEIGHTS[1] * corpus.user_topic_vectors[owner, topic]
            + WEIGHTS[2] * source_vectors[of_chunk - first]
            + WEIGHTS[3] * corpus.noise(rng, len(of_chunk))
        )
        lengths = rng.integers(60, 181, size=len(of_chunk))
        word_topic = np.repeat(global_topic, lengths)
        drawn = rng.choice(len(corpus.vocabulary), size=len(word_topic), p=global_p)
        local = corpus.topic_words[word_topic, rng.choice(TOPIC_WORDS, size=len(word_topic), p=local_p)]
        words = corpus.vocabulary[np.where(rng.random(len(word_topic)) < 0.25, local, drawn)]
        ends = np.cumsum(lengths)
        texts = [" ".join(words[end - n : end]) for n, end in zip(lengths.tolist(), ends.tolist(), strict=True)]
        ordinal = np.arange(len(of_chunk)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        yield vectors, texts, of_chunk, ordinal


def corpus_is_loaded(corpus: Corpus) -> bool:
    done = _execute("SELECT to_regclass('bench_scale_done') IS NOT NULL")[0][0]
    wanted = [(corpus.chunks, corpus.users, corpus.seed)]
    if done and _execute("SELECT chunks, users, seed FROM bench_scale_done") == wanted:
        log(f"reusing the loaded corpus of {corpus.chunks:,} chunks")
        return True
    if _execute("SELECT count(*) FROM ingestion_chunk")[0][0]:
        from django.db import connection

        log("a partial corpus is in the kept database: starting again")
        connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False, keepdb=False)
    return False


def corpus_load(corpus: Corpus, *, maintenance_work_mem: str) -> None:
    from accounts.models import User

    sources = sources_plan(corpus)
    users = User.objects.bulk_create(User(username=f"scale{i:03d}", password="!") for i in range(corpus.users))
    user_ids = np.array([user.pk for user in users])
    log(f"corpus: {corpus.chunks:,} chunks in {len(sources.size):,} sources of {corpus.users} users, "
        f"vocabulary {len(corpus.vocabulary):,} words")  # fmt: skip
    restore = _drop_secondary_indexes()
    started = time.perf_counter()
    _copy_sources(sources, user_ids)
    generation = _copy_chunks(corpus, sources, user_ids)
    load = time.perf_counter() - started
    log(f"load: {corpus.chunks:,} chunks COPYed in {load:.1f} s ({corpus.chunks / load:,.0f} chunks/s), "
        f"of which {generation:.1f} s generating vectors and text in numpy")  # fmt: skip
    _execute(f"SET maintenance_work_mem = '{maintenance_work_mem}'")
    with sampling() as memory:
        for label, statements in restore:
            seconds, _ = _timed(functools.partial(_execute_all, statements))
            log(f"index build: {label} in {seconds:.1f} s")
    log(f"  postgres memory during those builds: {memory.describe()}")
    seconds, _ = _timed(lambda: _execute("VACUUM (ANALYZE) ingestion_chunk"))
    log(f"VACUUM ANALYZE in {seconds:.1f} s")
    _execute("CREATE TABLE bench_scale_done (chunks integer, users integer, seed integer)")
    _execute("INSERT INTO bench_scale_done VALUES (%s, %s, %s)", [corpus.chunks, corpus.users, corpus.seed])


def _drop_secondary_indexes() -> list[tuple[str, list[str]]]:
    """Drop ingestion_chunk's constraints and indexes but its primary key; return what rebuilds them, in order."""
    constraints = _execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = 'ingestion_chunk'::regclass AND contype IN ('f', 'u')"
    )
    for name, _ in constraints:
        _execute(f"ALTER TABLE ingestion_chunk DROP CONSTRAINT {name}")
    indexes = _execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'ingestion_chunk' AND indexname NOT LIKE '%%pkey'"
    )
    for name, _ in indexes:
        _execute(f"DROP INDEX {name}")
    btrees = [f"ALTER TABLE ingestion_chunk ADD CONSTRAINT {name} {definition}" for name, definition in constraints]
    btrees += [definition for name, definition in indexes if "USING btree" in definition]
    gin = [definition for _, definition in indexes if "USING gin" in definition]
    others = [d for _, d in indexes if "USING btree" not in d and "USING gin" not in d and HNSW_INDEX not in d]
    groups = [("btrees and constraints", btrees), ("GIN on the tsvector", gin), ("others", others)]
    return [(label, statements) for label, statements in groups if statements]


def _copy_sources(sources: Sources, user_ids: np.ndarray) -> None:
    columns = (
        "id, owner_id, kind, title, text, file, mime_type, size, sha256, created_at, occurred_at, metadata, status"
    )
    with _raw().cursor() as cursor, cursor.copy(f"COPY ingestion_source ({columns}) FROM STDIN") as copy:
        for i, (owner, when) in enumerate(zip(sources.owner.tolist(), sources.occurred_at, strict=True)):
            sha = f"{i:064x}"
            copy.write_row((i + 1, int(user_ids[owner]), "note", f"Note {i + 1}", "", "", "text/markdown", 1000,
                            sha, when, when, "{}", "ready"))  # fmt: skip
    _execute("SELECT setval(pg_get_serial_sequence('ingestion_source', 'id'), %s)", [len(sources.size)])


def _copy_chunks(corpus: Corpus, sources: Sources, user_ids: np.ndarray) -> float:
    """COPY the chunks in binary; returns the seconds spent generating them."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    raw = _raw()
    vector_oid, halfvec_oid, halfvecs_oid = _execute(
        "SELECT 'vector'::regtype::oid, 'halfvec'::regtype::oid, 'halfvec[]'::regtype::oid"
    )[0]
    # The vectors arrive as ready-made binary values: a `vector` is uint16 dim, uint16 unused and
    # big-endian float4s; the sentences' `halfvec[]` an array header and each `halfvec` (float2s) in turn.
    dumpers = [
        type("Bytes", (Dumper,), {"format": Format.BINARY, "oid": oid, "dump": lambda self, obj: obj})
        for oid in (vector_oid, halfvecs_oid)
    ]
    header = np.frombuffer(np.array([DIMENSIONS, 0], dtype=">u2").tobytes(), dtype=np.uint8)
    generating, loaded, next_log = 0.0, 0, time.monotonic() + 30
    columns = "source_id, owner_id, ordinal, text, anchor, occurred_at, embedding, sentence_embeddings"
    with raw.cursor() as cursor:
        for dumper in dumpers:
            cursor.adapters.register_dumper(None, dumper)
        with cursor.copy(f"COPY ingestion_chunk ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["bigint", "bigint", "integer", "text", "jsonb", "timestamptz", vector_oid, halfvecs_oid])
            batches = chunk_batches(corpus, sources)
            rng = np.random.default_rng(corpus.seed + 3)
            while True:
                started = time.perf_counter()
                batch = next(batches, None)
                if batch is None:
                    break
                vectors, texts, of_chunk, ordinals = batch
                rows = np.hstack([np.broadcast_to(header, (len(vectors), 4)), vectors.astype(">f4").view(np.uint8)])
                sentences = _sentence_arrays(vectors, halfvec_oid, rng)
                owners = user_ids[sources.owner[of_chunk]].tolist()
                generating += time.perf_counter() - started
                for i, (source, ordinal) in enumerate(zip(of_chunk.tolist(), ordinals.tolist(), strict=True)):
                    when = sources.occurred_at[source] + timedelta(seconds=ordinal)
                    copy.write_row((source + 1, owners[i], ordinal, texts[i],
                                    {"heading": [f"Note {source + 1}"]}, when, rows[i].tobytes(), sentences[i]))  # fmt: skip
                loaded += len(texts)
                if time.monotonic() > next_log:
                    log(f"  loaded {loaded:,} chunks")
                    next_log = time.monotonic() + 30
    return generating


SENTENCES = (2, 6)  # a chunk's sentences, each its chunk's vector plus noise (cosine ≈ 0.8 to it)


def _sentence_arrays(vectors: np.ndarray, halfvec_oid: int, rng: np.random.Generator) -> list[bytes]:
    """Each chunk's `sentence_embeddings` as a binary `halfvec[]`, as the pipeline stores them."""
    element = np.array([DIMENSIONS, 0], dtype=">u2").tobytes()
    arrays = []
    for vector in vectors:
        count = int(rng.integers(SENTENCES[0], SENTENCES[1] + 1))
        parts = _unit(vector + QUERY_NOISE * _unit(rng.normal(size=(count, DIMENSIONS))))
        body = b"".join(
            np.array([4 + 2 * DIMENSIONS], dtype=">i4").tobytes() + element + part.astype(">f2").tobytes()
            for part in parts
        )
        arrays.append(np.array([1, 0, halfvec_oid, count, 1], dtype=">i4").tobytes() + body)
    return arrays


def app_hnsw() -> tuple[int, int]:
    """(m, ef_construction) of the app's HNSW index, as ingestion.models.Chunk declares it."""
    from ingestion.models import Chunk

    index = next(index for index in Chunk._meta.indexes if index.name == HNSW_INDEX)
    return index.m, index.ef_construction


def hnsw_build(*, m: int, ef_construction: int, maintenance_work_mem: str) -> None:
    options = _execute("SELECT reloptions FROM pg_class WHERE relname = %s", [HNSW_INDEX])
    if options and sorted(options[0][0] or []) == sorted([f"m={m}", f"ef_construction={ef_construction}"]):
        log(f"reusing HNSW m={m} ef_construction={ef_construction}")
        return
    _execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
    _execute(f"SET maintenance_work_mem = '{maintenance_work_mem}'")
    _execute("SET max_parallel_maintenance_workers = 2")
    log(f"HNSW build m={m} ef_construction={ef_construction} (maintenance_work_mem {maintenance_work_mem}, 2 workers)")
    with sampling(progress=True) as memory:
        seconds, _ = _timed(lambda: _execute(
            f"CREATE INDEX {HNSW_INDEX} ON ingestion_chunk USING hnsw (embedding vector_cosine_ops) "
            f"WITH (m = {m}, ef_construction = {ef_construction})"
        ))  # fmt: skip
    size = _execute("SELECT pg_relation_size(%s)", [HNSW_INDEX])[0][0]
    log(f"index build: HNSW m={m} ef_construction={ef_construction} in {seconds:.1f} s, {size / 2**20:,.0f} MiB; "
        f"postgres memory during the build: {memory.describe()}")  # fmt: skip
    _execute("ANALYZE ingestion_chunk")


def report_sizes() -> None:
    def mib(value: int) -> str:
        return f"{value / 2**20:,.0f} MiB"

    table, total, toast = _execute(
        "SELECT pg_relation_size(oid), pg_total_relation_size(oid), coalesce(pg_total_relation_size(reltoastrelid), 0) "
        "FROM pg_class WHERE relname = 'ingestion_chunk'"
    )[0]
    log(f"sizes: ingestion_chunk heap {mib(table)}, TOAST {mib(toast)}, total with indexes {mib(total)}")
    for name, size in _execute(
        "SELECT indexrelname, pg_relation_size(indexrelid) FROM pg_stat_user_indexes "
        "WHERE relname = 'ingestion_chunk' ORDER BY 2 DESC"
    ):
        log(f"  index {name}: {mib(size)}")
    embedding, search, text, length = _execute(
        "SELECT avg((pg_column_toast_chunk_id(embedding) IS NOT NULL)::int), "
        "avg((pg_column_toast_chunk_id(search) IS NOT NULL)::int), "
        "avg((pg_column_toast_chunk_id(text) IS NOT NULL)::int), "
        "avg(length(text)) FROM ingestion_chunk TABLESAMPLE SYSTEM (1) REPEATABLE (1)"
    )[0]
    log(f"  stored out of line in TOAST: embedding {float(embedding or 0):.0%}, tsvector {float(search or 0):.0%}, "
        f"text {float(text or 0):.0%} (mean text {float(length or 0):.0f} chars)")  # fmt: skip


# --- memory --------------------------------------------------------------------------------------


@dataclass
class Memory:
    """Peaks over the server's processes: private memory summed (RssAnon), shared memory touched (RssShmem)."""

    baseline_private: int = 0
    peak_private: int = 0
    peak_shared: int = 0
    peak_backend: int = 0

    def describe(self) -> str:
        private, idle = self.peak_private / 2**20, self.baseline_private / 2**20
        shared, process = self.peak_shared / 2**20, self.peak_backend / 2**20
        return (f"private {private:,.0f} MiB peak (idle before: {idle:,.0f} MiB), "
                f"shared touched {shared:,.0f} MiB, one process ≤ {process:,.0f} MiB RSS")  # fmt: skip


def _server_processes() -> list[int]:
    data_directory = _execute("SHOW data_directory")[0][0]
    postmaster = int((Path(data_directory) / "postmaster.pid").read_text().split("\n")[0])
    children = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                children.append(int(entry.name))
    return [postmaster, *children]


def _status_kib(pid: int) -> dict[str, int]:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().split("\n")
    except OSError:
        return {}
    return {line.split(":")[0]: int(line.split()[1]) * 1024 for line in lines if line.startswith(("Rss", "VmRSS"))}


@contextmanager
def sampling(*, progress: bool = False) -> Iterator[Memory]:
    """Sample the server's memory every 0.2 s (and with `progress`, log index-build progress every 60 s)."""
    import psycopg
    from django.db import connection

    memory, stop = Memory(), threading.Event()
    postmaster, *_ = _server_processes()
    memory.baseline_private = sum(_status_kib(pid).get("RssAnon", 0) for pid in _server_processes())
    settings = connection.settings_dict
    host, name = settings["HOST"], settings["NAME"]

    def sample() -> None:
        next_progress = time.monotonic() + 60
        with psycopg.connect(host=host, dbname=name, user=settings["USER"], autocommit=True) as watcher:
            while not stop.wait(0.2):
                pids = [postmaster] + [int(r[0]) for r in watcher.execute("SELECT pid FROM pg_stat_activity")]
                statuses = [_status_kib(pid) for pid in pids]
                memory.peak_private = max(memory.peak_private, sum(s.get("RssAnon", 0) for s in statuses))
                memory.peak_shared = max([memory.peak_shared, *(s.get("RssShmem", 0) for s in statuses)])
                memory.peak_backend = max([memory.peak_backend, *(s.get("VmRSS", 0) for s in statuses)])
                if progress and time.monotonic() > next_progress:
                    next_progress += 60
                    for phase, done, total in watcher.execute(
                        "SELECT phase, tuples_done, tuples_total FROM pg_stat_progress_create_index"
                    ):
                        log(f"  build progress: {phase}, tuples {done:,} of {total:,}")

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield memory
    finally:
        stop.set()
        thread.join()


# --- queries -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    owner_id: int
    words: str
    vector: list[float]
    question: str  # 6–8 words: the app ORs every word of a question, and questions are longer


def queries_sample(corpus: Corpus, count: int) -> list[Query]:
    """`count` queries (and 50 warm-up ones before them), each a paraphrase of a random chunk of its owner."""
    rng = np.random.default_rng(corpus.seed + 3)
    low, high = _execute("SELECT min(id), max(id) FROM ingestion_chunk")[0]
    ids = (rng.choice(high - low + 1, size=count + 50, replace=False) + low).tolist()
    rows = _execute("SELECT owner_id, text, embedding::text FROM ingestion_chunk WHERE id = ANY(%s) ORDER BY id", [ids])
    rank = {word: i for i, word in enumerate(corpus.vocabulary.tolist())}
    queries = []
    for owner_id, text, embedding in rows:
        vector = np.array(json.loads(embedding), dtype=np.float32)
        noise = corpus.noise(rng, 1)[0]
        vector = _unit(vector + QUERY_NOISE * noise / np.linalg.norm(noise))
        content = [word for word in text.split() if rank[word] >= COMMON_WORDS] or text.split()
        words = " ".join(rng.choice(content, size=int(rng.integers(2, 5))).tolist())
        question = " ".join(rng.choice(content, size=int(rng.integers(6, 9))).tolist())
        queries.append(Query(owner_id=owner_id, words=words, vector=vector.tolist(), question=question))
    order = rng.permutation(len(queries))
    return [queries[i] for i in order]


_VECTOR_SQL = "SELECT c.id FROM ingestion_chunk c WHERE c.owner_id = %s ORDER BY c.embedding <=> %s::vector LIMIT %s"
_FORCE_HNSW = {"enable_seqscan": "off", "enable_bitmapscan": "off", "enable_sort": "off"}


def _vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{value:.7g}" for value in vector) + "]"


@dataclass
class Run:
    seconds: list[float]
    ids: list[list[int]]

    def latency(self) -> str:
        return f"p50 {percentile(self.seconds, 0.5) * 1000:.1f} ms, p95 {percentile(self.seconds, 0.95) * 1000:.1f} ms"

    def p95(self) -> float:
        return percentile(self.seconds, 0.95)

    def recall(self, exact: "Run") -> float:
        pairs = zip(self.ids, exact.ids, strict=True)
        return float(np.mean([len(set(mine) & set(truth)) / max(len(truth), 1) for mine, truth in pairs]))

    def short(self) -> float:
        return float(np.mean([len(ids) < K for ids in self.ids]))


def _run(queries: list[Query], settings: dict[str, str], call: Callable[[Query], list[int]], warm: bool = False) -> Run:
    """Time `call` per query under `SET LOCAL settings`; the first 50 queries only warm the caches.

    `warm` runs each query once untimed first, so that its pages are in shared_buffers: an estimate of
    what a shared_buffers holding the working set would give.
    """
    from django.db import connection, transaction

    def once(query: Query) -> tuple[float, list[int]]:
        with transaction.atomic(), connection.cursor() as cursor:
            for name, value in settings.items():
                cursor.execute(f"SET LOCAL {name} = {value}")
            if warm:
                call(query)
            started = time.perf_counter()
            ids = call(query)
            return time.perf_counter() - started, ids

    for query in queries[:50]:
        once(query)
    results = [once(query) for query in queries[50:]]
    return Run(seconds=[seconds for seconds, _ in results], ids=[ids for _, ids in results])


def _run_paired(queries: list[Query], calls: dict[str, Callable[[Query], list[int]]]) -> dict[str, Run]:
    """`_run` for several searches at once, each query through all of them in turn, the order rotating:
    run one after the other, the second found the first one's pages in the cache (×1.5 at 1M chunks
    for the same SQL cost). Rotated, not reversed: of three searches, reversing never ran the middle
    one first, and at 1M chunks it came out ~20 % faster than the two others at p50 for the same
    execution time in EXPLAIN ANALYZE."""
    order = list(calls)
    results: dict[str, list[tuple[float, list[int]]]] = {name: [] for name in order}
    for index, query in enumerate(queries):
        turn = index % len(order)
        for name in order[turn:] + order[:turn]:
            started = time.perf_counter()
            ids = calls[name](query)
            if index >= 50:  # the first 50 queries only warm the caches
                results[name].append((time.perf_counter() - started, ids))
    return {
        name: Run(seconds=[seconds for seconds, _ in rows], ids=[ids for _, ids in rows])
        for name, rows in results.items()
    }


def _plan_of(sql: str, params: Any, settings: dict[str, str]) -> tuple[str, dict[str, float]]:
    """The scans in `sql`'s plan and, from EXPLAIN (ANALYZE, BUFFERS): ms per scan, pages read, planning, execution."""
    from django.db import connection, transaction

    from secondbrain import rls

    with transaction.atomic(), connection.cursor() as cursor:
        for name, value in settings.items():
            cursor.execute(f"SET LOCAL {name} = {value}")
        with rls.privileged():  # a superuser's setting; the plan itself is read in the caller's scope
            cursor.execute("SET LOCAL track_io_timing = on")
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    scans: dict[str, float] = {}

    def walk(node: dict[str, Any]) -> None:
        if "Scan" in node["Node Type"] and node["Node Type"] not in {"Subquery Scan", "CTE Scan", "Function Scan"}:
            label = f"{node['Node Type']} {node.get('Index Name') or node.get('Relation Name', '')}".strip()
            if node["Node Type"] == "Bitmap Heap Scan":  # name it by the index that feeds it
                label += " via " + "+".join(sorted(_index_names(node)))
            scans[label] = scans.get(label, 0.0) + node.get("Actual Total Time", 0.0) * node.get("Actual Loops", 1)
        for child in node.get("Plans", []):
            walk(child)

    walk(plan[0]["Plan"])
    top = plan[0]["Plan"]
    scans["pages read outside shared_buffers"] = top.get("Shared Read Blocks", 0)
    scans["reading them"] = top.get("Shared I/O Read Time", top.get("I/O Read Time", 0.0))
    scans["planning"] = plan[0].get("Planning Time", 0.0)
    scans["execution"] = plan[0].get("Execution Time", 0.0)
    jit = plan[0].get("JIT", {}).get("Timing", {}).get("Total", 0.0)
    if jit:
        scans["JIT compilation"] = jit
    return ", ".join(name for name in scans if "Scan" in name), scans


def _index_names(node: dict[str, Any]) -> set[str]:
    names = {node["Index Name"]} if "Index Name" in node else set()
    for child in node.get("Plans", []):
        names |= _index_names(child)
    return names


def vector_search(queries: list[Query]) -> dict[str, Run]:
    """Owner-filtered top-10 by cosine distance: exact vs the planner's choice vs HNSW forced at several ef_search."""

    def top(query: Query) -> list[int]:
        return [row[0] for row in _execute(_VECTOR_SQL, [query.owner_id, _vector_literal(query.vector), K])]

    modes: dict[str, dict[str, str]] = {
        "exact (owner btree → bitmap heap scan, sort)": {"enable_indexscan": "off"},
        "planner's choice, app settings (ef_search 100, relaxed_order)": {},
    }
    for ef in EF_SEARCH_SWEEP:
        modes[f"HNSW forced, ef_search {ef}, relaxed_order"] = _FORCE_HNSW | {"hnsw.ef_search": str(ef)}
    modes["HNSW forced, ef_search 100, strict_order"] = _FORCE_HNSW | {"hnsw.iterative_scan": "strict_order"}
    modes["HNSW forced, ef_search 100, iterative scan off"] = _FORCE_HNSW | {"hnsw.iterative_scan": "off"}
    modes["HNSW forced, ef_search 100, max_scan_tuples 100000"] = _FORCE_HNSW | {"hnsw.max_scan_tuples": "100000"}
    runs: dict[str, Run] = {}
    for label, settings in modes.items():
        runs[label] = run = _run(queries, settings, top)
        plan, _ = _plan_of(_VECTOR_SQL, [queries[50].owner_id, _vector_literal(queries[50].vector), K], settings)
        exact = runs[next(iter(runs))]
        log(f"vector top-{K}, {label}: {run.latency()}, recall@{K} {run.recall(exact):.3f} vs exact, "
            f"short results {run.short():.0%}; plan: {plan}")  # fmt: skip
    return runs


def selectors_at(revision: str) -> ModuleType:
    """`chat/selectors.py` as it was at `revision`, loaded beside today's (its imports are today's modules)."""
    source = subprocess.run(["git", "show", f"{revision}:chat/selectors.py"], cwd=Path(__file__).resolve().parent.parent,
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    module = ModuleType(f"selectors_at_{revision}")
    exec(compile(source, f"{revision}:chat/selectors.py", "exec"), module.__dict__)  # noqa: S102 — our own history
    return module


def hybrid_search(queries: list[Query], *, before: str | None = None) -> None:
    """`chat.selectors.search` with synthetic vectors: the app's settings vs exact vector search (baseline),
    and with `before` vs the search of that commit, in the same run."""
    from django.db import connection

    from chat.selectors import search
    from secondbrain import rls

    captured: list[tuple[str, Any]] = []

    def capture(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        captured[:] = [(sql, params)]
        # LIMIT 0 runs none of the CTEs: EXPLAIN ANALYZE below then meets the buffers as the timed run did.
        return execute(f"SELECT * FROM ({sql}) captured LIMIT 0", params, many, context)

    # As the app runs it: as its owner, under row-level security — except the baselines named so, and
    # the search of `before`, which ran without it.
    unscoped = {", without row-level security"} | ({f", the search of {before}"} if before else set())

    def call(query: Query, question: bool = False, search: Callable[..., Any] = search, name: str = "") -> list[int]:
        words = query.question if question else query.words
        with rls.privileged() if name in unscoped else rls.owner_scope(query.owner_id):
            return [hit.chunk_id for hit in search(owner_id=query.owner_id, query=words, k=K, vector=query.vector)]

    searches = {"": search, ", without row-level security": search}
    if before:
        searches[f", the search of {before}"] = selectors_at(before).search
    modes = {
        **{f"app settings{name}": ({}, False, function, name) for name, function in searches.items()},
        "app settings, jit off": ({"jit": "off"}, False, search, ""),
        "exact vector branch (enable_indexscan off)": ({"enable_indexscan": "off"}, False, search, ""),
        **{
            f"app settings, 6–8-word questions{name}": ({}, True, function, name) for name, function in searches.items()
        },
    }
    warm = _run(queries, {}, call, warm=True)
    log(f"hybrid search, app settings, each query repeated at once (its pages in shared_buffers): {warm.latency()}")
    runs: dict[str, Run] = {}
    for words, question in (("", False), (", 6–8-word questions", True)):  # today and `before`, query by query
        runs |= _run_paired(
            queries,
            {
                f"app settings{words}{name}": functools.partial(call, question=question, search=function, name=name)
                for name, function in searches.items()
            },
        )
    for label, (settings, question, function, name) in modes.items():
        if label not in runs:
            runs[label] = _run(queries, settings, functools.partial(call, question=question, search=function))
        run = runs[label]
        scans: dict[str, list[float]] = {}
        for query in queries[50:]:
            with connection.execute_wrapper(capture):
                call(query, question, function, name)
            with rls.privileged() if name in unscoped else rls.owner_scope(query.owner_id):
                plan = _plan_of(*captured[0], settings)[1]
            for scan, ms in plan.items():
                scans.setdefault(scan, []).append(ms)
        split = ", ".join(
            f"{name} p50 {np.median(ms):.1f} (p95 {percentile(ms, 0.95):.1f})" for name, ms in scans.items()
        )
        log(f"hybrid search (chat.selectors.search, k={K}), {label}: {run.latency()} (target p95 < 50 ms)")
        log(f"  EXPLAIN (ANALYZE, BUFFERS) of each query, ms unless pages: {split}")
    exact = runs["exact vector branch (enable_indexscan off)"]
    for name in list(searches)[1:]:  # today's against each baseline
        for words in ("", ", 6–8-word questions"):
            now, then = runs[f"app settings{words}"], runs[f"app settings{words}{name}"]
            log(f"hybrid, app settings{words}: p95 ×{now.p95() / then.p95():.2f} of{name.removeprefix(',')}")
    for label in [
        "app settings",
        "app settings, jit off",
    ]:  # the questions' words differ: no exact twin to compare with
        log(f"hybrid, {label}: top-{K} agreement with the exact-vector hybrid {runs[label].recall(exact):.3f}")


PRIVATE_EVERY = 20  # one source in this many is private in `private_search`


def private_search(queries: list[Query]) -> None:
    """The hybrid search with one source in PRIVATE_EVERY private, under row-level security as the app
    runs it: leaving them out (the default, `chat.selectors._visible`) against including them, paired;
    what leaving them out costs and whether the statement still reads the owner's indexes."""
    from django.db import connection

    from chat.selectors import search
    from secondbrain import rls

    _execute(f"UPDATE ingestion_source SET private = true WHERE id % {PRIVATE_EVERY} = 0")
    _execute("ANALYZE ingestion_source")
    hidden = {row[0] for row in _execute("SELECT c.id FROM ingestion_chunk c JOIN ingestion_source s "
                                         "ON s.id = c.source_id WHERE s.private")}  # fmt: skip
    statements: list[tuple[str, Any]] = []

    def call(query: Query, include_private: bool) -> list[int]:
        with rls.owner_scope(query.owner_id):
            hits = search(owner_id=query.owner_id, query=query.words, k=K, vector=query.vector,
                          include_private=include_private)  # fmt: skip
        return [hit.chunk_id for hit in hits]

    def keep(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        if "postings" in sql:
            statements.append((sql, params))
        return execute(sql, params, many, context)

    try:
        runs = _run_paired(
            queries,
            {
                "left out": functools.partial(call, include_private=False),
                "included": functools.partial(call, include_private=True),
            },
        )
        left_out, included = runs["left out"], runs["included"]
        leaked = sum(bool(hidden & set(ids)) for ids in left_out.ids)
        shown = sum(bool(hidden & set(ids)) for ids in included.ids)
        log(f"hybrid search, 1 source in {PRIVATE_EVERY} private ({len(hidden):,} passages), left out: "
            f"{left_out.latency()}; included: {included.latency()}; p95 ×{left_out.p95() / included.p95():.2f}; "
            f"results holding a private passage: {leaked} left out, {shown} included")  # fmt: skip
        scans: dict[str, list[float]] = {}
        for query in queries[50:]:
            statements.clear()
            with connection.execute_wrapper(keep):
                call(query, include_private=False)
            with rls.owner_scope(query.owner_id):
                for scan, ms in _plan_of(*statements[0], {})[1].items():
                    scans.setdefault(scan, []).append(ms)
        split = ", ".join(
            f"{name} p50 {np.median(ms):.1f} (p95 {percentile(ms, 0.95):.1f})" for name, ms in scans.items()
        )
        log(f"  EXPLAIN (ANALYZE, BUFFERS) of each query, private left out, ms unless pages: {split}")
    finally:
        _execute("UPDATE ingestion_source SET private = false WHERE private")
        _execute("ANALYZE ingestion_source")


def real_embedding_search(queries: list[Query]) -> None:
    """Latency with the query embedded by the app's model.

    Those vectors are unrelated to the synthetic corpus, so an owner-filtered HNSW walk meets few of
    the owner's rows and runs long: the embedding time alone is the representative figure.
    """
    from chat.selectors import search
    from ingestion.embeddings import embed_texts

    embed_texts(["warm up the model"])
    with sampling() as memory:
        embedding = [_timed(functools.partial(embed_texts, [q.words]))[0] for q in queries]
        full = [_timed(functools.partial(search, owner_id=q.owner_id, query=q.words, k=K))[0] for q in queries]
    log(f"hybrid search with the query embedded by the app's model: p50 {np.median(full) * 1000:.1f} ms, "
        f"p95 {percentile(full, 0.95) * 1000:.1f} ms vs embedding alone p50 {np.median(embedding) * 1000:.1f} ms "
        f"({len(queries)} queries); postgres memory: {memory.describe()}")  # fmt: skip


def _timed(function: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


_EXACT_SQL = "SELECT c.id FROM {table} c WHERE c.owner_id = %s ORDER BY c.embedding <=> %s::vector LIMIT %s"
_TEXT_SQL = (
    "SELECT c.id FROM {table} c, websearch_to_tsquery('english', %s) q(query) "
    "WHERE c.owner_id = %s AND c.search @@ q.query ORDER BY ts_rank_cd(c.search, q.query) DESC, c.id LIMIT %s"
)


def storage_experiment(queries: list[Query]) -> None:
    """The app's two branches, exact, on a copy of the table whose embeddings stay inline (STORAGE MAIN).

    Rows of ~750 characters of text exceed the 2 kB TOAST threshold, and `vector` is STORAGE EXTERNAL,
    so by default every embedding lives out of line: an exact scan pays a TOAST fetch per row.
    """
    if not _execute("SELECT to_regclass('bench_chunk_inline') IS NOT NULL")[0][0]:
        _execute("CREATE TABLE bench_chunk_inline (LIKE ingestion_chunk INCLUDING DEFAULTS INCLUDING GENERATED)")
        _execute("ALTER TABLE bench_chunk_inline ALTER COLUMN embedding SET STORAGE MAIN")
        columns = "id, source_id, owner_id, ordinal, text, anchor, occurred_at, embedding"
        seconds, _ = _timed(lambda: _execute(
            f"INSERT INTO bench_chunk_inline ({columns}) SELECT {columns} FROM ingestion_chunk ORDER BY id"
        ))  # fmt: skip
        _execute("CREATE INDEX ON bench_chunk_inline (owner_id)")
        _execute("CREATE INDEX ON bench_chunk_inline USING gin (search)")
        _execute("VACUUM (ANALYZE) bench_chunk_inline")
        log(f"storage experiment: copied the chunks with STORAGE MAIN embeddings in {seconds:.1f} s")
    for table in ("ingestion_chunk", "bench_chunk_inline"):
        heap, toast = _execute(
            "SELECT pg_relation_size(oid), coalesce(pg_total_relation_size(reltoastrelid), 0) "
            "FROM pg_class WHERE relname = %s",
            [table],
        )[0]
        exact = _run(
            queries, {"enable_indexscan": "off"}, functools.partial(_exact_ids, _EXACT_SQL.format(table=table))
        )
        text = _run(queries, {}, functools.partial(_text_ids, _TEXT_SQL.format(table=table)))
        log(f"storage experiment, {table} (heap {heap / 2**20:,.0f} MiB, TOAST {toast / 2**20:,.0f} MiB): "
            f"exact vector top-{4 * K} {exact.latency()}; full-text top-{4 * K} {text.latency()}")  # fmt: skip


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
