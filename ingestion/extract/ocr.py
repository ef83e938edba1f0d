"""Text recognition: Debian's tesseract through pytesseract, for scanned PDF pages and for images.

The one place that knows which languages to read, how tesseract is run (one thread, a timeout) and
what its failures mean: a page or image it cannot read gives "", never an exception.
"""

import logging
import os
from pathlib import Path

import pytesseract
from django.conf import settings
from PIL import Image

logger = logging.getLogger(__name__)

OCR_TIMEOUT_SECONDS = 120


def languages() -> str | None:
    """Tesseract's language argument ("eng+deu"): the wanted ones (OCR_LANGUAGES) that are installed,
    else English; None when tesseract is missing."""
    try:
        installed = set(pytesseract.get_languages(config=""))
    except (pytesseract.TesseractNotFoundError, pytesseract.TesseractError, OSError):
        return None
    wanted: str = getattr(settings, "OCR_LANGUAGES", "eng+deu")
    chosen = [language for language in wanted.split("+") if language in installed]
    return "+".join(chosen) or ("eng" if "eng" in installed else None)


def read(image: Path | Image.Image, *, languages: str, name: str) -> str:
    """The text tesseract reads in `image` (a file or a Pillow image), as it gives it; "" when it
    fails. `name` says what was read, for the log."""
    # Tesseract's OpenMP threads slow it down (0.6 s a page alone, 1.1 s with 2 threads on 2 cores),
    # and workers already run in parallel; an operator's own setting wins.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    try:
        text: str = pytesseract.image_to_string(
            str(image) if isinstance(image, Path) else image, lang=languages, timeout=OCR_TIMEOUT_SECONDS
        )
    except (OSError, RuntimeError, pytesseract.TesseractError) as exc:
        # RuntimeError is pytesseract's timeout; what cannot be read is skipped, not fatal.
        logger.warning("OCR of %s failed: %r", name, exc)
        return ""
    return text
