"""The embedding model on ONNX Runtime gives the vectors sentence-transformers gives.

Passages stored before the switch (or embedded by a worker without the export) are compared with
questions embedded after it, so the two must agree: same tokenizer, same truncation, same pooling.
"""

import socket
import time
from pathlib import Path
from typing import Any

import numpy as np
import openai
import pytest
from django.conf import settings

from ingestion.embeddings import ONNX_FILE, LocalEmbedder, OnnxEmbedder, OpenAIEmbedder, embed_texts

LONG = " ".join(f"word{i} of a note that runs past the model's 256-token window" for i in range(80))
TEXTS = [
    "When do the tomatoes go into the raised bed?",
    "hi",
    "",
    "Ünïcödé: café, naïve résumé — 東京 🚲",
    LONG,  # truncated the same way on both paths
    "The STS provides automatic trim.\nVerDate Sep<11>2014 16:21 Aug 05, 2020",
]


def test_the_onnx_export_that_set_up_wrote_agrees_with_sentence_transformers() -> None:
    model_dir = Path(settings.EMBEDDING_MODEL)
    assert (model_dir / ONNX_FILE).exists(), "make setup exports the model (manage.py prepare_models)"
    onnx = OnnxEmbedder(model_dir, batch_size=4).embed(TEXTS)  # two batches, sorted by length inside
    torch = LocalEmbedder(str(model_dir), batch_size=4).embed(TEXTS)
    assert onnx.shape == torch.shape == (len(TEXTS), settings.EMBEDDING_DIMENSIONS)
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)
    assert (onnx * torch).sum(axis=1).min() > 0.99999
    # Rows stay in the order of the texts: each text is nearest to its own vector.
    assert list((onnx @ torch.T).argmax(axis=1)) == list(range(len(TEXTS)))


def test_the_app_embeds_with_onnx_runtime() -> None:
    from ingestion.embeddings import get_embedder

    assert isinstance(get_embedder(), OnnxEmbedder)
    assert embed_texts([]).shape == (0, settings.EMBEDDING_DIMENSIONS)


def test_an_embedding_server_that_never_answers_fails_the_request_in_bounded_time(settings: Any) -> None:
    # A server that accepts the connection and then says nothing, as a hung one does.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        settings.OPENAI_BASE_URL = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        settings.EMBEDDING_TIMEOUT_SECONDS = 1
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            OpenAIEmbedder("some-embedding-model").embed(["When do the tomatoes go in?"])
        # Three tries of a second each, with the client's short backoff between them; not ten minutes.
        assert time.monotonic() - started < 15
