"""Structure-aware chunking of Markdown and plain text.

A chunk never crosses a heading and never splits a fenced code block; paragraphs are packed
together up to a word budget, a paragraph of a note longer than `PARAGRAPH_MAX_WORDS` is cut
between its lines as typed (a PDF page's, between sentences: its lines are where the page wrapped),
each line then kept whole like a paragraph (a note typed line by line reads as one typed with blank
lines), a line longer than `PARAGRAPH_MAX_WORDS` between sentences, and an over-long sentence (a
huge line with no punctuation) between words. Where a
paragraph had to be split, consecutive chunks share the seam sentence so a fact there is found from
either side; whole paragraphs are natural boundaries and are not repeated.

The sizes were chosen on LoCoMo (bench/locomo.py): small chunks of whole paragraphs let a search
return more distinct places within the same number of words. A 60-word budget with paragraphs kept
whole up to 180 words beat 90 words (multi-hop questions, whose evidence is spread over many places,
gained most), and 90 beat 180-word chunks with a 40-word overlap. Paragraphs are now kept whole up to
100 words: prose (SQuAD's Wikipedia paragraphs, ~130 words) then gives two or three passages a
paragraph, which lifted both halves of that yardstick while LoCoMo's stayed the same (bench/RESULTS.md).
Changing them needs a migration that queues the affected sources again (ingestion/migrations/0011_…).
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise

MAX_WORDS = 60
PARAGRAPH_MAX_WORDS = 100
OVERLAP_WORDS = 40
SENTENCES_MAX = 16  # a passage's statements embedded on their own (`sentences`); ~60 words hold 3–6

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_LINE_ENDS = (".", "!", "?", ":", ";", ")", "。", "！", "？")


@dataclass(frozen=True)
class Piece:
    text: str
    heading: tuple[str, ...]


@dataclass
class _Block:
    text: str
    heading: tuple[str, ...]
    is_code: bool = False


@dataclass
class _Packer:
    """Packs units (paragraphs, or sentences of a split paragraph) into chunks of at most `max_words`."""

    max_words: int
    overlap_words: int
    pieces: list[Piece] = field(default_factory=list)
    current: list[tuple[str, str]] = field(default_factory=list)  # (separator before it, text)
    words: int = 0
    heading: tuple[str, ...] = ()

    def add(self, unit: str, heading: tuple[str, ...], *, separator: str = "\n\n") -> None:
        size = _count(unit)
        if heading != self.heading:
            self.flush(carry=False)
            self.heading = heading
        elif self.current and self.words + size > self.max_words:
            self.flush(carry=True)
        self.current.append((separator, unit))
        self.words += size

    def take(self) -> list[Piece]:
        """The pieces finished since the last call."""
        pieces, self.pieces = self.pieces, []
        return [piece for piece in pieces if piece.text]

    def flush(self, *, carry: bool) -> None:
        if not self.current:
            return
        text = self.current[0][1] + "".join(separator + unit for separator, unit in self.current[1:])
        self.pieces.append(Piece(text=text.strip(), heading=self.heading))
        separator, last = self.current[-1]
        # Inside a split paragraph the seam sentence is repeated at the start of the next chunk; not
        # when it was the whole chunk, which the next would then hold entire (a wasted search result).
        keep = last if separator == " " and len(self.current) > 1 else ""
        self.current = [("", keep)] if carry and keep and _count(keep) <= self.overlap_words else []
        self.words = sum(_count(unit) for _, unit in self.current)


def chunk_markdown(
    text: str,
    *,
    max_words: int = MAX_WORDS,
    overlap_words: int = OVERLAP_WORDS,
    paragraph_words: int = PARAGRAPH_MAX_WORDS,
) -> list[Piece]:
    """A note: headings, paragraphs, and in a long paragraph its lines as typed (see `line_units`)."""
    return list(_chunk(_blocks(text, markdown=True), max_words, overlap_words, paragraph_words, lines=True))


def iter_chunk_markdown(text: str) -> Iterator[Piece]:
    """`chunk_markdown`'s pieces one after another, so that a huge note's never sit in memory at once."""
    return _chunk(_blocks(text, markdown=True), MAX_WORDS, OVERLAP_WORDS, PARAGRAPH_MAX_WORDS, lines=True)


def chunk_text(
    text: str,
    *,
    max_words: int = MAX_WORDS,
    overlap_words: int = OVERLAP_WORDS,
    paragraph_words: int = PARAGRAPH_MAX_WORDS,
) -> list[Piece]:
    """Plain text (a PDF page): paragraphs and sentences only; a line starting with "#" is just text.

    A PDF's lines are where the page wrapped them, not where a writer ended them: they are not units."""
    return list(_chunk(_blocks(text, markdown=False), max_words, overlap_words, paragraph_words, lines=False))


def _chunk(
    blocks: Iterator["_Block"], max_words: int, overlap_words: int, paragraph_words: int, *, lines: bool
) -> Iterator[Piece]:
    packer = _Packer(max_words=max_words, overlap_words=overlap_words)
    whole = max(max_words, paragraph_words)  # a paragraph (or a typed line) up to this size is kept whole
    for block in blocks:
        if block.is_code or _count(block.text) <= whole:
            packer.add(block.text, block.heading)
            yield from packer.take()
            continue
        separator = "\n\n"
        for line in line_units(block.text) if lines else [block.text]:
            if lines and _count(line) <= whole:
                packer.add(line, block.heading, separator=separator)
            else:
                for index, unit in enumerate(_split_long(line, max_words)):
                    packer.add(unit, block.heading, separator=separator if index == 0 else " ")
            separator = "\n"
        yield from packer.take()
    packer.flush(carry=False)
    yield from packer.take()


def line_units(paragraph: str) -> list[str]:
    """The lines of a long paragraph as the units to pack: most people type a note line by line,
    with no blank lines, each line a thought (an errand, a turn of a conversation, a reading).

    In prose pasted from an e-mail, a line that stops mid-sentence and goes on in lower case on the
    next line was wrapped, not ended: the two are one unit. Such a paragraph is told by where its
    lines end: most could not have taken the next line's first word within the longest line's width,
    so a width ended them. A typed note's lines end where their thoughts do, and its lines in lower
    case ("wk2 run3 - Griffith park, 3.3km", "referral to physio - she recommended Declan") stay
    apart, however alike their lengths.
    """
    lines = [line.strip() for line in paragraph.split("\n") if line.strip()]
    units: list[str] = []
    width = max((len(line) for line in lines), default=0)
    wrapped = _looks_wrapped(lines, width)
    for before, line in zip(["", *lines], lines, strict=False):
        if (
            wrapped
            and units
            and line[:1].islower()
            and not units[-1].endswith(_LINE_ENDS)
            and _ended_by_width(before, line, width)
        ):
            units[-1] += " " + line
        else:
            units.append(line)
    return units


def sentences(text: str, *, lines: bool = True) -> list[str]:
    """A passage's statements, each embedded on its own beside the passage (`SENTENCES_MAX` at most):
    a question is often answered by one sentence among others about something else, and the meaning
    of the whole passage is an average that can miss it.

    A statement is a sentence of a line as typed (`line_units`): a typed note's line, a transcript's
    turn; with `lines` False (a PDF page, where lines are the page's wrapping), a sentence of the
    paragraph. A passage of one statement has none of its own: the passage's vector is its vector.
    """
    units: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        for unit in line_units(paragraph) if lines else [" ".join(paragraph.split())]:
            units.extend(sentence.strip() for sentence in _SENTENCE_END.split(unit) if sentence.strip())
    return units[:SENTENCES_MAX] if len(units) > 1 else []


def _looks_wrapped(lines: list[str], width: int) -> bool:
    """Whether most lines but the last were ended by a width (`_ended_by_width`): wrapped prose.

    Lines of alike lengths are not enough: three typed lines of 98, 86 and 73 characters, each its
    own thought, read as wrapped by their lengths and were embedded as one sentence (2026-12-03)."""
    if len(lines) < 3:
        return False
    full = sum(_ended_by_width(line, following, width) for line, following in pairwise(lines))
    return full > (len(lines) - 1) / 2


def _ended_by_width(line: str, following: str, width: int) -> bool:
    """Whether the next line's first word would not have fit on `line` within `width` characters: where
    a text wrapped at a width ends each line, and where a typed line that stops short never does."""
    return len(line) + 1 + len(following.split(maxsplit=1)[0]) > width


def _blocks(text: str, *, markdown: bool) -> Iterator[_Block]:
    heading: list[str] = []
    paragraph: list[str] = []
    code: list[str] | None = None
    fence = ""
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if code is not None:
            code.append(line)
            if line.strip().startswith(fence):
                yield _Block("\n".join(code), tuple(heading), is_code=True)
                code = None
            continue
        fence_match = _FENCE.match(line) if markdown else None
        heading_match = _HEADING.match(line) if markdown else None
        if fence_match or heading_match or not line.strip():
            if paragraph:
                yield _Block("\n".join(paragraph).strip(), tuple(heading))
                paragraph = []
        if fence_match:
            fence, code = fence_match.group(1), [line]
        elif heading_match:
            level = len(heading_match.group(1))
            heading = heading[: level - 1] + [heading_match.group(2)]
        elif line.strip():
            paragraph.append(line)
    if code is not None:  # an unclosed fence runs to the end of the document
        yield _Block("\n".join(code), tuple(heading), is_code=True)
    if paragraph:
        yield _Block("\n".join(paragraph).strip(), tuple(heading))


def _split_long(text: str, max_words: int) -> Iterator[str]:
    for sentence in _SENTENCE_END.split(text):
        words = sentence.split()
        if len(words) <= max_words:
            if words:
                yield sentence.strip()
            continue
        for start in range(0, len(words), max_words):
            yield " ".join(words[start : start + max_words])


def _count(text: str) -> int:
    return len(text.split())
