"""An image (PNG, JPEG, HEIC/HEIF) → the text tesseract reads in it, and when a photo was taken.

The image is turned upright as its camera recorded (EXIF orientation), made grey and brought to a
size tesseract reads well, then read by `ocr.py`, as scanned PDF pages are. What it finds is one
Segment anchored `{"heading": ["Text in the image"]}`; an image without words gives no segment (the
pipeline decides whether its caption is enough). Failures: `image_unreadable`, `image_too_large`,
`unsupported_type` (HEIC where pillow-heif is missing).
"""

import io
import logging
import re
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path

from django.conf import settings
from PIL import Image, ImageOps, UnidentifiedImageError

from ingestion.extract import Extracted, Progress, Segment, ocr
from ingestion.extract.pdf import clean_text
from secondbrain.errors import AppError

logger = logging.getLogger(__name__)

TEXT_HEADING = "Text in the image"
# The long side tesseract gets: a page photographed or scanned at about 300 dpi. A larger image is
# scaled down (bounding memory and time), a small one (a screenshot) up, where its letters are too
# small for tesseract to read.
OCR_LONG_SIDE_PX = 3508
OCR_MIN_LONG_SIDE_PX = 2000
# EXIF tags: the Exif sub-directory, when the photo was taken, and the offset of that time.
_EXIF_IFD, _DATE_TAKEN, _OFFSET_TAKEN = 0x8769, 36867, 36881
# What OCR makes of a photo without text ("|", "~ =", "ee"): a run of letters this long is a word.
_WORD = re.compile(r"[^\W\d_]{3,}")
MIN_WORDS = 2


def extract(path: Path, progress: Progress, *, zone: tzinfo) -> Extracted:
    """The text in the image at `path`; `zone` places a photo's time when its camera wrote none."""
    with _open(path) as image:
        width, height = image.size
        taken = _taken_at(image, zone)
        prepared = _for_ocr(image)
    progress(0.2)
    languages = ocr.languages()
    raw = ocr.read(prepared, languages=languages, name=f"image {path.name}") if languages else ""
    progress(1.0)
    text = clean_text(raw)
    metadata: dict[str, object] = {"width": width, "height": height, "ocr": languages is not None}
    if len(_WORD.findall(text)) < MIN_WORDS:
        return Extracted(segments=[], metadata=metadata, occurred_at=taken)
    return Extracted(
        segments=[Segment(text=text, anchor={"heading": [TEXT_HEADING]})], metadata=metadata, occurred_at=taken
    )


def _open(path: Path) -> Image.Image:
    """The image, its header read and its size checked before any pixel is decoded."""
    _heif_register()
    try:
        image = Image.open(path)
    except UnidentifiedImageError:
        raise AppError("image_unreadable", "This image is damaged or not an image Second Brain can read.") from None
    except Image.DecompressionBombError:
        raise _too_large() from None
    if image.width * image.height > settings.IMAGE_MAX_PIXELS:
        image.close()
        raise _too_large()
    return image


def _too_large() -> AppError:
    limit = settings.IMAGE_MAX_PIXELS / 1e6
    return AppError("image_too_large", f"This image has more than {limit:.0f} million pixels; scale it down first.")


def _heif_register() -> None:
    """Teach Pillow HEIC/HEIF (iPhone photos) when pillow-heif is installed; registering twice is harmless."""
    try:
        from pillow_heif import register_heif_opener
    except ImportError:
        return
    register_heif_opener()


def _for_ocr(image: Image.Image) -> Image.Image:
    """Upright, grey, at a size tesseract reads well; a damaged file fails as `image_unreadable`."""
    try:
        if image.format == "JPEG":
            # Decodes a large JPEG at a fraction of its size at once, instead of all of it.
            image.draft("L", (OCR_LONG_SIDE_PX, OCR_LONG_SIDE_PX))
        upright = ImageOps.exif_transpose(image) or image
        grey = upright.convert("L")
    except (OSError, ValueError, SyntaxError) as exc:  # Pillow's errors for truncated or broken data
        logger.warning("image could not be decoded: %r", exc)
        raise AppError(
            "image_unreadable", "This image is damaged or incomplete and cannot be read; try exporting it again."
        ) from None
    long_side = max(grey.size)
    if long_side > OCR_LONG_SIDE_PX or long_side < OCR_MIN_LONG_SIDE_PX:
        scale = (OCR_LONG_SIDE_PX if long_side > OCR_LONG_SIDE_PX else OCR_MIN_LONG_SIDE_PX) / long_side
        grey = grey.resize(
            (max(1, round(grey.width * scale)), max(1, round(grey.height * scale))), Image.Resampling.LANCZOS
        )
    return grey


def _taken_at(image: Image.Image, zone: tzinfo) -> datetime | None:
    """When a photo was taken (EXIF DateTimeOriginal, with its offset when the camera wrote one), or None."""
    try:
        exif = image.getexif().get_ifd(_EXIF_IFD)
        raw, offset = exif.get(_DATE_TAKEN), exif.get(_OFFSET_TAKEN)
        moment = datetime.strptime(str(raw).strip("\x00 "), "%Y:%m:%d %H:%M:%S") if raw else None
    except (ValueError, TypeError, OSError, SyntaxError):
        return None
    if moment is None or moment.year < 1900 or moment > datetime.now() + timedelta(days=1):
        return None  # a camera whose clock was never set
    match = re.fullmatch(r"([+-])(\d{2}):(\d{2})", str(offset or "").strip("\x00 "))
    if match:
        delta = timedelta(hours=int(match[2]), minutes=int(match[3]))
        return moment.replace(tzinfo=timezone(-delta if match[1] == "-" else delta))
    return moment.replace(tzinfo=zone)


PREVIEW_LONG_SIDE_PX = 2048


def preview_jpeg(path: Path) -> bytes:
    """The image as a JPEG of at most PREVIEW_LONG_SIDE_PX, upright: for browsers, which show no HEIC."""
    with _open(path) as image:
        upright = ImageOps.exif_transpose(image) or image
        upright.thumbnail((PREVIEW_LONG_SIDE_PX, PREVIEW_LONG_SIDE_PX))
        out = io.BytesIO()
        upright.convert("RGB").save(out, "JPEG", quality=85)
    return out.getvalue()
