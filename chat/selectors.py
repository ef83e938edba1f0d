import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.models import User
from chat.models import Conversation, Message
from ingestion.embeddings import embed_texts
from ingestion.models import SEARCH_CONFIG

# Reciprocal rank fusion constant (Cormack et al. 2009); 60 is their value, to be tuned on LoCoMo.
RRF_K = 60
# Each ranker contributes this many candidates per requested result.
CANDIDATES_PER_RESULT = 4
_WORD = re.compile(r"\w+", re.UNICODE)


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


_HYBRID_SQL = f"""
WITH vec AS (
    SELECT id, row_number() OVER (ORDER BY distance) AS rnk FROM (
        SELECT id, embedding <=> %(vector)s::vector AS distance
        FROM ingestion_chunk WHERE owner_id = %(owner)s
        ORDER BY distance LIMIT %(candidates)s
    ) nearest
),
fts AS (
    SELECT id, row_number() OVER (ORDER BY rank DESC, id) AS rnk, rank FROM (
        SELECT c.id, ts_rank_cd(c.search, q.query) AS rank
        FROM ingestion_chunk c, websearch_to_tsquery('{SEARCH_CONFIG}', %(words)s) AS q(query)
        WHERE c.owner_id = %(owner)s AND c.search @@ q.query
        ORDER BY rank DESC LIMIT %(candidates)s
    ) matching
),
fused AS (
    SELECT coalesce(vec.id, fts.id) AS id,
           coalesce(1.0 / (%(rrf_k)s + vec.rnk), 0) + coalesce(1.0 / (%(rrf_k)s + fts.rnk), 0) AS score,
           coalesce(fts.rank, 0) AS text_rank
    FROM vec FULL OUTER JOIN fts ON vec.id = fts.id
)
SELECT c.id, c.source_id, s.title, s.kind, c.text, f.score,
       1 - (c.embedding <=> %(vector)s::vector) AS similarity, f.text_rank, c.occurred_at, c.anchor
FROM fused f
JOIN ingestion_chunk c ON c.id = f.id
JOIN ingestion_source s ON s.id = c.source_id
ORDER BY f.score DESC, c.occurred_at DESC, c.id
LIMIT %(k)s
"""


def _any_word_query(text: str) -> str:
    """A websearch query matching any of the words: a question rarely repeats all of a note's words."""
    return " or ".join(_WORD.findall(text.lower())[:64])


def search(*, owner_id: int, query: str, k: int) -> list[Hit]:
    """The owner's `k` passages best matching `query`: vector and full-text ranks fused by RRF, one SQL statement."""
    vector = embed_texts([query])[0]
    params = {
        "owner": owner_id,
        "vector": "[" + ",".join(f"{value:.7g}" for value in vector) + "]",
        "words": _any_word_query(query),
        "candidates": max(k * CANDIDATES_PER_RESULT, 20),
        "rrf_k": RRF_K,
        "k": k,
    }
    with connection.cursor() as cursor:
        cursor.execute(_HYBRID_SQL, params)
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
        )
        for row in rows
    ]


def conversations_of(*, owner: User) -> QuerySet[Conversation]:
    return Conversation.objects.filter(owner=owner)


def conversation_get(*, owner: User, conversation_id: int) -> Conversation:
    return get_object_or_404(Conversation, pk=conversation_id, owner=owner)


def messages_of(*, conversation: Conversation) -> QuerySet[Message]:
    return conversation.messages.prefetch_related("citations")
