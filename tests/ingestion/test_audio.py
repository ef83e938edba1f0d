"""Audio extraction with the real whisper base checkpoint (`manage.py prepare_models` makes it).

The clips are jfk.flac and ten FLEURS en_us test recordings (tests/data/audio). Measured word error
rates, after lower-casing and dropping punctuation (so "25" ≠ "twenty five" counts as an error):
jfk 0, FLEURS 0-0.22 per clip, 0.07 overall. Here jfk and two FLEURS clips are transcribed one by
one (each costs a whole 30 s window of the model, however short), three others as one long recording;
`make bench` (bench/ingestion.py) measures all eleven.
"""

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ingestion.extract import Extracted, audio
from secondbrain.errors import AppError
from tests.wer import edit_distance, wer, words

AUDIO = Path(__file__).resolve().parent.parent / "data" / "audio"
CLIPS_BY_FILE = {clip["file"]: clip for clip in json.loads((AUDIO / "transcripts.json").read_text())}
# A slow speaker (jfk), a fast one (21 words in 8.8 s) and a short clip; the long recording below takes three others.
CLIPS = [CLIPS_BY_FILE[name] for name in ("jfk.flac", *(f"fleurs_en/fleurs-en-00{n}.ogg" for n in (1, 3)))]
MAX_CLIP_WER = 0.3
MAX_OVERALL_WER = 0.12
# The long recording: four clips, loudness-normalized (FLEURS clips are 40 dB quieter than jfk) and
# one second apart, transcribed in 20 s pieces. Distinct sentences, not jfk.flac repeated: whisper
# takes repeated text for a decoding loop and falls back to slow sampling.
LONG_CLIPS = ["jfk.flac", "fleurs_en/fleurs-en-002.ogg", "fleurs_en/fleurs-en-009.ogg", "fleurs_en/fleurs-en-005.ogg"]
LONG_GAP_SECONDS = 1.0
PIECE_SECONDS = 20.0
CREATED = datetime(2024, 3, 5, 10, 20, 30, tzinfo=UTC)


def ffmpeg(*arguments: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *arguments], check=True)


@pytest.fixture(scope="module")
def transcripts() -> dict[str, tuple[Extracted, list[float]]]:
    """Every clip transcribed once, with the progress values reported."""
    results = {}
    for clip in CLIPS:
        calls: list[float] = []
        results[clip["file"]] = (audio.extract(AUDIO / clip["file"], calls.append), calls)
    return results


@pytest.mark.parametrize("clip", CLIPS, ids=[clip["file"] for clip in CLIPS])
def test_it_transcribes_each_clip(clip: dict[str, Any], transcripts: dict[str, tuple[Extracted, list[float]]]) -> None:
    extracted, calls = transcripts[clip["file"]]
    text = " ".join(segment.text for segment in extracted.segments)
    assert wer(clip["reference"], text) <= MAX_CLIP_WER, text
    assert extracted.metadata == {"duration": pytest.approx(clip["duration_s"], abs=0.05), "language": "en"}
    assert calls[-1] == 1.0
    assert_in_order(extracted, clip["duration_s"])


def test_its_word_error_rate_over_all_clips_is_low(transcripts: dict[str, tuple[Extracted, list[float]]]) -> None:
    errors = reference_words = 0
    for clip in CLIPS:
        text = " ".join(segment.text for segment in transcripts[clip["file"]][0].segments)
        errors += edit_distance(words(clip["reference"]), words(text))
        reference_words += len(words(clip["reference"]))
    assert errors / reference_words <= MAX_OVERALL_WER


def test_it_hears_jfk_word_for_word(transcripts: dict[str, tuple[Extracted, list[float]]]) -> None:
    extracted, _ = transcripts["jfk.flac"]
    assert words(" ".join(segment.text for segment in extracted.segments)) == words(CLIPS[0]["reference"])
    assert extracted.occurred_at is None


@pytest.fixture(scope="module")
def long_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("audio") / "long.m4a"
    inputs = [argument for clip in LONG_CLIPS for argument in ("-i", str(AUDIO / clip))]
    normalize = "loudnorm=I=-20,aresample=16000,aformat=channel_layouts=mono"
    gap = f",apad=pad_dur={LONG_GAP_SECONDS}"
    filters = [f"[{n}:a]{normalize}{gap if n < len(LONG_CLIPS) - 1 else ''}[a{n}];" for n in range(len(LONG_CLIPS))]
    concat = "".join(f"[a{n}]" for n in range(len(LONG_CLIPS))) + f"concat=n={len(LONG_CLIPS)}:v=0:a=1"
    ffmpeg(
        *inputs,
        "-filter_complex",
        "".join(filters) + concat,
        "-metadata",
        f"creation_time={CREATED.isoformat()}",
        str(path),
    )
    return path


def test_it_transcribes_a_long_recording_piece_by_piece(long_recording: Path) -> None:
    calls: list[float] = []
    extracted = audio.extract(long_recording, calls.append, piece_seconds=PIECE_SECONDS)

    starts = clip_starts()
    duration = starts[-1] + CLIPS_BY_FILE[LONG_CLIPS[-1]]["duration_s"]
    assert extracted.metadata["duration"] == pytest.approx(duration, abs=0.1)
    assert len(calls) >= 3
    assert calls == sorted(calls) and calls[-1] == 1.0
    assert_in_order(extracted, duration)
    reference = " ".join(CLIPS_BY_FILE[clip]["reference"] for clip in LONG_CLIPS)
    assert wer(reference, " ".join(segment.text for segment in extracted.segments)) <= MAX_OVERALL_WER
    # The first words of the last two clips, both past the first piece, where they were said.
    for clip, first_words in [(2, "as light pollution"), (3, "the hospital")]:
        segment = next(s for s in extracted.segments if " ".join(words(s.text)).startswith(first_words))
        assert segment.anchor["start"] == pytest.approx(starts[clip], abs=2.0)
    assert extracted.occurred_at == CREATED


def clip_starts() -> list[float]:
    starts = [0.0]
    for clip in LONG_CLIPS[:-1]:
        starts.append(starts[-1] + CLIPS_BY_FILE[clip]["duration_s"] + LONG_GAP_SECONDS)
    return starts


def assert_in_order(extracted: Extracted, duration: float) -> None:
    previous_end = 0.0
    for segment in extracted.segments:
        start, end = segment.anchor["start"], segment.anchor["end"]
        assert previous_end <= start <= end <= duration + 0.01
        assert start == round(start, 2) and end == round(end, 2)
        previous_end = end


def test_it_refuses_a_file_that_is_not_audio(tmp_path: Path) -> None:
    path = tmp_path / "song.mp3"
    path.write_text("These are meeting notes, not a song.\n" * 20)

    with pytest.raises(AppError) as caught:
        audio.extract(path, lambda done: None)

    assert caught.value.code == "audio_unreadable"


def test_it_finds_no_speech_in_silence(tmp_path: Path) -> None:
    path = tmp_path / "silence.wav"
    ffmpeg("-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "3", str(path))
    calls: list[float] = []

    with pytest.raises(AppError) as caught:
        audio.extract(path, calls.append)

    assert caught.value.code == "empty_content"
    assert calls == [1.0]


def test_it_refuses_a_recording_over_the_limit_before_transcribing(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.MAX_AUDIO_MINUTES = 0.1  # 6 s; jfk.flac lasts 11 s
    monkeypatch.setattr(audio, "get_model", lambda: pytest.fail("the model was loaded"))

    with pytest.raises(AppError) as caught:
        audio.extract(AUDIO / "jfk.flac", lambda done: None)

    assert caught.value.code == "audio_too_long"


def test_it_transcribes_again_what_whisper_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tone.wav"
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:sample_rate=16000", "-t", "10", str(path))
    calls: list[dict[str, Any]] = []

    def transcribe(samples: Any, **options: Any) -> dict[str, Any]:
        calls.append(options)
        start, end = (0.0, 3.0) if not options else (3.2, 9.5)
        return {"language": "en", "segments": [{"start": start, "end": end, "text": f" from {start}"}]}

    monkeypatch.setattr(audio, "_transcribe", transcribe)

    extracted = audio.extract(path, lambda done: None)

    assert calls == [{}, {"clip_timestamps": [3.0, 10.0]}]
    assert [segment.anchor for segment in extracted.segments] == [
        {"start": 0.0, "end": 3.0},
        {"start": 3.2, "end": 9.5},
    ]


def test_a_piece_without_any_speech_is_not_transcribed_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tone.wav"
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:sample_rate=16000", "-t", "10", str(path))
    calls: list[dict[str, Any]] = []

    def transcribe(samples: Any, **options: Any) -> dict[str, Any]:
        calls.append(options)
        return {"language": "en", "segments": []}

    monkeypatch.setattr(audio, "_transcribe", transcribe)

    with pytest.raises(AppError) as caught:
        audio.extract(path, lambda done: None)

    assert caught.value.code == "empty_content"
    assert calls == [{}]  # the loud tone is no reason to decode all of it again


def test_it_reads_the_model_setting(settings: Any, tmp_path: Path) -> None:
    settings.MODELS_DIR = tmp_path
    settings.TRANSCRIBE_MODEL = "base"
    assert audio.model_source() == "base"  # not prepared: whisper downloads it by name

    (tmp_path / "whisper-base.pt").write_bytes(b"")
    assert audio.model_source() == str(tmp_path / "whisper-base.pt")

    settings.TRANSCRIBE_MODEL = str(tmp_path / "mine.pt")
    assert audio.model_source() == str(tmp_path / "mine.pt")


def test_it_redoes_a_segment_cut_at_the_end_of_a_piece(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tone.wav"
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:sample_rate=16000", "-t", "16", str(path))
    pieces: list[float] = []

    def transcribe(samples: Any, **options: Any) -> dict[str, Any]:
        pieces.append(round(samples.size / 16000, 2))
        spans = [(0.0, 5.5), (5.5, 10.0)] if len(pieces) == 1 else [(0.0, samples.size / 16000)]
        return {"language": "en", "segments": [{"start": s, "end": e, "text": " words"} for s, e in spans]}

    monkeypatch.setattr(audio, "_transcribe", transcribe)
    calls: list[float] = []

    extracted = audio.extract(path, calls.append, piece_seconds=10)

    assert pieces == [10.0, 10.0, 0.5]  # 0-10 s, then again from 5.5 s, where the cut segment began
    assert [segment.anchor for segment in extracted.segments] == [
        {"start": 0.0, "end": 5.5},
        {"start": 5.5, "end": 15.5},
        {"start": 15.5, "end": 16.0},
    ]
    assert calls == [5.5 / 16, 15.5 / 16, 1.0]
