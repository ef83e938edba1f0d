"""Text → vectors, with the local sentence-transformers model or an OpenAI-compatible endpoint."""

import functools
import threading
from typing import Protocol

import numpy as np
from django.conf import settings

from secondbrain.errors import AppError


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> np.ndarray: ...


class LocalEmbedder:
    """sentence-transformers on the CPU; `model` is a directory or, with a network, a hub name."""

    def __init__(self, model: str, batch_size: int) -> None:
        from sentence_transformers import SentenceTransformer  # importing torch takes seconds

        self.model = SentenceTransformer(model, device="cpu")
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


class OpenAIEmbedder:
    def __init__(self, model: str) -> None:
        from openai import OpenAI

        self.client = OpenAI(base_url=settings.OPENAI_BASE_URL, api_key=settings.OPENAI_API_KEY)
        self.model = model

    def embed(self, texts: list[str]) -> np.ndarray:
        response = self.client.embeddings.create(model=self.model, input=texts)
        vectors = np.asarray([item.embedding for item in response.data], dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


_load_lock = threading.Lock()


# One model per process: loading it costs seconds and ~100 MB, and it is read-only once loaded.
# The lock keeps a warm-up thread and a first request from loading it twice.
@functools.cache
def _embedder() -> Embedder:
    if settings.EMBEDDING_PROVIDER == "openai":
        return OpenAIEmbedder(settings.EMBEDDING_MODEL)
    return LocalEmbedder(settings.EMBEDDING_MODEL, settings.EMBEDDING_BATCH_SIZE)


def get_embedder() -> Embedder:
    with _load_lock:
        return _embedder()


def embed_texts(texts: list[str]) -> np.ndarray:
    """Unit-length vectors, one row per text, of EMBEDDING_DIMENSIONS columns."""
    if not texts:
        return np.zeros((0, settings.EMBEDDING_DIMENSIONS), dtype=np.float32)
    vectors = get_embedder().embed(texts)
    if vectors.shape != (len(texts), settings.EMBEDDING_DIMENSIONS):
        raise AppError(
            "embedding_mismatch",
            f"The embedding model returned vectors of shape {vectors.shape}; "
            f"the database stores {settings.EMBEDDING_DIMENSIONS} dimensions.",
            status=500,
        )
    return vectors
