"""Audio → transcript segments anchored `{"start": s, "end": e}` (seconds), with openai-whisper.

ffprobe reads the duration and the creation_time tag; ffmpeg decodes one piece of at most
PIECE_SECONDS at a time, so hours of audio never sit in memory at once and progress moves after
each piece. Failures end in an `AppError`: `audio_unreadable`, `audio_too_long`, `empty_content`.
"""

import functools
import json
import os
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, cast

import numpy as np
from django.conf import settings

from ingestion.extract import Extracted, Progress, Segment
from secondbrain.errors import AppError

SAMPLE_RATE = 16_000  # what whisper expects
PIECE_SECONDS = 300.0
# A piece whose last segment ends this close to the piece's end may have cut its last words.
CUT_MARGIN_SECONDS = 1.0
# Whisper invents a word or two ("You", "Thank you.") on digital silence, so pieces with no 0.5 s
# frame louder than -80 dBFS are not transcribed. Only digital silence is that quiet: some FLEURS
# clips have speech at -65 dBFS, which whisper transcribes well.
SILENCE_FRAME = SAMPLE_RATE // 2
SILENCE_RMS = 10 ** (-80 / 20)
# Stretches of a piece that no segment covers are transcribed again when they last this long and
# have a frame within 30 dB of the piece's speech level (its 90th percentile frame), so that room
# noise in the pauses does not double the work.
UNHEARD_SECONDS = 3.0
UNHEARD_LEVEL = 10 ** (-30 / 20)
PROBE_TIMEOUT_SECONDS = 60
DECODE_TIMEOUT_SECONDS = 600

TRANSCRIBE_OPTIONS: dict[str, Any] = {
    "beam_size": 5,
    "best_of": 5,  # candidates when whisper falls back to sampling at a higher temperature
    "fp16": False,  # float16 is a GPU format; on the CPU whisper would only warn and use float32
    # Without the previous text as a prompt, a repetition loop or a hallucination on noise cannot
    # carry over into the next 30 s window, which matters on hour-long recordings.
    "condition_on_previous_text": False,
    "verbose": None,  # no printing, no progress bar
}

_UNREADABLE = "This file could not be read as audio; it may be damaged or in a format that is not supported."


@dataclass(frozen=True)
class Probe:
    duration: float | None
    created: datetime | None


def extract(path: Path, progress: Progress, *, piece_seconds: float = PIECE_SECONDS) -> Extracted:
    """The transcript of the audio (or video) file at `path`; `progress` is called after each piece."""
    probe = probe_audio(path)
    duration = probe.duration if probe.duration is not None else _decoded_duration(path)
    if duration <= 0:
        raise AppError("empty_content", "This recording is empty.")
    limit = getattr(settings, "MAX_AUDIO_MINUTES", 600)
    if duration > limit * 60:
        raise AppError(
            "audio_too_long",
            f"This recording lasts {duration / 60:,.0f} minutes; at most {limit:,} minutes can be transcribed.",
        )
    segments, languages = _transcribe_pieces(path, duration, piece_seconds, progress)
    if not segments:
        raise AppError("empty_content", "No speech was found in this recording.")
    return Extracted(
        segments=segments,
        metadata={"duration": round(duration, 2), "language": languages.most_common(1)[0][0]},
        occurred_at=probe.created,
    )


def _transcribe_pieces(
    path: Path, duration: float, piece_seconds: float, progress: Progress
) -> tuple[list[Segment], Counter[str]]:
    """Transcribe the file piece after piece, each at most `piece_seconds` long.

    When a piece's last segment runs up to the cut, it may have lost words there: it is dropped and
    the next piece starts where it started.
    """
    segments: list[Segment] = []
    languages: Counter[str] = Counter()  # seconds of speech per detected language
    start = 0.0
    while start < duration:
        end = min(start + piece_seconds, duration)
        found, language = _transcribe_piece(path, start, end)
        following = found.pop().anchor["start"] if _cut_short(found, start, end, duration) else end
        for segment in found:
            segments.append(_after(segments[-1] if segments else None, segment))
            languages[language] += segment.anchor["end"] - segment.anchor["start"]
        start = following
        progress(min(start / duration, 1.0))
    return segments, languages


def _cut_short(found: list[Segment], start: float, end: float, duration: float) -> bool:
    """Whether the piece's last segment runs into the cut, so may have lost words, and can be redone.

    Only a segment that starts past the piece's middle is redone, so that every piece moves on.
    """
    if end >= duration or not found:
        return False
    last = found[-1].anchor
    return bool(last["end"] >= end - CUT_MARGIN_SECONDS and last["start"] >= (start + end) / 2)


def _transcribe_piece(path: Path, start: float, end: float) -> tuple[list[Segment], str]:
    samples = _decode(path, start, end - start)
    if _is_silent(samples):
        return [], ""
    result = _transcribe(samples)
    spans = _spans(result)
    # Whisper skips the rest of its 30 s window when it decides the speech ended there, which it
    # sometimes does after a pause: a second pass over just those stretches recovers them. A piece
    # where it heard no speech at all (music, a tone) would only be decoded again, as slowly: each
    # pass over such sound runs every temperature fallback (~28 s for a 3 s tone on 2 cores).
    if spans and (gaps := _unheard(samples, spans)):
        spans = sorted(spans + _spans(_transcribe(samples, clip_timestamps=[t for gap in gaps for t in gap])))
    found = [
        Segment(text=text, anchor={"start": round(min(start + s, end), 2), "end": round(min(start + e, end), 2)})
        for s, e, text in spans
    ]
    return found, result["language"]


def _spans(result: dict[str, Any]) -> list[tuple[float, float, str]]:
    return [(raw["start"], raw["end"], text) for raw in result["segments"] if (text := raw["text"].strip())]


def _unheard(samples: np.ndarray, spans: list[tuple[float, float, str]]) -> list[tuple[float, float]]:
    """Stretches of at least UNHEARD_SECONDS that no segment covers but that are about as loud as speech."""
    levels = _frame_levels(samples)
    loud = float(np.percentile(levels, 90)) * UNHEARD_LEVEL if levels.size else np.inf
    gaps: list[tuple[float, float]] = []
    cursor = 0.0
    for span_start, span_end, _ in [*spans, (samples.size / SAMPLE_RATE, np.inf, "")]:
        if span_start - cursor >= UNHEARD_SECONDS:
            frames = levels[int(cursor * SAMPLE_RATE) // SILENCE_FRAME : int(span_start * SAMPLE_RATE) // SILENCE_FRAME]
            if frames.size and frames.max() >= max(loud, SILENCE_RMS):
                gaps.append((round(cursor, 2), round(span_start, 2)))
        cursor = max(cursor, span_end)
    return gaps


def _frame_levels(samples: np.ndarray) -> np.ndarray:
    """The RMS level of each 0.5 s frame."""
    frames = samples[: samples.size // SILENCE_FRAME * SILENCE_FRAME].reshape(-1, SILENCE_FRAME)
    return np.sqrt(np.mean(frames.astype(np.float64) ** 2, axis=1))


def _after(previous: Segment | None, segment: Segment) -> Segment:
    """The segment with its times moved, if need be, so they never go back before the previous one's."""
    if previous is None:
        return segment
    start = max(segment.anchor["start"], previous.anchor["end"])
    end = max(segment.anchor["end"], start)
    return Segment(text=segment.text, anchor={"start": start, "end": end})


def _is_silent(samples: np.ndarray) -> bool:
    levels = _frame_levels(samples)
    return levels.size == 0 or bool(levels.max() < SILENCE_RMS)


def probe_audio(path: Path) -> Probe:
    """Duration (None when the container does not say) and creation_time of a file with an audio stream."""
    command = [
        "ffprobe", "-v", "error", "-of", "json",
        "-show_entries", "format=duration:format_tags=creation_time:stream=codec_type",
        str(path),
    ]  # fmt: skip
    completed = _run(command, PROBE_TIMEOUT_SECONDS)
    try:
        info = json.loads(completed.stdout)
    except json.JSONDecodeError:
        raise AppError("audio_unreadable", _UNREADABLE) from None
    if completed.returncode != 0 or not any(s.get("codec_type") == "audio" for s in info.get("streams", [])):
        raise AppError("audio_unreadable", _UNREADABLE)
    fmt = info.get("format", {})
    try:
        duration: float | None = float(fmt["duration"])
    except (KeyError, ValueError):
        duration = None
    tags = {key.lower(): value for key, value in fmt.get("tags", {}).items()}
    return Probe(duration=duration, created=_parse_time(tags.get("creation_time")))


def _parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    # ffmpeg and recorders write creation_time in UTC; a bare one says nothing else.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _decode(path: Path, start: float, length: float) -> np.ndarray:
    """Mono float32 samples at 16 kHz of [start, start + length) seconds of the file."""
    command = [
        "ffmpeg", "-nostdin", "-v", "error", "-threads", "0",
        "-ss", f"{start:.3f}", "-t", f"{length:.3f}", "-i", str(path),
        "-vn", "-ac", "1", "-ar", str(SAMPLE_RATE), "-f", "f32le", "-",
    ]  # fmt: skip
    completed = _run(command, DECODE_TIMEOUT_SECONDS)
    if completed.returncode != 0:
        raise AppError("audio_unreadable", _UNREADABLE)
    # A copy: torch wants a writable array.
    return np.frombuffer(completed.stdout, dtype=np.float32).copy()


def _decoded_duration(path: Path) -> float:
    """Seconds of audio, counted by decoding it all, for containers that do not state a duration."""
    command = ["ffmpeg", "-nostdin", "-v", "error", "-i", str(path), "-vn", "-ac", "1", "-ar", str(SAMPLE_RATE)]
    total = 0  # one byte per sample
    with subprocess.Popen([*command, "-f", "u8", "-"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as process:
        stdout = cast(IO[bytes], process.stdout)
        while block := stdout.read(2**20):
            total += len(block)
    if process.returncode != 0:
        raise AppError("audio_unreadable", _UNREADABLE)
    return total / SAMPLE_RATE


def _run(command: list[str], timeout: int) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise RuntimeError(f"{command[0]} is not installed; audio needs Debian's ffmpeg package") from None
    except subprocess.TimeoutExpired:
        raise AppError("audio_unreadable", _UNREADABLE) from None


def model_source() -> str:
    """TRANSCRIBE_MODEL as whisper.load_model takes it: a checkpoint file, or a model name.

    A name whose converted checkpoint `manage.py prepare_models` made (MODELS_DIR/whisper-<name>.pt)
    means that file; any other name is downloaded by whisper into MODELS_DIR.
    """
    name = settings.TRANSCRIBE_MODEL
    prepared = Path(settings.MODELS_DIR) / f"whisper-{name}.pt"
    if os.sep not in name and prepared.is_file():
        return str(prepared)
    return name


_load_lock = threading.Lock()
# Whisper hooks its key/value cache into the shared model for each decoding: two transcriptions
# at once in one process would mix their caches, so they take turns (the CPU is the limit anyway).
_transcribe_lock = threading.Lock()


# One model per process: loading it costs seconds and ~300 MB, and it is read-only once loaded.
@functools.cache
def _model(source: str) -> Any:
    import torch
    import whisper  # importing torch and numba takes seconds

    # Every CPU this process may run on (sched_getaffinity honours a container's cpuset); a worker
    # running several transcriptions side by side should set TRANSCRIBE_THREADS to share them.
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    torch.set_num_threads(getattr(settings, "TRANSCRIBE_THREADS", 0) or cpus)
    return whisper.load_model(source, device="cpu", download_root=str(settings.MODELS_DIR))


def get_model() -> Any:
    with _load_lock:
        return _model(model_source())


def _transcribe(samples: np.ndarray, **options: Any) -> dict[str, Any]:
    model = get_model()
    with _transcribe_lock:
        result: dict[str, Any] = model.transcribe(samples, **TRANSCRIBE_OPTIONS, **options)
    return result
