"""Text → vectors, with the local sentence-transformers model or an OpenAI-compatible endpoint.

The local model runs on ONNX Runtime when its directory holds the ONNX export that `prepare_models`
writes (`onnx/sentence_embedding.onnx`: the whole sentence-transformers pipeline — transformer, pooling,
normalisation — in one graph, so its vectors are the model's own): a short question embeds in ~4 ms
instead of ~13 ms through torch, and a web process never imports torch. A model by hub name, or a
directory without the export, runs through sentence-transformers itself.
"""

import functools
import json
import threading
import warnings
from pathlib import Path
from typing import Protocol

import numpy as np
from django.conf import settings

from secondbrain.errors import AppError


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> np.ndarray: ...


# Beside the model's own files: the graph, and the input length it was read with.
ONNX_FILE = Path("onnx") / "sentence_embedding.onnx"


class OnnxEmbedder:
    """The exported sentence-transformers pipeline on ONNX Runtime, fed by the model's own tokenizer."""

    def __init__(self, model_dir: Path, batch_size: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        max_length = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        # Idle threads sleep rather than spin: the web process shares two cores with the database.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(
            str(model_dir / ONNX_FILE), options, providers=["CPUExecutionProvider"]
        )
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        # Batches of similar length, as sentence-transformers does, so short texts are not padded long.
        order = np.argsort([-len(text) for text in texts], kind="stable")
        batches = []
        for start in range(0, len(texts), self.batch_size):
            encodings = self.tokenizer.encode_batch([texts[i] for i in order[start : start + self.batch_size]])
            ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
            mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
            batches.append(self.session.run(None, {"input_ids": ids, "attention_mask": mask})[0])
        if not batches:
            return np.zeros((0, settings.EMBEDDING_DIMENSIONS), dtype=np.float32)
        vectors = np.empty_like(sorted_vectors := np.concatenate(batches))
        vectors[order] = sorted_vectors
        return vectors


def export_onnx(model_dir: Path) -> Path:
    """Write `model_dir`'s sentence-transformers pipeline as one ONNX graph (ids, mask → unit vectors)."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu").eval()

    class Pipeline(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model  # a submodule, so that its weights are exported as weights

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            features = {"input_ids": input_ids, "attention_mask": attention_mask}
            features["token_type_ids"] = torch.zeros_like(input_ids)
            vectors = self.model(features)["sentence_embedding"]
            return torch.nn.functional.normalize(vectors, dim=1)

    target = model_dir / ONNX_FILE
    target.parent.mkdir(exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    example = model.preprocess(["An example sentence", "and another, longer one to pad against"])
    axes = {0: "batch", 1: "length"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes it fixes: none changes the result
        torch.onnx.export(
            Pipeline(),
            (example["input_ids"], example["attention_mask"]),
            str(partial),
            input_names=["input_ids", "attention_mask"],
            output_names=["sentence_embedding"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "sentence_embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,  # the TorchScript exporter: the dynamo one needs onnxscript
        )
    partial.replace(target)
    return target


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

        # Bounded: the client's own default (10 minutes, retried twice) held a worker for half an hour
        # on a server that accepted the request and never answered.
        self.client = OpenAI(
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            timeout=float(settings.EMBEDDING_TIMEOUT_SECONDS),
        )
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
    if settings.EMBEDDING_ONNX and (Path(settings.EMBEDDING_MODEL) / ONNX_FILE).exists():
        return OnnxEmbedder(Path(settings.EMBEDDING_MODEL), settings.EMBEDDING_BATCH_SIZE)
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
