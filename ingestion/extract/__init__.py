"""Extraction: a stored file → text segments, each with its anchor in the file.

One module per input kind (`pdf.py`, `audio.py`, `calendar.py`, `image.py`, `web.py` — a web page by
its address rather than a stored file); each exposes an `extract(…) -> Extracted` and raises
`secondbrain.errors.AppError` with a specific code (`pdf_encrypted`, `pdf_corrupt`, `pdf_no_text`,
`audio_unreadable`, `image_unreadable`, `url_unreachable`, `empty_content`, …) and a sentence a person
understands. `ocr.py` reads text in pictures for the PDF and image extractors.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

# Called with the fraction of the extraction done so far, 0.0-1.0 (e.g. after each page).
Progress = Callable[[float], None]


@dataclass(frozen=True)
class Segment:
    """A run of text and where it sits: `{"page": 3}` (1-based) or `{"start": 1.5, "end": 4.2}` (seconds)."""

    text: str
    anchor: dict[str, Any]


@dataclass
class Extracted:
    segments: list[Segment]
    # Facts about the file for Source.metadata: {"pages": 117}, {"duration": 11.0, "language": "en"}, …
    metadata: dict[str, Any] = field(default_factory=dict)
    # When the content happened, if the file says (PDF creation date, audio creation_time tag, a photo's
    # EXIF date, a web page's date).
    occurred_at: datetime | None = None
    # The title the content gives itself (a web page's), taken unless the person typed one.
    title: str | None = None
    # Text kept on the source itself (a web page's readable text: its passages' origin and the export's).
    text: str | None = None
