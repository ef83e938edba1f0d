"""Receiving files: hashed and size-checked as they are parsed, typed by their bytes.

Under ASGI the body limit is enforced earlier, while the request streams in (secondbrain/limits.py);
the upload handler here checks it again for every other way a request can arrive, and computes
the sha256 on the way through so a large file is read once.
"""

import hashlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import StopUpload, TemporaryFileUploadHandler
from django.http import HttpRequest, HttpResponse

from ingestion.models import Source
from secondbrain.errors import AppError

SNIFF_BYTES = 4096
AUDIO_EXTENSIONS = frozenset(
    ".mp3 .m4a .mp4 .aac .wav .flac .ogg .oga .opus .webm .weba .mka .wma .amr .3gp .aiff .aif .caf".split()
)
TEXT_EXTENSIONS = frozenset({".md", ".markdown", ".txt", ".text", ""})
CALENDAR_EXTENSIONS = frozenset({".ics", ".ical", ".ifb", ".icalendar"})


class LimitedUploadHandler(TemporaryFileUploadHandler):
    """Streams the upload to a temporary file, hashing it, and stops once it passes the limit."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.received = 0
        self.digest = hashlib.sha256()

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.received = 0
        self.digest = hashlib.sha256()

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > settings.MAX_UPLOAD_BYTES:
            if self.request is not None:
                self.request.upload_too_large = True  # type: ignore[attr-defined]
            # connection_reset=True would drop the socket before the client reads our 413.
            raise StopUpload(connection_reset=False)
        self.digest.update(raw_data)
        return super().receive_data_chunk(raw_data, start)

    def file_complete(self, file_size: int) -> UploadedFile | None:
        uploaded = super().file_complete(file_size)
        if uploaded is not None:
            uploaded.sha256 = self.digest.hexdigest()  # type: ignore[attr-defined]
        return uploaded


class UploadLimitMiddleware:
    """Gives every multipart request the limited, hashing upload handler.

    It must come before CsrfViewMiddleware, which reads request.POST (and so parses the body).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.META.get("CONTENT_TYPE", "").startswith("multipart/form-data"):
            request.upload_handlers = [LimitedUploadHandler(request)]
        return self.get_response(request)


def uploaded_file(request: HttpRequest, field: str = "file") -> UploadedFile:
    """The request's file, or the error that explains its absence."""
    if getattr(request, "upload_too_large", False):
        raise too_large()
    upload = request.FILES.get(field)
    if upload is None:
        raise AppError("missing_file", "Choose a file to upload.", status=422)
    return upload


def too_large() -> AppError:
    return AppError("file_too_large", f"The file is larger than the {settings.MAX_UPLOAD_MB} MB limit.", status=413)


@dataclass(frozen=True)
class Sniffed:
    kind: str  # a Source.Kind value
    mime_type: str


def sniff(head: bytes, filename: str) -> Sniffed:
    """Decide what a file is from its first bytes; the name only breaks ties the bytes leave open."""
    extension = PurePath(filename).suffix.lower()
    if not head:
        raise AppError("empty_content", f"{filename} is empty.", status=422)
    if head.startswith(b"%PDF-") or (b"%PDF-" in head[:1024] and extension == ".pdf"):
        return Sniffed(Source.Kind.PDF, "application/pdf")
    image = _image_mime(head, filename)  # before audio: HEIC opens with an MP4 box as audio does
    if image:
        return Sniffed(Source.Kind.IMAGE, image)
    audio = _audio_mime(head)
    if audio:
        return Sniffed(Source.Kind.AUDIO, audio)
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").upper().startswith(b"BEGIN:VCALENDAR"):
        return Sniffed(Source.Kind.CALENDAR, "text/calendar")
    if extension in CALENDAR_EXTENSIONS:
        raise AppError(
            "unsupported_type",
            f"{filename} is not an iCalendar file: it does not begin with BEGIN:VCALENDAR.",
            status=415,
        )
    if _looks_like_text(head):
        if extension not in TEXT_EXTENSIONS:
            raise AppError(
                "unsupported_type",
                f"{filename} contains plain text, not what its name says; rename it to .txt or .md.",
                status=415,
            )
        return Sniffed(Source.Kind.NOTE, "text/markdown" if extension in {".md", ".markdown"} else "text/plain")
    if extension == ".pdf":
        raise AppError("pdf_corrupt", f"{filename} is not a readable PDF.", status=422)
    if extension in AUDIO_EXTENSIONS:
        # Formats without a signature we know (raw AAC, AMR…): ffmpeg decides in the worker.
        return Sniffed(Source.Kind.AUDIO, "application/octet-stream")
    raise AppError(
        "unsupported_type",
        f"{filename} is not a PDF, an audio file, an image (PNG, JPEG, HEIC, WebP), a calendar (.ics) or a text "
        "note, so it cannot be added.",
        status=415,
    )


# The ISO base media "brands" of HEIF images (an iPhone's HEIC photos), after the `ftyp` box's name.
HEIF_BRANDS = frozenset({b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1"})
OTHER_IMAGES = {b"GIF8": "GIF", b"II*\x00": "TIFF", b"MM\x00*": "TIFF"}


def _image_mime(head: bytes, filename: str) -> str:
    """The image type these bytes begin, "" for none; an image of a kind that cannot be read is refused."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[4:8] == b"ftyp" and head[8:12] in HEIF_BRANDS | {b"avif", b"avis"}:
        brands = head[8 : max(16, int.from_bytes(head[:4], "big"))]
        if b"avif" in brands or b"avis" in brands:
            raise _unreadable_image(filename, "AVIF")
        if importlib.util.find_spec("pillow_heif") is None:  # an operator's install without it
            raise _unreadable_image(filename, "HEIC")
        return "image/heic"
    for signature, kind in OTHER_IMAGES.items():
        if head.startswith(signature):
            raise _unreadable_image(filename, kind)
    return ""


def _unreadable_image(filename: str, kind: str) -> AppError:
    return AppError(
        "unsupported_type",
        f"{filename} is a {kind} image, which cannot be read here; save it as PNG or JPEG and add it again.",
        status=415,
    )


def _audio_mime(head: bytes) -> str:
    signatures = [
        (b"ID3", "audio/mpeg"),
        (b"fLaC", "audio/flac"),
        (b"OggS", "audio/ogg"),
        (b"\x1a\x45\xdf\xa3", "audio/webm"),
        (b"#!AMR", "audio/amr"),
        (b"FORM", "audio/aiff"),
        (b"caff", "audio/x-caf"),
        (b"\x30\x26\xb2\x75\x8e\x66\xcf\x11", "audio/x-ms-wma"),
    ]
    for signature, mime in signatures:
        if head.startswith(signature):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio/wav"
    if head[4:8] == b"ftyp":
        return "audio/mp4"
    if len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:  # an MPEG audio frame header
        return "audio/mpeg"
    return ""


def _looks_like_text(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 3:  # the sniffed window may end inside a multi-byte character
            return True
        # Older editors write Windows-1252; accept it when it reads as mostly printable text.
        legacy = head.decode("cp1252", errors="replace")
        printable = sum(char.isprintable() or char in "\r\n\t" for char in legacy)
        return printable >= 0.97 * len(legacy)
    return True


def decode_text(content: bytes) -> str:
    """UTF-8, or Windows-1252 for files that are not; NUL bytes (which Postgres refuses) dropped."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        text = content.decode("cp1252", errors="replace")
    return text.replace("\x00", "")
