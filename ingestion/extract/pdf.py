"""PDF → one Segment per page that has text, anchored `{"page": n}` (1-based).

pypdf reads the text layer page by page. A page with no text but with images is a scan: it is
rendered with poppler's `pdftoppm` and read by tesseract (`ocr.py`). Every failure ends
in an `AppError` with a specific code: `pdf_encrypted`, `pdf_corrupt`, `pdf_no_text`,
`pdf_too_many_pages`, `pdf_too_complex`, `empty_content`.
"""

import logging
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import unicodedata
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from pypdf import PageObject, PasswordType, PdfReader
from pypdf.errors import DependencyError
from pypdf.generic import NameObject

from ingestion.extract import Extracted, Progress, Segment, ocr
from secondbrain.errors import AppError

logger = logging.getLogger(__name__)

# The long side of a page rendered for OCR: A4 at 300 dpi, where tesseract reads body text well.
# Scaling every page to it (rather than a fixed dpi) bounds memory on pages with absurd sizes.
OCR_LONG_SIDE_PX = 3508
RENDER_TIMEOUT_SECONDS = 60
MAX_INFO_CHARS = 500
FURNITURE_EDGE_LINES = 2
FURNITURE_MIN_PAGES = 3
LETTERSPACED_MIN_GLYPHS = 6
LETTERSPACED_WORD_GAP = 100  # thousandths of an em beyond the tracking

# These mean the worker itself is in trouble, not the file: they must reach the task runner.
_NOT_THE_FILES_FAULT = (MemoryError, SoftTimeLimitExceeded, DependencyError)

_CORRUPT = "This PDF is damaged or incomplete and cannot be read; try exporting or downloading it again."
_NOT_A_PDF = "This file is not a PDF (it does not start with a PDF header)."


def extract(path: Path, progress: Progress) -> Extracted:
    """Text of every page of the PDF at `path`; `progress` is called after each page."""
    reader = _open(path)
    total = _page_count(reader)
    languages = _ocr_languages()
    # pypdf's token limits bound one page to seconds, but thousands of pages may share one costly
    # content stream (or one image to OCR): a tiny file could keep a worker busy for a day.
    deadline = time.monotonic() + getattr(settings, "PDF_MAX_SECONDS", 1800)
    segments: list[Segment] = []
    ocr_pages: list[int] = []
    unreadable: list[int] = []
    scans_without_ocr = 0
    for number in range(1, total + 1):
        if time.monotonic() > deadline:
            raise AppError(
                "pdf_too_complex", "Reading this PDF took too long; it is too large or too complex to process."
            )
        try:
            page = reader.pages[number - 1]
            text = clean_text(page.extract_text(visitor_operand_before=without_letterspacing))
            if not text and _has_images(page):
                if languages is None:
                    scans_without_ocr += 1
                else:
                    text = _ocr_page(path, number, languages)
                    ocr_pages += [number] if text else []
        except _NOT_THE_FILES_FAULT:
            raise
        except Exception as exc:  # noqa: BLE001 - pypdf raises anything on hostile input; one bad page is not the file
            logger.warning("PDF %s: page %s is unreadable: %r", path.name, number, exc)
            unreadable.append(number)
            text = ""
        if text:
            segments.append(Segment(text=text, anchor={"page": number}))
        progress(number / total)
    if not segments:
        raise _nothing_found(unreadable=bool(unreadable), scans_without_ocr=scans_without_ocr)
    segments = without_page_furniture(segments)
    metadata, occurred_at = _document_info(reader)
    metadata = {"pages": total, **metadata}
    if ocr_pages:
        metadata["ocr_pages"] = ocr_pages
    if unreadable:
        metadata["unreadable_pages"] = unreadable
    return Extracted(segments=segments, metadata=metadata, occurred_at=occurred_at)


def without_letterspacing(operator: bytes, operands: list[Any], *_: Any) -> None:
    """Before pypdf reads a TJ operator: measure its word gaps from the line's letterspacing.

    A TJ array places glyphs with offsets in thousandths of an em, and pypdf takes an offset wider
    than half a space for a word gap. A letterspaced line sets its glyphs one by one, each apart from
    the next by the same offset (its tracking, -84 on the arXiv page), so a little kerning on top of
    it ("p", -111, "erform") passes half a space and splits the word: "to p erform HPO". Such an
    array's offsets are taken relative to its tracking, their median, and the tracking taken out is
    given back as one offset at the array's end, so the line keeps its width, by which pypdf places
    what follows it. Only arrays of single glyphs nearly all apart that also hold a gap between words
    several times wider than the tracking are changed: a row of spaced-out figures, a dotted leader
    or a line of short words is left as it is.
    """
    if operator != b"TJ" or not operands or not isinstance(operands[0], list):
        return
    items = operands[0]
    glyphs = [item for item in items if isinstance(item, (str, bytes)) and not isinstance(item, NameObject)]
    offsets = [float(item) for item in items if isinstance(item, (int, float))]
    if len(glyphs) < LETTERSPACED_MIN_GLYPHS or len(offsets) < 0.8 * (len(glyphs) - 1):
        return
    # pypdf hands over undecoded bytes: one glyph is one byte, or two in a CID font.
    if sum(len(glyph) <= 2 for glyph in glyphs) < 0.8 * len(glyphs):
        return
    tracking = statistics.median(offsets)
    widest = tracking - min(offsets)
    # Short words set normally ("w", "en", "n", -328, "es") have word gaps for their median.
    if abs(tracking) < 1 or widest < LETTERSPACED_WORD_GAP or abs(tracking) > widest / 3:
        return
    items[:] = [float(item) - tracking if isinstance(item, (int, float)) else item for item in items]
    items.append(tracking * len(offsets))


def without_page_furniture(pages: list[Segment]) -> list[Segment]:
    """The pages without their running heads, footers, page numbers and stamps.

    Furniture is a line among the first or last `FURNITURE_EDGE_LINES` of a page that recurs there,
    its digits aside ("Page 2 of 5", "Frm 00012") and the numbers at either end of it set aside too
    ("47902 Federal Register ..." on one page, "Federal Register ... 47903" on the next), on at least
    half the pages (and on 3 or more): it tells where a page is, not what the document says, and as a
    passage of its own it came back as the closest match to questions it has nothing to do with.
    """
    if len(pages) < FURNITURE_MIN_PAGES:
        return pages
    seen: Counter[str] = Counter()
    for page in pages:
        seen.update({_furniture_key(line) for line in _edge_lines(page.text)})
    needed = max(FURNITURE_MIN_PAGES, len(pages) / 2)
    furniture = {key for key, count in seen.items() if count >= needed and key}
    if not furniture:
        return pages
    cleaned = []
    for page in pages:
        lines = page.text.split("\n")
        edges = {index for index in _edge_indexes(lines)}
        kept = [line for index, line in enumerate(lines) if index not in edges or _furniture_key(line) not in furniture]
        text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
        if text:
            cleaned.append(Segment(text=text, anchor=page.anchor))
    return cleaned or pages


def _edge_indexes(lines: list[str]) -> list[int]:
    filled = [index for index, line in enumerate(lines) if line.strip()]
    return filled[:FURNITURE_EDGE_LINES] + filled[-FURNITURE_EDGE_LINES:]


def _edge_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [lines[index] for index in _edge_indexes(lines)]


def _furniture_key(line: str) -> str:
    """The line in lower case with every number as "#", without the words that hold no letter at its
    two ends: books, journals and the Federal Register print a running head's page number on the
    outer side, before the head on even pages and after it on odd ones. A line of no letters at
    all (a bare page number, "- 12 -") is kept whole."""
    words = re.sub(r"\d+", "#", line.lower()).split()
    lettered = [index for index, word in enumerate(words) if any(char.isalpha() for char in word)]
    if lettered:
        words = words[lettered[0] : lettered[-1] + 1]
    return " ".join(words)


@contextmanager
def _failing_as_corrupt() -> Iterator[None]:
    """Turn whatever a hostile file makes pypdf raise (its own errors, but also KeyError,
    RecursionError, ValueError, …) into `pdf_corrupt`; KeyboardInterrupt is not an Exception."""
    try:
        yield
    except (AppError, *_NOT_THE_FILES_FAULT):
        raise
    except Exception as exc:
        raise AppError("pdf_corrupt", _CORRUPT) from exc


def _open(path: Path) -> PdfReader:
    with path.open("rb") as file:
        head = file.read(1024)
    if not head:
        raise AppError("empty_content", "This PDF file is empty (0 bytes).")
    # pypdf would say "EOF marker not found" of a text file; a person needs to hear it is not a PDF.
    if b"%PDF-" not in head:
        raise AppError("pdf_corrupt", _NOT_A_PDF)
    with _failing_as_corrupt():
        reader = PdfReader(path, strict=False)
        # Many "encrypted" PDFs only restrict printing or copying and open with the empty password.
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise AppError(
                "pdf_encrypted",
                "This PDF is protected by a password. Remove the password (e.g. print it to a new PDF) "
                "and upload it again.",
            )
    return reader


def _page_count(reader: PdfReader) -> int:
    with _failing_as_corrupt():
        total = len(reader.pages)
    if total == 0:
        raise AppError("empty_content", "This PDF has no pages.")
    limit: int = getattr(settings, "PDF_MAX_PAGES", 5000)
    if total > limit:
        raise AppError("pdf_too_many_pages", f"This PDF has {total:,} pages; at most {limit:,} can be processed.")
    return total


def _nothing_found(*, unreadable: bool, scans_without_ocr: int) -> AppError:
    if unreadable:
        return AppError("pdf_corrupt", _CORRUPT)
    if scans_without_ocr:
        return AppError(
            "pdf_no_text",
            "This PDF holds scanned pages without a text layer, and text recognition (OCR) is not "
            "installed on this server, so no text could be read from it.",
        )
    return AppError(
        "pdf_no_text",
        "No text was found in this PDF: its pages are blank, or are images in which text recognition found no words.",
    )


_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f]")
# A letter, then a hyphen at the end of the line: a word broken across lines (or a compound).
_LINE_END_HYPHEN = re.compile(r"[^\W\d_][-\u00ad\u2010]$")
_SENTENCE_END = (".", "!", "?", ":")


def clean_text(raw: str) -> str:
    """Page text tidied for chunking and search: NFKC (so the ligature "ﬁ" matches "fi"), control
    bytes dropped (Postgres rejects NUL), whitespace normalised per line, words hyphenated across
    line ends rejoined, and paragraphs separated by blank lines."""
    text = unicodedata.normalize("NFKC", _CONTROL.sub("", raw))
    # Paragraph ends are judged on the lines as printed, before rejoined words lengthen some of them.
    lines = _mark_paragraphs([" ".join(line.split()) for line in text.splitlines()])
    text = "\n".join(_join_hyphenated(lines)).replace("\u00ad", "")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _join_hyphenated(lines: list[str]) -> list[str]:
    joined: list[str] = []
    for line in lines:
        previous = joined[-1] if joined else ""
        if line[:1].isalpha() and _LINE_END_HYPHEN.search(previous):
            # "Übungsauf-" + "gaben" is one word; "E-" + "Mail" keeps its hyphen; a soft hyphen always goes.
            keep_hyphen = line[0].isupper() and previous[-1] != "\u00ad"
            joined[-1] = (previous if keep_hyphen else previous[:-1]) + line
        else:
            joined.append(line)
    return joined


def _mark_paragraphs(lines: list[str]) -> list[str]:
    """Add a blank line after each line that ends a paragraph.

    pypdf's text has no blank lines. In justified or ragged prose the last line of a paragraph ends a
    sentence well short of the full width, so such a line is taken as a paragraph end. Extra breaks
    cost nothing downstream (the chunker packs paragraphs back together).
    """
    lengths = sorted(len(line) for line in lines if line)
    full_width = lengths[len(lengths) * 4 // 5] if lengths else 0
    marked: list[str] = []
    for line in lines:
        marked.append(line)
        if line.endswith(_SENTENCE_END) and len(line) < 0.75 * full_width:
            marked.append("")
    return marked


def _has_images(page: PageObject) -> bool:
    # Only pages with an image can be scans; OCR costs seconds a page, so text-less pages without one
    # (blank pages, a "PDF bomb" of thousands of them) are skipped at no cost.
    return len(page.images) > 0


def _ocr_languages() -> str | None:
    """Tesseract's language argument, or None when pdftoppm or tesseract is missing."""
    if shutil.which("pdftoppm") is None:
        return None
    return ocr.languages()


def _ocr_page(path: Path, number: int, languages: str) -> str:
    """Text tesseract reads on page `number` rendered by pdftoppm; "" when rendering or OCR fails.

    pdftoppm is used rather than pypdf's embedded images because it renders what a reader sees: scans
    stored as strips or tiles, JBIG2/CCITT images, rotated pages and masks all come out as one upright
    page, at a bounded size, in a subprocess that a timeout can stop.
    """
    with tempfile.TemporaryDirectory(prefix="pdf-ocr-") as tmp:
        stem = Path(tmp) / "page"
        command = ["pdftoppm", "-f", str(number), "-l", str(number), "-singlefile", "-gray", "-png"]
        command += ["-scale-to", str(OCR_LONG_SIDE_PX), str(path), str(stem)]
        try:
            subprocess.run(command, check=True, capture_output=True, timeout=RENDER_TIMEOUT_SECONDS)
        except (subprocess.SubprocessError, OSError) as exc:
            logger.warning("PDF %s: rendering page %s for OCR failed: %r", path.name, number, exc)
            return ""
        raw = ocr.read(stem.with_suffix(".png"), languages=languages, name=f"PDF {path.name} page {number}")
    return clean_text(raw)


def _document_info(reader: PdfReader) -> tuple[dict[str, Any], datetime | None]:
    """Title and author for the metadata, and when the document was made (creation, else modification)."""
    try:
        info = reader.metadata
    except _NOT_THE_FILES_FAULT:
        raise
    except Exception:  # noqa: BLE001 - a broken /Info dictionary must not cost the text
        return {}, None
    if info is None:
        return {}, None
    facts = {
        name: value for name, key in (("title", "/Title"), ("author", "/Author")) if (value := _info_text(info, key))
    }
    occurred_at = parse_pdf_date(_info_text(info, "/CreationDate")) or parse_pdf_date(_info_text(info, "/ModDate"))
    return facts, occurred_at


def _info_text(info: Any, key: str) -> str | None:
    try:
        value = info.get(key)
        # pypdf's own properties return None for values stored as indirect objects (the FBI table does).
        value = value.get_object() if hasattr(value, "get_object") else value
    except Exception:  # noqa: BLE001 - a dangling reference in /Info
        return None
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if not isinstance(value, str):
        return None
    return " ".join(_CONTROL.sub("", value).split())[:MAX_INFO_CHARS] or None


_PDF_DATE = re.compile(
    r"(?:D:)?(?P<Y>\d{4})(?P<m>\d{2})?(?P<d>\d{2})?(?P<H>\d{2})?(?P<M>\d{2})?(?P<S>\d{2})?"
    r"\s*(?:(?P<sign>[Zz+-])(?:(?P<tzh>\d{2})'?(?P<tzm>\d{2})?'?)?)?"
)


def parse_pdf_date(text: str | None) -> datetime | None:
    """An aware datetime from a PDF date ("D:20161231184323+01'00'"), or None when it is malformed
    or implausible (before 1900 or in the future: producers write zeros and garbage here)."""
    match = _PDF_DATE.match(text.strip()) if text else None
    if match is None:
        return None
    part = match.groupdict()
    try:
        offset = timedelta(hours=int(part["tzh"] or 0), minutes=int(part["tzm"] or 0))
        # No zone in the file: its local time is unknown, and UTC is at most a day off.
        zone = timezone(-offset if part["sign"] == "-" else offset) if part["sign"] in ("+", "-") else UTC
        moment = datetime(
            int(part["Y"]), int(part["m"] or 1), int(part["d"] or 1),
            int(part["H"] or 0), int(part["M"] or 0), int(part["S"] or 0), tzinfo=zone,
        )  # fmt: skip
    except ValueError:
        return None
    if moment.year < 1900 or moment > datetime.now(UTC) + timedelta(days=1):
        return None
    return moment
