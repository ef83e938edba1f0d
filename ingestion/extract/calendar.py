"""iCalendar (.ics) → one Event per occurrence inside a window, each read as a passage of its own.

`icalendar` parses the file (time zones from its VTIMEZONE blocks, or by their IANA names);
`recurring-ical-events` expands what repeats (RRULE, RDATE, EXDATE, moved or cancelled occurrences
given by RECURRENCE-ID) over the window, which would be a hundred lines of date arithmetic to get
wrong here. A weekly event with no end becomes one passage a week inside the window only.

Times are written in the person's zone, since that is how they ask ("what's on tomorrow?"), with
the event's own zone beside it when it differs (a call set in New York time); an event with a
floating time (no zone) is read in the person's zone, and an all-day event covers its days there.
An event that cannot be read (no start, a broken date, a rule the library refuses) is left out and
named in the metadata (`skipped`), so one bad event does not cost the rest of the calendar; a file
that cannot be parsed at all, or whose every event is broken, is an `AppError` with the code
`calendar_unreadable` and a sentence that says why.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
import recurring_ical_events

from secondbrain.errors import AppError

DESCRIPTION_MAX_WORDS = 150
_WEEKDAY_NAMES = {"MO": "Monday", "TU": "Tuesday", "WE": "Wednesday", "TH": "Thursday", "FR": "Friday",
                  "SA": "Saturday", "SU": "Sunday"}  # fmt: skip
_FREQUENCIES = {"DAILY": "day", "WEEKLY": "week", "MONTHLY": "month", "YEARLY": "year"}
_SPACES = re.compile(r"[ \t]+")
# What a broken file or event raises: the libraries' errors are ValueErrors; a missing field a KeyError.
_BROKEN = (ValueError, KeyError, TypeError)
_SKIPPED_SHOWN = 20


@dataclass(frozen=True)
class Event:
    """One occurrence: its passage text, when it starts (aware), and its anchor in the calendar."""

    text: str
    start: datetime
    anchor: dict[str, Any]


@dataclass(frozen=True)
class Calendar:
    events: list[Event]
    metadata: dict[str, Any]


def extract(path: Path, *, zone: ZoneInfo, since: datetime, until: datetime, name: str) -> Calendar:
    """The occurrences of the calendar at `path` that start in [since, until), in order of their start.

    `zone` is the person's; `name` is how the file is called in messages ("family.ics").
    """
    content = path.read_bytes()
    try:
        calendar = icalendar.Calendar.from_ical(content)
    except _BROKEN as exc:
        raise AppError("calendar_unreadable", _unreadable(name, content, exc)) from None
    skipped: list[dict[str, str]] = []
    try:
        events = _occurrences(calendar, zone=zone, since=since, until=until)
    except _BROKEN:
        # Something in it is broken: read it event by event and leave out what cannot be read.
        events = []
        for group in _by_event(calendar):
            try:
                events.extend(_occurrences(group, zone=zone, since=since, until=until))
            except _BROKEN as exc:
                skipped.extend({"event": _summary(event), "why": _why(exc)} for event in group.walk("VEVENT"))
    if skipped and not events:
        raise AppError("calendar_unreadable", _unreadable(name, content, None, skipped=skipped))
    events.sort(key=lambda event: (event.start, event.text))
    metadata: dict[str, Any] = {
        "events": len(events),
        "window": [since.isoformat(), until.isoformat()],
    }
    if skipped:
        metadata["skipped"] = skipped[:_SKIPPED_SHOWN]
        metadata["skipped_count"] = len(skipped)
    if calendar_name := str(calendar.get("X-WR-CALNAME", "")).strip():
        metadata["calendar_name"] = calendar_name
    if not events:
        raise AppError(
            "empty_content",
            f"{name} has no events between {since:%-d %B %Y} and {until:%-d %B %Y}, the time a calendar is read over.",
        )
    return Calendar(events=events, metadata=metadata)


def _occurrences(calendar: icalendar.Calendar, *, zone: ZoneInfo, since: datetime, until: datetime) -> list[Event]:
    # Occurrences come without their rule: it is read from the event that holds it.
    rules = {_text(event.get("UID")): _repeats(event) for event in calendar.walk("VEVENT") if "RRULE" in event}
    occurrences = recurring_ical_events.of(calendar).between(since, until)
    return [event for component in occurrences if (event := _event(component, zone, rules)) is not None]


def _by_event(calendar: icalendar.Calendar) -> list[icalendar.Calendar]:
    """One small calendar per event: the components of its UID (moved occurrences too) and the file's zones."""
    by_uid: dict[str, list[icalendar.cal.Component]] = {}
    for index, event in enumerate(calendar.walk("VEVENT")):
        by_uid.setdefault(_text(event.get("UID")) or f"no-uid-{index}", []).append(event)
    groups = []
    for components in by_uid.values():
        group = icalendar.Calendar()
        for component in [*calendar.walk("VTIMEZONE"), *components]:
            group.add_component(component)
        groups.append(group)
    return groups


def _summary(event: icalendar.cal.Component) -> str:
    title = _text(event.get("SUMMARY")) or "Untitled event"
    if (start := event.get("DTSTART")) is not None and hasattr(start, "to_ical"):
        title += f" ({start.to_ical().decode(errors='replace')})"
    return title


def _why(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"it has no {exc.args[0] if exc.args else 'required field'}"
    return str(exc).split("\n")[0][:200] or type(exc).__name__


def _unreadable(name: str, content: bytes, exc: Exception | None, *, skipped: Sequence[dict[str, str]] = ()) -> str:
    if b"END:VCALENDAR" not in content.upper():
        why = "it stops before its end (END:VCALENDAR is missing), so it was probably cut short"
    elif exc is None:
        first = skipped[0]
        why = f"none of its {len(skipped)} events could be read ({first['event']}: {first['why']})"
    else:
        why = f"the calendar library says: {_why(exc)}"
    return f"{name} is not a calendar that can be read: {why}. Export it from your calendar again."


def _event(component: icalendar.cal.Component, zone: ZoneInfo, rules: dict[str, str]) -> Event | None:
    if str(component.get("STATUS", "")).upper() == "CANCELLED":
        return None
    start_value = component.decoded("DTSTART")
    end_value = component.decoded("DTEND") if "DTEND" in component else None
    if end_value is None and "DURATION" in component:
        end_value = start_value + component.decoded("DURATION")
    all_day = not isinstance(start_value, datetime)
    start = _moment(start_value, zone)
    end = _moment(end_value, zone) if end_value is not None else None
    own_zone = start_value.tzinfo if isinstance(start_value, datetime) else None
    when = _when(start, end, zone=zone, all_day=all_day, own_zone=own_zone)
    lines = [_text(component.get("SUMMARY")) or "Untitled event", when]
    if place := _text(component.get("LOCATION")):
        lines.append(f"Place: {place}")
    if people := _people(component):
        lines.append(f"With: {', '.join(people)}")
    uid = _text(component.get("UID"))
    if repeats := rules.get(uid):
        lines.append(f"Repeats {repeats}")
    if description := _description(component.get("DESCRIPTION")):
        lines.append(description)
    anchor = {
        "when": _label(start, zone=zone, all_day=all_day),
        "at": start.isoformat(),
        "all_day": all_day,
        "uid": uid or f"{lines[0]} {start.isoformat()}",
    }
    return Event(text="\n".join(lines), start=start, anchor=anchor)


def _moment(value: date | datetime, zone: ZoneInfo) -> datetime:
    """An aware datetime: a day starts at midnight in the person's zone, a floating time is theirs."""
    if not isinstance(value, datetime):
        return datetime.combine(value, time.min, tzinfo=zone)
    return value if value.tzinfo is not None else value.replace(tzinfo=zone)


def _label(start: datetime, *, zone: ZoneInfo, all_day: bool) -> str:
    """Where the passage sits in its calendar, for people: "Tue 6 Oct 2026, 17:00" in the person's zone."""
    local = start.astimezone(zone)
    return f"{local:%a} {local.day} {local:%b %Y}" + ("" if all_day else f", {local:%H:%M}")


def _when(start: datetime, end: datetime | None, *, zone: ZoneInfo, all_day: bool, own_zone: tzinfo | None) -> str:
    """ "Tuesday 6 October 2026, 17:00–17:45", "Saturday 5 December 2026, all day", with the event's own
    time beside it when it was set in another zone: "…, 14:00–15:00 (9:00–10:00 America/New_York time)"."""
    local = start.astimezone(zone)
    if all_day:
        last = (end - timedelta(days=1)).date() if end is not None and end.date() > start.date() else start.date()
        days = _day(local.date()) if last == local.date() else f"{_day(local.date())} to {_day(last)}"
        return f"{days}, all day"
    hours = f"{local:%H:%M}"
    if end is not None and end > start:
        local_end = end.astimezone(zone)
        hours += (
            f"–{local_end:%H:%M}"
            if local_end.date() == local.date()
            else f" to {_day(local_end.date())} {local_end:%H:%M}"
        )
    text = f"{_day(local.date())}, {hours}"
    own = _zone_name(own_zone)
    # A time set in UTC (as many servers write every time) says nothing about where it happens.
    if own and own not in {"UTC", "Etc/UTC", _zone_name(zone)} and start.utcoffset() != local.utcoffset():
        there = start.astimezone(own_zone)
        span = f"{there:%H:%M}" + (f"–{end.astimezone(own_zone):%H:%M}" if end is not None and end > start else "")
        text += f" ({span} {own} time)"
    return text


def _day(day: date) -> str:
    return f"{day:%A} {day.day} {day:%B %Y}"


def _zone_name(zone: tzinfo | None) -> str:
    if zone is None:
        return ""
    key = getattr(zone, "key", None) or getattr(zone, "zone", None)
    return str(key) if key else ""


def _text(value: object) -> str:
    if value is None:
        return ""
    return _SPACES.sub(" ", str(value)).strip()


def _people(component: icalendar.cal.Component) -> list[str]:
    """Attendees and the organiser by their names (CN), else the address before the @; each once."""
    found: list[str] = []
    for key in ("ORGANIZER", "ATTENDEE"):
        values = component.get(key)
        for value in values if isinstance(values, list) else [values] if values is not None else []:
            name = _text(getattr(value, "params", {}).get("CN", "")) or str(value).split(":", 1)[-1].split("@")[0]
            if name and name not in found:
                found.append(name)
    return found


def _repeats(component: icalendar.cal.Component) -> str:
    """ "every week on Tuesday", "every 2 weeks", "every year": the rule of a repeating event, plainly."""
    rule = component.get("RRULE")
    if not rule:
        return ""
    frequency = _FREQUENCIES.get(str((rule.get("FREQ") or [""])[0]).upper())
    if frequency is None:
        return ""
    interval = int((rule.get("INTERVAL") or [1])[0])
    text = f"every {frequency}" if interval == 1 else f"every {interval} {frequency}s"
    days = [_WEEKDAY_NAMES[day[-2:]] for day in rule.get("BYDAY", []) if day[-2:] in _WEEKDAY_NAMES]
    if frequency == "week" and days:
        text += " on " + (days[0] if len(days) == 1 else ", ".join(days[:-1]) + " and " + days[-1])
    return text


def _description(value: object) -> str:
    lines = [line.strip() for line in str(value or "").replace("\r\n", "\n").split("\n")]
    words = " ".join(line for line in lines if line).split()
    if len(words) > DESCRIPTION_MAX_WORDS:
        return " ".join(words[:DESCRIPTION_MAX_WORDS]) + " …"
    return "\n".join(line for line in lines if line)
