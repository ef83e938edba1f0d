import bisect
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypedDict
from zoneinfo import ZoneInfo

from django.db import connection
from django.db.models import F, Prefetch, QuerySet, Value
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404
from django.utils import timezone

from accounts.models import User
from chat import temporal
from chat.models import Citation, Conversation, Message
from chat.temporal import DateRange, Mode
from ingestion.embeddings import embed_texts
from ingestion.models import SEARCH_CONFIG, Chunk, Source
from secondbrain import timing
from secondbrain.errors import AppError

# Ranking parameters (docs/ranking.md tells the whole path), each kept only when the confirming halves
# of the three yardsticks held (bench/, figures in bench/RESULTS.md): BM25's k1 and b,
# reciprocal rank fusion's k and the weights of the vector and full-text ranks, the share of a
# passage's score its next (`after`) and previous (`before`) neighbours receive, how much of a passage's
# parts (its own score and those shares) beyond the largest one counts (`rest`), the factor for a
# passage dated in the grace periods around the range the question names (`later`), how much a
# passage spoken entirely by a person the question names gains (`voice`: score × (1 + voice × share)),
# below which share of the best BM25 score a passage's full-text rank counts only in proportion
# (`fts_floor`: RRF alone gives the best of a handful of weak matches as much as the best of strong ones),
# the BM25 weight of a pair of the question's words standing together in a passage (`phrase`), the
# lift of a passage holding all of the question's pairs (`phrase_lift`: score × (1 + lift × share)), and
# the lift of a passage dated from now on when the question asks what is to come (`ahead`: score × (1 +
# ahead)): "when is my dentist appointment?" is answered by the appointment, not by notes that mention it;
# the weight of the rank by a passage's nearest sentence (`w_sent`), given to each ranker's first
# `sent_per_result` candidates per requested result (each one read costs its sentences' TOAST); and
# whether a range of content time also reads the passages that speak of its days (`mentions`, 1 or 0).
RANKING = {
    "k1": 1.2, "b": 0.75, "rrf_k": 10, "w_vec": 1.0, "w_fts": 1.0, "w_sent": 0.7,
    "after": 0.5, "before": 0.25, "later": 0.5, "voice": 2.0, "fts_floor": 0.35, "phrase": 1.0, "phrase_lift": 1.0,
    "rest": 0.7, "ahead": 1.0, "sent_per_result": 2, "mentions": 1,
}  # fmt: skip
# Each ranker contributes this many candidates per requested result.
CANDIDATES_PER_RESULT = 4
# BM25 reads term counts from this many times the full-text candidates, chosen by BM25 with each
# term counted once (bench/scale.py: reading every match's tsvector made 1M-chunk searches 3x slower).
SHORTLIST_PER_CANDIDATE = 2
MAX_TERMS = 32  # a question's first distinct terms: each costs an index scan
# The owner's terms of a passage ("42 budget"): the expression of the GIN index `chunk_owner_terms_gin`
# (ingestion/models.py), spelt exactly so for the planner to use it.
OWNER_TERMS = "chunk_owner_terms(c.owner_id, c.search)"
# One key of that index, for the owner parameter and a lexeme column (the function spells it so too).
_OWNER_TERM = "%(owner)s::text || ' ' || {lexeme}"
# Notes tell of events after they happen ("last month the roofer came"): a content-time search reads
# on past the range's end by its own length, within these bounds. And of plans before ("a trip there
# next month"): it reads back before the range's start by this share of its length, at most GRACE_MIN
# (LoCoMo: any share from 0.15 to 1 finds the same two more questions, 0.919 → 0.921 overall).
GRACE_MIN = timedelta(days=7)
GRACE_MAX = timedelta(days=31)
LEAD_SHARE = 0.25
# Capitalized only because they open a question: never a speaker worth a database look-up.
_QUESTION_WORDS = frozenset(
    "what when where which who whom whose why how would could should does did do is are was were has have had can will i".split()
)
_NAMES = re.compile(r"\b[A-Z][\w'.-]*(?: [A-Z][\w'.-]*)*")


@dataclass(frozen=True)
class Hit:
    chunk_id: int
    source_id: int
    source_title: str
    kind: str
    text: str
    score: float
    similarity: float
    text_rank: float
    occurred_at: datetime
    anchor: dict[str, Any]
    private: bool = False  # of a private source: found only when the person asked to include them
    ordinal: int = 0  # its place in its source: passages of one source are shown to the model in reading order
    # of its nearest sentence to the question (its own where it has no sentences; 0 when not searched)
    sentence_similarity: float = 0.0
    joined: tuple[int, ...] = ()  # the passages after it in its source that it was joined with (`services.runs_joined`)


_HYBRID_SQL = f"""
WITH vec AS (
    SELECT id, row_number() OVER (ORDER BY distance) AS rnk FROM (
        SELECT c.id, c.embedding <=> %(topic_vector)s::vector AS distance
        FROM ingestion_chunk c WHERE {{filters}}
        ORDER BY distance LIMIT %(candidates)s
    ) nearest
),
terms AS (
    -- With each term its key in the GIN index, made here: a key made in the lookup's condition (a
    -- concatenation, not leakproof) would keep row-level security from letting the index answer it.
    SELECT lexeme, {_OWNER_TERM.format(lexeme="lexeme")} AS key FROM (
        SELECT DISTINCT lexeme FROM unnest(tsvector_to_array(to_tsvector('{SEARCH_CONFIG}', %(text)s))) AS lexeme
        LIMIT %(max_terms)s
    ) distinct_terms
),
postings AS (
    -- One index scan per query term: the owner's passages holding it (the GIN's keys are "owner
    -- lexeme", so no other user's postings are read). Their tsvectors are not read (they live out of
    -- line, in TOAST, behind the inline embedding); the stored size of the text stands for a
    -- passage's length, which its TOAST pointer holds.
    SELECT p.id, t.lexeme, octet_length(p.text) AS len
    FROM terms t
    CROSS JOIN LATERAL (
        SELECT c.id, c.text FROM ingestion_chunk c
        WHERE {{filters}} AND {OWNER_TERMS} @> ARRAY[t.key]
    ) p
),
frequency AS (
    -- Every passage holding a term is in `postings`: its count there is the term's document frequency.
    SELECT lexeme, count(*) AS df FROM postings GROUP BY lexeme
),
total AS (
    -- float8 throughout: Django binds the parameters as numeric literals, and numeric's ln() and
    -- division over every posting cost a 1M-chunk search ~15 ms (bench/scale.py).
    SELECT (SELECT count(*) FROM ingestion_chunk c WHERE {{filters}})::float8 AS n,
           (SELECT avg(len) FROM postings)::float8 AS avglen,
           %(k1)s::float8 AS k1, %(b)s::float8 AS b
),
idf AS (
    SELECT f.lexeme, ln(1 + (total.n - f.df + 0.5) / (f.df + 0.5)) AS idf FROM frequency f, total
),
shortlist AS (
    -- Okapi BM25 with each term counted once, to pick the passages worth reading term counts from.
    SELECT p.id, max(p.len) AS len
    FROM postings p JOIN idf USING (lexeme), total
    GROUP BY p.id
    ORDER BY sum(idf.idf / (1 + total.k1 * (1 - total.b + total.b * p.len / total.avglen))) DESC
    LIMIT %(shortlist)s
),
counts AS MATERIALIZED (
    -- Read once per shortlisted passage; unmaterialized, the planner re-read them for every term.
    SELECT s.id, s.len, p.lexeme, cardinality(p.positions) AS tf, p.positions
    FROM shortlist s JOIN ingestion_chunk c ON c.id = s.id, unnest(c.search) p
    WHERE p.lexeme = ANY (ARRAY(SELECT lexeme FROM terms))
),
pairs AS (
    -- Words that stand together in the question ("automatic trim", "Hillside Motors"): each term and
    -- the next, with the distance between them (a stop word between them counts, as in a phrase).
    SELECT DISTINCT lexeme AS first, next AS second, gap FROM (
        SELECT q.lexeme, lead(q.lexeme) OVER w AS next, lead(q.pos) OVER w - q.pos AS gap
        FROM (SELECT lexeme, unnest(positions) AS pos FROM unnest(to_tsvector('{SEARCH_CONFIG}', %(text)s))) q
        WINDOW w AS (ORDER BY q.pos)
    ) words
    WHERE next IS NOT NULL AND next <> lexeme AND lexeme IN (SELECT lexeme FROM terms)
      AND next IN (SELECT lexeme FROM terms)
),
pair_idf AS (
    SELECT pr.*, (ia.idf + ib.idf) / 2 AS idf
    FROM pairs pr JOIN idf ia ON ia.lexeme = pr.first JOIN idf ib ON ib.lexeme = pr.second
),
occurrences AS (
    -- Each place a question's word stands in a shortlisted passage, for the pairs to be matched in
    -- one join (a lookup per passage and pair cost a 1M-chunk search of 6–8 words ~12 ms).
    SELECT id, len, lexeme, unnest(positions) AS pos FROM counts
),
phrases AS (
    -- A passage where such a pair stands together too scores the pair as one more term, as rare as
    -- its two words on average: a remembered phrase lifts the passage that holds it above the ones
    -- that merely share its words. Only passages where it does are here (tf > 0).
    SELECT a.id, a.len, pr.idf, count(*) AS tf
    FROM pair_idf pr
    JOIN occurrences a ON a.lexeme = pr.first
    JOIN occurrences b ON b.id = a.id AND b.lexeme = pr.second AND b.pos = a.pos + pr.gap
    GROUP BY a.id, a.len, pr.first, pr.second, pr.gap, pr.idf
),
phrase_cover AS (
    -- The share of the question's pairs (by rarity) that stand together in the passage.
    SELECT id, sum(idf) / (SELECT sum(idf) FROM pair_idf) AS cover FROM phrases GROUP BY id
),
bm25 AS (
    SELECT id, sum(weight * idf * tf * (total.k1 + 1) / (tf + total.k1 * (1 - total.b + total.b * len / total.avglen)))
        AS rank
    FROM (
        SELECT id, len, idf.idf, tf, 1.0::float8 AS weight FROM counts JOIN idf USING (lexeme)
        UNION ALL
        SELECT id, len, idf, tf, %(phrase)s::float8 FROM phrases
    ) scored, total
    GROUP BY id
),
fts AS (
    SELECT id, row_number() OVER (ORDER BY rank DESC, id) AS rnk, rank, max(rank) OVER () AS top
    FROM bm25 ORDER BY rank DESC, id LIMIT %(candidates)s
),
sent AS (
    -- The third ranker, over the two rankers' first candidates (`sent_pool`): by the nearest of a passage's
    -- sentences to the question (its own embedding where it has no sentences of its own). A question is
    -- often answered by one sentence among others about something else.
    SELECT id, row_number() OVER (ORDER BY similarity DESC, id) AS rnk FROM (
        SELECT c.id, coalesce(
                   (SELECT max(1 - (e <=> %(topic_vector)s::halfvec)) FROM unnest(c.sentence_embeddings) e),
                   1 - (c.embedding <=> %(topic_vector)s::vector)
               ) AS similarity
        FROM ingestion_chunk c
        WHERE {{filters}} AND c.id IN (
            SELECT id FROM vec WHERE rnk <= %(sent_pool)s UNION SELECT id FROM fts WHERE rnk <= %(sent_pool)s
        )
    ) candidates
),
fused AS MATERIALIZED (
    -- Materialized: its ids are then plain values below, not coalesce() (see `spread`).
    SELECT coalesce(vec.id, fts.id) AS id,
           (
               coalesce(%(w_vec)s / (%(rrf_k)s + vec.rnk), 0)
               + coalesce(
                   %(w_fts)s * least(1, fts.rank / greatest(%(fts_floor)s * fts.top, 1e-9)) / (%(rrf_k)s + fts.rnk), 0
               )
               + coalesce(%(w_sent)s / (%(rrf_k)s + sent.rnk), 0)
           ) * (1 + %(phrase_lift)s * coalesce(pc.cover, 0)) AS score,
           coalesce(fts.rank, 0) AS text_rank
    FROM vec FULL OUTER JOIN fts ON vec.id = fts.id
    LEFT JOIN sent ON sent.id = coalesce(vec.id, fts.id)
    LEFT JOIN phrase_cover pc ON pc.id = coalesce(vec.id, fts.id)
),
spread AS (
    -- A passage also earns a share of its neighbours' scores: in notes and transcripts the answer
    -- often sits just after the passage that repeats the question's words.
    -- Its parts (its own score, its neighbours' shares) add up, but beyond the largest only at `rest`:
    -- on prose, the neighbours of a strong passage crowded out others that match the question themselves.
    SELECT c.id, max(part) + %(rest)s * (sum(part) - max(part)) AS score,
           max(CASE WHEN c.id = f.id THEN f.text_rank ELSE 0 END) AS text_rank
    FROM fused f
    CROSS JOIN LATERAL (
        -- Where the passage stands, and its neighbours' ordinals, made in a subquery of its own (LIMIT
        -- keeps it one; there is one row anyway). Under row-level security an index may answer only
        -- leakproof conditions — a coalesce() is not one, nor integer arithmetic (it can overflow) —
        -- and the planner takes the policy for a filter that keeps a hundredth of the rows: joined
        -- directly, a passage was looked up among all of its owner's, and its neighbours among all of
        -- its source's (bench/scale.py, bench/RESULTS.md).
        SELECT h.id, h.ordinal, h.source_id, h.ordinal - 1 AS first_ordinal, h.ordinal + 1 AS last_ordinal,
               h.anchor ? 'at' AS event
        FROM ingestion_chunk h WHERE h.id = f.id LIMIT 1
    ) h
    -- A calendar's events (anchored at their time, `at`) are things of their own: no shares between them.
    JOIN ingestion_chunk c ON c.source_id = h.source_id AND c.ordinal BETWEEN h.first_ordinal AND h.last_ordinal
        AND (c.id = h.id OR NOT h.event)
    CROSS JOIN LATERAL (
        SELECT f.score * CASE c.ordinal - h.ordinal WHEN 0 THEN 1.0 WHEN 1 THEN %(after)s ELSE %(before)s END AS part
    ) shares
    WHERE {{filters}}
    GROUP BY c.id
),
best AS (
    -- Only the leading passages are read line by line below: that costs ~0.1 ms a passage.
    SELECT * FROM spread ORDER BY score DESC LIMIT %(rerank)s
)
SELECT c.id, c.source_id, s.title, s.kind, c.text, f.score * {{preference}} * (1 + %(voice)s * voice.share) AS score,
       1 - (c.embedding <=> %(vector)s::vector) AS similarity, f.text_rank, c.occurred_at, c.anchor, s.private,
       c.ordinal,
       -- The passage's nearest sentence's (its own where it has no sentences of its own), to the question as asked.
       coalesce(
           (SELECT max(1 - (e <=> %(vector)s::halfvec)) FROM unnest(c.sentence_embeddings) e),
           1 - (c.embedding <=> %(vector)s::vector)
       ) AS nearest_sentence
FROM best f
JOIN ingestion_chunk c ON c.id = f.id
JOIN ingestion_source s ON s.id = c.source_id
CROSS JOIN LATERAL (
    -- The share of the passage's text in lines spoken by someone the question names ("Caroline: …"
    -- in a transcript or chat log): a question about a person is mostly answered by what they said.
    SELECT coalesce(sum(length(line)) FILTER (WHERE split_part(line, ': ', 1) = ANY (%(names)s::text[])), 0)::float8
           / greatest(sum(length(line)), 1) AS share
    FROM regexp_split_to_table(c.text, '\n') AS line
) voice
ORDER BY score DESC, c.occurred_at DESC, c.id
LIMIT %(k)s
"""

# Temporal-only questions ("what did I add last week?") list passages by time, newest first.
_RECENT_SQL = """
SELECT c.id, c.source_id, s.title, s.kind, c.text, 0.0, 0.0, 0.0, c.occurred_at, c.anchor, s.private, c.ordinal, 0.0
FROM ingestion_chunk c JOIN ingestion_source s ON s.id = c.source_id
WHERE {filters}
ORDER BY {order}, c.ordinal, c.id
LIMIT %(k)s
"""


# A listing by time ("what did I add yesterday?"): each source in the range once, by its first passage
# there, newest first — except that a calendar's events are each a thing of their own ("what's on
# tomorrow?" lists every event of the day): a passage that is an event (its anchor has its time, `at`)
# is listed by itself.
_LISTING_SQL = """
SELECT id, source_id, title, kind, text, 0.0, 0.0, 0.0, occurred_at, anchor, private, ordinal, 0.0 FROM (
    SELECT DISTINCT ON (c.source_id, CASE WHEN c.anchor ? 'at' THEN c.id END)
           c.id, c.source_id, s.title, s.kind, c.text, c.occurred_at, c.anchor, s.private, s.created_at, c.ordinal
    FROM ingestion_chunk c JOIN ingestion_source s ON s.id = c.source_id
    WHERE {filters}
    ORDER BY c.source_id, CASE WHEN c.anchor ? 'at' THEN c.id END, c.ordinal
) first_passages
ORDER BY {order}, id
LIMIT %(k)s
"""


Visible = tuple[list[str], dict[str, Any]]  # `_visible`'s clauses on `ingestion_chunk c` and their parameters


def _visible(*, owner_id: int, include_private: bool) -> Visible:
    """The owner's passages a search may read: the one place private sources are left out of search,
    answers, listings and the MCP tools (unless the person asks to include them).

    The private sources are read as the search starts, so a change takes effect at once. Their
    passages are left out by id rather than by a join: with none private (the usual case) the
    statement is the one the indexes were tuned for; with some, a `<> ALL` over a constant array
    (hashed by PostgreSQL from 9 ids on) filters the rows each index scan returns (bench/scale.py's
    `private_search`, bench/RESULTS.md).
    """
    clauses = ["c.owner_id = %(owner)s"]
    params: dict[str, Any] = {"owner": owner_id}
    hidden = [] if include_private else _private_sources(owner_id)
    if hidden:
        clauses.append("c.source_id <> ALL (%(hidden)s::bigint[])")
        params["hidden"] = hidden
    return clauses, params


def _private_sources(owner_id: int) -> list[int]:
    # A plain statement, on every search: through the ORM, compiling it cost 3–5× the statement (p50 2.6 ms
    # against 0.5 ms on a busy machine).
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM ingestion_source WHERE owner_id = %s AND private ORDER BY id", [owner_id])
        return [row[0] for row in cursor.fetchall()]


def _filters(
    *, visible: Visible, date_range: DateRange | None, kind: str | None, mentions: bool = False
) -> tuple[str, dict[str, Any]]:
    """The WHERE clause on `ingestion_chunk c` every search applies: always the owner's passages a
    search may read (`_visible`), then time and kind. With `mentions`, a passage is in a range of content
    time also when a day its text speaks of is (`Chunk.mentions`): a plan is written down before it happens."""
    clauses, params = list(visible[0]), dict(visible[1])
    source_clauses = []
    if kind:
        source_clauses.append("kind = %(kind)s")
        params["kind"] = kind
    if date_range is not None:
        # Content time is on the chunk (audio passages are offset into the recording); upload time on the source.
        target, column = (source_clauses, "created_at") if date_range.clock == "upload" else (clauses, "c.occurred_at")
        params |= {"since": date_range.since, "until": date_range.until}
        bounds = [f"{column} >= %(since)s"] if date_range.since is not None else []
        bounds += [f"{column} < %(until)s"] if date_range.until is not None else []
        if mentions and bounds and date_range.clock == "content":
            bounds = [f"({' AND '.join(bounds)} OR {_MENTIONED.format(since='since', until='until')})"]
        target.extend(bounds)
    if source_clauses:
        clauses.append(
            "c.source_id IN (SELECT id FROM ingestion_source WHERE owner_id = %(owner)s AND "
            + " AND ".join(source_clauses)
            + ")"
        )
    return " AND ".join(clauses), params


# A passage's text speaks of a day in the range (NULL, so not, where it was stored before `mentions` was read),
# by a span not much wider than the range (`temporal.speaks_of`: "book club next month" is no answer to "what
# did I plan for Friday?"). The overlap is tested twice on purpose: outside, where the GiST index on
# `mentions` can answer it; inside, for the one span that must also be narrow enough.
_RANGE = "tstzrange(%({since})s::timestamptz, %({until})s::timestamptz)"
_MENTIONED = f"""(c.mentions && {_RANGE} AND EXISTS (
    SELECT FROM unnest(c.mentions) m(span)
    WHERE span && {_RANGE}
      AND (%({{since}})s::timestamptz IS NULL OR %({{until}})s::timestamptz IS NULL
           OR upper(span) - lower(span) <= GREATEST(interval '{temporal.MENTION_WIDTH_MIN_DAYS} days',
              {temporal.MENTION_WIDTH} * (%({{until}})s::timestamptz - %({{since}})s::timestamptz)))))"""


def _names(text: str) -> list[str]:
    """Whom the question may name, as a speaker's label would spell it: each run of 1–3 capitalized words."""
    runs = [match.split() for match in _NAMES.findall(text)]
    return sorted(
        {" ".join(run[i:j]) for run in runs for i in range(len(run)) for j in range(i + 1, min(i + 3, len(run)) + 1)}
    )


_SPEAKERS_SQL = f"""
WITH named AS MATERIALIZED (
    -- Each name's keys in the terms index, made here (as the search's `terms`): made in the lookup's
    -- condition, as a subquery, they would keep row-level security from letting the index answer it.
    SELECT name, ARRAY(
        SELECT {_OWNER_TERM.format(lexeme="lexeme")}
        FROM unnest(tsvector_to_array(to_tsvector('{SEARCH_CONFIG}', name))) AS lexeme
    ) AS keys
    FROM unnest(%(names)s::text[]) AS name
)
SELECT name FROM named k
WHERE cardinality(k.keys) > 0 AND EXISTS (
    SELECT 1 FROM ingestion_chunk c
    WHERE {{visible}} AND {OWNER_TERMS} @> k.keys
      AND (starts_with(c.text, name || ': ') OR strpos(c.text, E'\\n' || name || ': ') > 0)
)
"""


def _speakers(*, visible: Visible, names: list[str]) -> list[str]:
    """Which of `names` label lines in the owner's passages ("Caroline: …"): people who speak there."""
    names = [name for name in names if name.lower() not in _QUESTION_WORDS]
    if not names:
        return []
    clauses, params = visible
    with connection.cursor() as cursor:
        cursor.execute(_SPEAKERS_SQL.format(visible=" AND ".join(clauses)), params | {"names": names})
        return [row[0] for row in cursor.fetchall()]


def _without(text: str, names: list[str]) -> str:
    """`text` without the names (and their possessive 's)."""
    for name in names:
        text = re.sub(rf"\b{re.escape(name)}(?:'s)?\b", " ", text)
    return " ".join(text.split())


def _literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{value:.7g}" for value in vector) + "]"


def search(
    *,
    owner_id: int,
    query: str,
    k: int,
    date_range: DateRange | None = None,
    kind: str | None = None,
    vector: list[float] | None = None,
    prefer: DateRange | None = None,
    ahead_of: datetime | None = None,
    include_private: bool = False,
    asked: str | None = None,
) -> list[Hit]:
    """The owner's `k` passages best matching `query`: vector and full-text ranks fused by RRF, one SQL statement.

    `vector` is the query's embedding when the caller has it already (benchmarks with synthetic vectors).
    `prefer` is the range the question named when `date_range` reads around it: passages dated outside
    it score `RANKING["later"]` times less. `ahead_of` (now, for a question about what is to come):
    passages dated from then on score `1 + RANKING["ahead"]` times more. Private sources are read only
    with `include_private`.
    """
    names = _names(query)
    visible = _visible(owner_id=owner_id, include_private=include_private)
    # The vector ranker searches the question without the names of people who speak in the owner's
    # passages: a name pulls in every line that addresses its bearer, while `voice` already favours
    # what they said. `similarity` stays the whole question's.
    with timing.span("names"):
        topic = _without(query, _speakers(visible=visible, names=names))
    # `asked`, when `query` is what is left of the question once its time is read ("my to-do list" of
    # "What's on my to-do list today?"): `similarity`, the chat's relevance gate, is the question's as asked.
    asked = asked or query
    with timing.span("embed"):
        if vector is not None:
            topic_vector = vector
        elif topic == asked:
            vector = topic_vector = list(embed_texts([asked])[0])
        else:
            vector, topic_vector = (list(values) for values in embed_texts([asked, topic]))
    filters, params = _filters(visible=visible, date_range=date_range, kind=kind, mentions=RANKING["mentions"] > 0)
    candidates = max(k * CANDIDATES_PER_RESULT, 20)
    params |= {
        "vector": _literal(vector),
        "topic_vector": _literal(topic_vector),
        "text": query,
        "names": names,
        "candidates": candidates,
        "sent_pool": max(round(k * RANKING["sent_per_result"]), 10),
        "shortlist": SHORTLIST_PER_CANDIDATE * candidates,
        "max_terms": MAX_TERMS,
        "k": k,
        "rerank": 2 * k,
        **RANKING,
    }
    preference = "1"
    if prefer is not None and prefer.until is not None:
        inside = "c.occurred_at < %(preferred_until)s"
        if prefer.since is not None:
            inside += " AND c.occurred_at >= %(preferred_since)s"
        inside = f"{inside} OR {_MENTIONED.format(since='preferred_since', until='preferred_until')}"
        preference = f"CASE WHEN {inside} THEN 1 ELSE %(later)s END"
        params |= {"preferred_since": prefer.since, "preferred_until": prefer.until}
    if ahead_of is not None:
        # Only passages that hold the question's words: an unrelated event to come is no answer either.
        preference += " * CASE WHEN c.occurred_at >= %(ahead_of)s AND f.text_rank > 0 THEN 1 + %(ahead)s ELSE 1 END"
        params["ahead_of"] = ahead_of
    return _hits(_HYBRID_SQL.format(filters=filters, preference=preference), params)


def recent(
    *,
    owner_id: int,
    k: int,
    date_range: DateRange | None = None,
    kind: str | None = None,
    oldest_first: bool = False,
    include_private: bool = False,
) -> list[Hit]:
    """The owner's passages in the range, newest (or oldest) first on the range's clock: no text to match, only time."""
    visible = _visible(owner_id=owner_id, include_private=include_private)
    filters, params = _filters(visible=visible, date_range=date_range, kind=kind, mentions=RANKING["mentions"] > 0)
    order = "s.created_at" if date_range is not None and date_range.clock == "upload" else "c.occurred_at"
    order += " ASC" if oldest_first else " DESC"
    return _hits(_RECENT_SQL.format(filters=filters, order=order), params | {"k": k})


def sources_in(
    *,
    owner_id: int,
    date_range: DateRange,
    k: int,
    oldest_first: bool = False,
    kind: str | None = None,
    include_private: bool = False,
) -> list[Hit]:
    """The owner's sources in the range, newest (or oldest) first on its clock, each by its first passage there
    (on content time, a passage written before or after that speaks of the range's days is there too)."""
    visible = _visible(owner_id=owner_id, include_private=include_private)
    filters, params = _filters(visible=visible, date_range=date_range, kind=kind, mentions=RANKING["mentions"] > 0)
    order = ("created_at" if date_range.clock == "upload" else "occurred_at") + (" ASC" if oldest_first else " DESC")
    return _hits(_LISTING_SQL.format(filters=filters, order=order), params | {"k": k})


def source_passages(*, owner_id: int, source_id: int, k: int, page: int | None = None) -> list[Hit]:
    """The first `k` passages of one of the owner's sources (or of one page of it), in reading order (a
    summary reads it whole).

    The caller chose the source, from a search's hits or `ingestion.selectors.source_get` (which
    decide whether a private one may be read).
    """
    sql = f"""
        SELECT c.id, c.source_id, s.title, s.kind, c.text, 0.0, 0.0, 0.0, c.occurred_at, c.anchor, s.private,
               c.ordinal, 0.0
        FROM ingestion_chunk c JOIN ingestion_source s ON s.id = c.source_id
        WHERE c.owner_id = %(owner)s AND c.source_id = %(source)s {"" if page is None else _ON_PAGE}
        ORDER BY c.ordinal
        LIMIT %(k)s
    """
    return _hits(sql, {"owner": owner_id, "source": source_id, "k": k, "page": page})


_ON_PAGE = "AND c.anchor @> jsonb_build_object('page', %(page)s::int)"


@dataclass(frozen=True)
class Selection:
    """Text a person selected in one of their sources to ask about ("Ask about this"), as found there."""

    source_id: int
    source_title: str
    text: str  # with its whitespace normalised, as it was found
    chunk_ids: tuple[int, ...]  # the passages it lies in, in reading order

    def as_dict(self) -> dict[str, Any]:
        """What a message keeps of it (its question's and its answer's trace)."""
        return {
            "source_id": self.source_id,
            "source_title": self.source_title,
            "text": self.text,
            "chunk_ids": list(self.chunk_ids),
        }


def selection_find(*, owner_id: int, source_id: int, text: str, chunk_id: int | None = None) -> Selection:
    """Where `text` lies in one of the owner's sources: the passages it spans, read as the source page
    shows them (one after the other), whitespace normalised on both sides.

    When the text occurs more than once, the occurrence that touches passage `chunk_id` (where the
    person selected it) is taken, else the first. Another user's source is a 404; text that is not in
    the source a 422.
    """
    title = Source.objects.filter(owner_id=owner_id, pk=source_id).values_list("title", flat=True).first()
    if title is None:
        raise AppError("not_found", "That source does not exist.", status=404)
    passages = Chunk.objects.filter(owner_id=owner_id, source_id=source_id).order_by("ordinal")
    spans: list[tuple[int, int, int]] = []  # (start, end, chunk id) of each passage in `whole`
    parts: list[str] = []
    at = 0
    for passage_id, passage_text in passages.values_list("id", "text"):
        words = " ".join(passage_text.split())
        spans.append((at, at + len(words), passage_id))
        parts.append(words)
        at += len(words) + 1
    if not parts:
        raise AppError("source_has_no_text", "This source has no text to ask about yet.", status=422)
    wanted, whole = " ".join(text.split()), " ".join(parts)
    start = whole.find(wanted) if wanted else -1
    if start < 0:
        raise AppError(
            "selection_not_in_source",
            "The selected text is not in this source. Select it again on the source's page.",
            status=422,
        )
    near = next((span for span in spans if span[2] == chunk_id), None)
    if near is not None:
        # The first occurrence that ends inside that passage or after its start.
        there = whole.find(wanted, max(near[0] - len(wanted) + 1, 0))
        start = there if 0 <= there < near[1] else start
    end = start + len(wanted)
    first = bisect.bisect_right([span[0] for span in spans], start) - 1
    chunk_ids = tuple(span[2] for span in spans[max(first, 0) :] if span[0] < end and start < span[1])
    return Selection(source_id=source_id, source_title=title, text=wanted, chunk_ids=chunk_ids)


# Around a selection: the passages just before and after the ones it lies in (a calendar's events are
# things of their own: none).
_SELECTION_SQL = """
SELECT c.id, c.source_id, s.title, s.kind, c.text, 0.0, 0.0, 0.0, c.occurred_at, c.anchor, s.private, c.ordinal, 0.0
FROM ingestion_chunk c JOIN ingestion_source s ON s.id = c.source_id
WHERE c.owner_id = %(owner)s AND c.source_id = %(source)s AND (
    c.id = ANY(%(chunks)s) OR (
        NOT EXISTS (SELECT 1 FROM ingestion_chunk p WHERE p.id = ANY(%(chunks)s) AND p.anchor ? 'at')
        AND c.ordinal BETWEEN (SELECT min(ordinal) - 1 FROM ingestion_chunk WHERE id = ANY(%(chunks)s))
                          AND (SELECT max(ordinal) + 1 FROM ingestion_chunk WHERE id = ANY(%(chunks)s))
    )
)
ORDER BY c.id = ANY(%(chunks)s) DESC, c.ordinal
"""


def selection_passages(*, owner_id: int, selection: Selection) -> list[Hit]:
    """What an answer about a selection reads: the passages the selection lies in (first, in reading
    order), then their neighbours — the one before and the one after. Nothing of any other source.
    A private source's too: text selected on its page is the person asking about it."""
    params = {"owner": owner_id, "source": selection.source_id, "chunks": list(selection.chunk_ids)}
    return _hits(_SELECTION_SQL, params)


@dataclass(frozen=True)
class Retrieval:
    """How `retrieve` read a question and what it found.

    `query` is the text that was searched (the question without its time words; empty when the
    question only lists by time) and `label` the range in words, in the owner's zone.
    """

    mode: Mode
    date_range: DateRange | None
    hits: list[Hit]
    query: str = ""
    label: str = ""
    pointed: bool = False  # the question pointed at this source ("summarize the PDF"): read it, ungated
    # A listing of what is still to come ("what's on tomorrow?", "what do I have in the next 14 days?"):
    # read in the order it will happen, not newest first.
    chronological: bool = False


@timing.span("search", metric="search_duration_seconds")
def retrieve(
    *,
    owner: User,
    query: str,
    k: int,
    since: datetime | None = None,
    until: datetime | None = None,
    kind: str | None = None,
    now: datetime | None = None,
    ignore_dates: bool = False,
    include_private: bool = False,
) -> Retrieval:
    """The owner's passages for a question, read in their time zone: by time, by meaning, or both.

    An explicit `since` / `until` (naive values are read in the owner's zone) replaces the range the
    question names; `ignore_dates` searches the whole question as if it named no time at all;
    `include_private` reads the owner's private sources too.
    """
    zone = owner.zone
    now = now or timezone.now()
    if ignore_dates:
        meaning = temporal.Interpretation(mode="semantic", date_range=None, topic=query.strip())
    else:
        with timing.span("time"):
            meaning = temporal.interpret(query, now=now, zone=zone)
    # A question about what is to come favours what is dated from now on (docs/ranking.md, "ahead").
    ahead_of = now if temporal.looks_ahead(query) else None
    date_range = meaning.date_range
    if since is not None or until is not None:
        clock = date_range.clock if date_range is not None else temporal.clock_of(query)
        date_range = DateRange(since=_in_zone(since, zone), until=_in_zone(until, zone), clock=clock)
        if date_range.since is not None and date_range.until is not None and date_range.since >= date_range.until:
            raise AppError("invalid_range", "The start of the range must come before its end.", status=422)
    if date_range is None:
        hits = search(
            owner_id=owner.pk, query=query, k=k, kind=kind, ahead_of=ahead_of, include_private=include_private
        )
        return Retrieval(mode="semantic", date_range=None, hits=_coming(owner.pk, hits, ahead_of), query=query)
    label = temporal.describe(date_range, zone=zone)
    if not temporal.is_topical(meaning.topic):
        coming = ahead_of is not None and (date_range.until is None or date_range.until > now)
        hits = recent(
            owner_id=owner.pk,
            k=k,
            date_range=date_range,
            kind=kind,
            oldest_first=coming,
            include_private=include_private,
        )
        return Retrieval(mode="temporal", date_range=date_range, hits=hits, label=label, chronological=coming)
    searched, prefer = date_range, None
    if since is None and until is None and date_range.clock == "content" and date_range.until is not None:
        searched, prefer = _read_on(date_range), date_range  # a range the person set explicitly is kept exact
    hits = search(
        owner_id=owner.pk,
        query=meaning.topic,
        k=k,
        date_range=searched,
        kind=kind,
        prefer=prefer,
        ahead_of=ahead_of,
        include_private=include_private,
        asked=query,
    )
    if since is None and until is None and not any(_dated_in(hit, searched) for hit in hits):
        # Nothing found is dated in the range the question seemed to name ("on Aug 15th" read as this
        # year's, "Femi's last night in his old place"): the closest passages from any time beat an empty
        # answer, and the range is not shown. Passages that only speak of its days are not enough: a
        # range no note is dated in is most likely a misreading, or history told in prose ("in 1979").
        hits = search(
            owner_id=owner.pk, query=query, k=k, kind=kind, ahead_of=ahead_of, include_private=include_private
        )
        return Retrieval(mode="semantic", date_range=None, hits=_coming(owner.pk, hits, ahead_of), query=query)
    hits = _coming(owner.pk, hits, ahead_of)
    return Retrieval(mode="hybrid", date_range=date_range, hits=hits, query=meaning.topic, label=label)


def _dated_in(hit: Hit, date_range: DateRange) -> bool:
    since, until = date_range.since, date_range.until
    return (since is None or hit.occurred_at >= since) and (until is None or hit.occurred_at < until)


# The next occurrence of each repeating event among `hits` (`_coming`).
_NEXT_OCCURRENCES_SQL = """
SELECT DISTINCT ON (c.source_id, c.anchor ->> 'uid')
       c.id, c.source_id, s.title, s.kind, c.text, 0.0, 0.0, 0.0, c.occurred_at, c.anchor, s.private, c.ordinal
FROM ingestion_chunk c JOIN ingestion_source s ON s.id = c.source_id
WHERE c.owner_id = %(owner)s AND c.source_id = ANY(%(sources)s) AND c.anchor ->> 'uid' = ANY(%(uids)s)
  AND c.occurred_at >= %(now)s
ORDER BY c.source_id, c.anchor ->> 'uid', c.occurred_at
"""


def _coming(owner_id: int, hits: list[Hit], ahead_of: datetime | None) -> list[Hit]:
    """For a question about what is to come, a repeating event found in any of its occurrences is
    answered by its next one, once ("when is my piano lesson?": next Tuesday's, not a year of them).

    A series is a calendar's events that share a `uid` (one per occurrence, ingestion/extract/calendar.py);
    its occurrences read alike, so which of them the rankers happened to pick is chance. Passages of
    no series, and series with nothing to come, are left as they are.
    """
    series = [hit for hit in hits if "uid" in hit.anchor and "at" in hit.anchor]
    if ahead_of is None or not series:
        return hits
    with connection.cursor() as cursor:
        cursor.execute(
            _NEXT_OCCURRENCES_SQL,
            {
                "owner": owner_id,
                "sources": sorted({hit.source_id for hit in series}),
                "uids": sorted({str(hit.anchor["uid"]) for hit in series}),
                "now": ahead_of,
            },
        )
        upcoming = {(row[1], json.loads(row[9])["uid"]): row for row in cursor.fetchall()}
    kept: list[Hit] = []
    seen: set[tuple[int, str]] = set()
    for hit in hits:
        key = (hit.source_id, str(hit.anchor.get("uid")))
        if key not in upcoming or "at" not in hit.anchor:
            kept.append(hit)
        elif key not in seen:
            seen.add(key)
            row = upcoming[key]
            lift = 1.0 if hit.occurred_at >= ahead_of or hit.text_rank <= 0 else 1 + RANKING["ahead"]
            kept.append(
                replace(
                    hit,
                    chunk_id=row[0],
                    text=row[4],
                    occurred_at=row[8],
                    anchor=json.loads(row[9]),
                    score=hit.score * lift,
                )
            )
    return sorted(kept, key=lambda hit: -hit.score)


def _read_on(date_range: DateRange) -> DateRange:
    """The range with grace periods: after its end its own length (7–31 days), before its start a quarter of
    it (at most 7 days). Notes tell of events later, and of plans before."""
    assert date_range.until is not None
    span = date_range.until - date_range.since if date_range.since is not None else GRACE_MIN
    # Aware datetimes of one zone add by the wall clock: the end stays at local midnight across a DST change.
    grace = min(max(span, GRACE_MIN), GRACE_MAX)
    since = date_range.since - min(span * LEAD_SHARE, GRACE_MIN) if date_range.since is not None else None
    return DateRange(since=since, until=date_range.until + grace, clock=date_range.clock)


def _in_zone(value: datetime | None, zone: ZoneInfo) -> datetime | None:
    if value is None or timezone.is_aware(value):
        return value
    return value.replace(tzinfo=zone)


def _hits(sql: str, params: dict[str, Any]) -> list[Hit]:
    with timing.span("sql"), connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [
        Hit(
            chunk_id=row[0],
            source_id=row[1],
            source_title=row[2],
            kind=row[3],
            text=row[4],
            score=float(row[5]),
            similarity=float(row[6]),
            text_rank=float(row[7]),
            occurred_at=row[8],
            anchor=json.loads(row[9]),  # Django leaves jsonb undecoded on raw cursors
            private=row[10],
            ordinal=row[11],
            sentence_similarity=float(row[12]),
        )
        for row in rows
    ]


def conversations_of(*, owner: User) -> QuerySet[Conversation]:
    return Conversation.objects.filter(owner=owner)


def conversation_get(*, owner: User, conversation_id: int) -> Conversation:
    return get_object_or_404(Conversation, pk=conversation_id, owner=owner)


def messages_of(*, conversation: Conversation) -> QuerySet[Message]:
    return conversation.messages.prefetch_related(Prefetch("citations", queryset=_citations()))


class _Lock(TypedDict):
    private: bool


if TYPE_CHECKING:  # django-stubs' type of an annotated row; a type checker's only (not subscriptable at run time)
    from django_stubs_ext import WithAnnotations

    LockedCitation = WithAnnotations[Citation, _Lock]


def citations_of(*, message: Message) -> "QuerySet[LockedCitation]":
    return _citations().filter(message=message)


def _citations() -> "QuerySet[LockedCitation]":
    """Citations with whether their source is private now (`private`), to show the lock: an answer
    keeps its citations when a source it cites is made private later — it is the person's own."""
    return Citation.objects.annotate(private=Coalesce(F("source__private"), Value(False)))


def remembered_notes(*, owner: User, message_ids: Iterable[int]) -> dict[int, Source]:
    """The notes the given answers were saved as ("Remember this"), by the answer's id."""
    notes = Source.objects.filter(owner=owner, metadata__remembered__message_id__in=list(message_ids))
    return {source.metadata["remembered"]["message_id"]: source for source in notes.order_by("created_at", "id")}
