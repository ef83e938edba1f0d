import functools
import re
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Func
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField
from psycopg.types.multirange import Multirange
from psycopg.types.range import Range

# The text-search configuration of the generated tsvector; queries must use the same one.
SEARCH_CONFIG = "english"


def anchor_label(anchor: dict[str, Any]) -> str:
    """Where a passage sits in its source, for people: "page 4", "12:05", "Budget › Q3"."""
    if "page" in anchor:
        return f"page {anchor['page']}"
    if "when" in anchor:  # a calendar's event, by its start in the owner's zone
        return str(anchor["when"])
    if "start" in anchor:
        start = int(anchor["start"])
        return f"{start // 60}:{start % 60:02d}"
    return " › ".join(anchor.get("heading", []))


class Source(models.Model):
    class Kind(models.TextChoices):
        NOTE = "note", "Note"
        PDF = "pdf", "PDF"
        AUDIO = "audio", "Audio"
        CALENDAR = "calendar", "Calendar"
        URL = "url", "Web page"
        IMAGE = "image", "Image"

    class Status(models.TextChoices):
        PENDING = "pending", "Processing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sources")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    title = models.CharField(max_length=300)
    # A typed note keeps its body here, a web page its readable text and an image its caption;
    # uploaded files keep theirs in `file`.
    text = models.TextField(blank=True)
    file = models.FileField(upload_to="sources/%Y/%m/", blank=True)
    mime_type = models.CharField(max_length=100)
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    occurred_at = models.DateTimeField(default=timezone.now)
    metadata = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Left out of search, answers and the MCP tools unless the person asks to include private sources
    # (`chat.selectors._visible`); its page, its file and the sources list still show it.
    # db_default too: rows written by plain SQL (bench/scale.py's COPY) are not private either.
    private = models.BooleanField(default=False, db_default=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["owner", "-created_at"]),
            # Each search reads which of its owner's sources are private: few, so a partial index.
            models.Index(fields=["owner"], condition=models.Q(private=True), name="source_owner_private"),
        ]
        constraints = [models.UniqueConstraint(fields=["owner", "sha256"], name="source_owner_sha256_unique")]

    def __str__(self) -> str:
        return self.title


class HalfVectorArrayField(models.Field):
    """An array of half-precision vectors (`halfvec(n)[]`), each a numpy array of float16.

    pgvector's fields know one vector a column; Django's ArrayField cannot wrap them, since psycopg
    hands an array of a type it has no adapter for back as the array's text.
    """

    def __init__(self, *args: Any, dimensions: int, **kwargs: Any) -> None:
        self.dimensions = dimensions
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        return name, path, args, kwargs | {"dimensions": self.dimensions}

    def db_type(self, connection: Any) -> str:
        return f"halfvec({self.dimensions})[]"

    def get_prep_value(self, value: Any) -> str | None:
        if value is None:
            return None
        return "{" + ",".join(f'"{_halfvec_text(vector)}"' for vector in value) + "}"

    def from_db_value(self, value: str | None, expression: Any, connection: Any) -> list[np.ndarray] | None:
        if value is None:
            return None
        return [np.array(vector.split(","), dtype=np.float16) for vector in _HALFVEC_TEXT.findall(value)]


class DateTimeMultiRangeField(models.Field):
    """A set of half-open time ranges (`tstzmultirange`), as a list of (start, end) pairs of aware datetimes.

    Django's range fields hold one range a column; PostgreSQL's multiranges (14+) hold any number, and
    `&&` tests one against a range.
    """

    def db_type(self, connection: Any) -> str:
        return "tstzmultirange"

    def get_prep_value(self, value: Any) -> Multirange[Any] | None:
        if value is None:
            return None
        return Multirange(Range(start, end, "[)") for start, end in value)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> list[tuple[Any, Any]] | None:
        if value is None:
            return None
        return [(part.lower, part.upper) for part in value]


_HALFVEC_TEXT = re.compile(r"\[([^\]]*)\]")


@functools.cache
def _half_texts() -> np.ndarray:
    """The shortest text of each of the 65,536 half-precision values, by bit pattern (~0.1 s, once)."""
    values = np.arange(2**16, dtype=np.uint16).view(np.float16)
    return np.array([np.format_float_positional(value, unique=True, trim="-") for value in values], dtype=object)


def _halfvec_text(vector: np.ndarray) -> str:
    """`vector` as halfvec's text, read off a table: pgvector's own formatting, a float at a time,
    took ~0.25 ms a vector, and a passage stores one per sentence (its text is also twice as long)."""
    return "[" + ",".join(_half_texts()[np.asarray(vector, dtype=np.float16).view(np.uint16)]) + "]"


class ChunkManager(models.Manager["Chunk"]):
    """Chunks without their vectors, which only the search's SQL reads: a source's page of 500
    passages would otherwise fetch and parse some 2,500 vectors as text (its related manager is this one too)."""

    def get_queryset(self) -> models.QuerySet["Chunk"]:
        return super().get_queryset().defer("embedding", "sentence_embeddings")


class Chunk(models.Model):
    """A passage of a source, the unit of retrieval and citation.

    `anchor` locates it in its source: `{"heading": [...]}` for notes, `{"page": n}` for PDFs,
    `{"start": s, "end": e}` (seconds) for audio, `{"when": "Tue 1 Dec 2026, 17:00", "at": iso, "all_day",
    "uid"}` for a calendar's event (one passage per occurrence; `uid` is shared by a repeating event's).
    """

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="chunks")
    # Denormalized from the source so every search filters on an indexed column of this table; kept
    # equal to the source's owner by triggers (migration 0012), whatever a statement writes here.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    anchor = models.JSONField(default=dict)
    occurred_at = models.DateTimeField()
    embedding = VectorField(dimensions=settings.EMBEDDING_DIMENSIONS)
    # Its sentences' embeddings at half precision, where it has more than one (`Passage.sentences`):
    # what the search's sentence ranker reads (chat/selectors.py). NULL for a passage stored before
    # they were made; either way that ranker reads the passage's own embedding instead. The ORM's
    # queries leave both vector columns out (`ChunkManager`); reading the attribute fetches it.
    sentence_embeddings = HalfVectorArrayField(dimensions=settings.EMBEDDING_DIMENSIONS, null=True, blank=True)
    # The days its text speaks of, read from `occurred_at` in its owner's zone (`chat.temporal.mentioned`):
    # a question about November finds the October note that says "she's off 2-6 Nov" (chat/selectors.py).
    mentions = DateTimeMultiRangeField(null=True, blank=True, default=list)
    search = models.GeneratedField(
        expression=SearchVector("text", config=SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    objects = ChunkManager()

    class Meta:
        ordering = ["source_id", "ordinal"]
        constraints = [models.UniqueConstraint(fields=["source", "ordinal"], name="chunk_source_ordinal_unique")]
        indexes = [
            HnswIndex(
                name="chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                # 128 rather than 64: owner-filtered recall@10 at 1M chunks 0.966 → 0.99 for 40 % more build
                # time, same size and query latency (bench/scale.py, bench/RESULTS.md).
                ef_construction=128,
                opclasses=["vector_cosine_ops"],
            ),
            # Full-text postings per owner: keys "<owner id> <lexeme>", so a search reads only its owner's
            # postings (with a GIN on the tsvector alone, every user's; btree_gin is not in pgserver's build).
            # The function is created by migration 0006.
            GinIndex(
                Func(
                    F("owner"), F("search"), function="chunk_owner_terms", output_field=ArrayField(models.TextField())
                ),
                name="chunk_owner_terms_gin",
            ),
            models.Index(fields=["owner", "occurred_at"], name="chunk_owner_occurred"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id}#{self.ordinal}"

    @property
    def anchor_label(self) -> str:
        return anchor_label(self.anchor)


class Job(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    class Stage(models.TextChoices):
        QUEUED = "queued", "Waiting"
        EXTRACTING = "extracting", "Reading"
        TRANSCRIBING = "transcribing", "Transcribing"
        CHUNKING = "chunking", "Splitting"
        EMBEDDING = "embedding", "Indexing"
        STORING = "storing", "Saving"
        DONE = "done", "Done"

    # Always the source's owner: triggers keep it so (migration 0013), like `Chunk.owner`.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="jobs")
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="jobs")
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.QUEUED)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    error_code = models.CharField(max_length=64, blank=True)
    error_message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"]), models.Index(fields=["status", "updated_at"])]

    def __str__(self) -> str:
        return f"Job {self.pk} ({self.status})"
