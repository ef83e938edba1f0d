"""Reading a note as Markdown editors (Obsidian and its kind) write it: YAML front matter and wiki-links.

The one place that knows this: a note typed on the page, posted to the API, uploaded as a file or
added from the command line is read by `note_read`. The account export writes the same front matter
(accounts/export.py), so an exported note comes back with its title and date.
"""

import re
from dataclasses import dataclass
from datetime import date, datetime, time, tzinfo
from typing import Any

import yaml

# A block opened by `---` on the first line and closed by `---` (or YAML's `...`) on a line of its own.
FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(?P<yaml>.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
# [[Page]], [[Page|alias]], [[Page#Heading]], and embeds ![[file.png]].
WIKI_LINK = re.compile(r"!?\[\[(?P<target>[^\]|\n]*?)(?:\|(?P<alias>[^\]\n]*))?\]\]")
DATE_KEYS = ("date", "created")
# Properties that mark a block as front matter: ours, and the ones Obsidian itself writes.
PROPERTIES = frozenset({"title", *DATE_KEYS, "tags", "aliases", "cssclasses", "private"})


@dataclass(frozen=True)
class NoteText:
    body: str  # the text without its front matter, wiki-links as the words they show
    title: str = ""
    occurred_at: datetime | None = None
    tags: tuple[str, ...] = ()
    private: bool = False  # `private: true`: left out of search and answers unless included (the export writes it)


def note_read(text: str, *, zone: tzinfo) -> NoteText:
    """The note's text and what its front matter says; `zone` places a date or a naive time.

    Values that are not what they should be (a `date` that is no date) are ignored, never an
    error: the note is still worth keeping.
    """
    fields, text = _front_matter(text)
    title = fields.get("title")
    return NoteText(
        body=wiki_links_as_text(text),
        title=str(title).strip() if isinstance(title, str | int | float) else "",
        occurred_at=next((moment for key in DATE_KEYS if (moment := _moment(fields.get(key), zone))), None),
        tags=_tags(fields.get("tags")),
        private=fields.get("private") is True,
    )


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The front matter's fields and the text after it; no fields and the whole text without one.

    Only a block that YAML reads as a mapping with a property editors write is front matter: a
    typed note between two rules ("---\nReminder: call Ana\n---") is the person's words, kept.
    """
    match = FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        loaded = yaml.safe_load(match.group("yaml"))
    except yaml.YAMLError:
        return {}, text
    if not isinstance(loaded, dict):
        return {}, text
    fields = {str(key).lower(): value for key, value in loaded.items()}
    if not PROPERTIES & fields.keys():
        return {}, text
    return fields, text[match.end() :]


def wiki_links_as_text(text: str) -> str:
    """`[[Page]]` → `Page`, `[[Page|alias]]` → `alias`, `[[Page#Heading]]` → `Page › Heading`."""

    def shown(match: re.Match[str]) -> str:
        if match.group("alias") and match.group("alias").strip():
            return match.group("alias").strip()
        page, _, heading = match.group("target").partition("#")
        heading = heading.lstrip("^")  # a block reference's id is no word a person reads
        return f"{page.strip()} › {heading.strip()}" if page.strip() and heading.strip() else (page or heading).strip()

    return WIKI_LINK.sub(shown, text)


def _moment(value: object, zone: tzinfo) -> datetime | None:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=zone)
    if isinstance(value, date):  # a day without a time: its start, in the person's zone
        return datetime.combine(value, time(), tzinfo=zone)
    return None


def _tags(value: object) -> tuple[str, ...]:
    """Tags as a YAML list or as one string (`a, b` or `#a #b`), without their `#`."""
    if isinstance(value, str):
        value = re.split(r"[,\s]+", value)
    if not isinstance(value, list):
        return ()
    tags = (str(tag).strip().lstrip("#") for tag in value if tag is not None)
    return tuple(dict.fromkeys(tag for tag in tags if tag))
