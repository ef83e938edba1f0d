"""Time in questions: the range a question is about, in the user's zone, and which clock it means.

`interpret` finds the time expressions in a question with a table of patterns (`_RULES`), each
resolving to a span of local dates [start, end). Spans are then combined ("between 1 and 15 April",
"from March to May") or opened by a preposition ("since Monday", "before 3 May"), and turned into
aware datetimes at local midnight — never by adding timedeltas to aware datetimes, which would
drift by an hour across a DST change.

Conventions, where English is ambiguous:
- weeks start on Monday; "this week" / "this month" / "this year" is the whole calendar unit;
- "last week" is the previous calendar week, while "the past week" / "the last 3 days" is rolling
  (the N units before today, plus today);
- "N days/weeks/months/years ago" is the calendar unit that contains the day N units ago;
- a weekday ("Tuesday", "on Tuesday", "last Tuesday", "since Monday") is the most recent such day
  before today: someone asking about today says "today";
- a date or month without a year ("3 May", "in March") is the most recent one not in the future;
- the future is read as the past is, mirrored: "tomorrow", "next week" / "next month" (the next
  calendar unit), "the next 3 days" (today and the 3 after it), "in two weeks" / "two weeks from
  now" (the calendar unit that contains the day two weeks on), "next Monday" / "this coming Monday"
  (the first such day after today), "this weekend" (this week's Saturday and Sunday), "next
  weekend" (next week's), "later this week" (today to its end);
- a question that looks ahead ("what am I doing on Friday?", "what's on 3 December?", "when is…",
  "…will…") reads a bare weekday as the next one after today, and a date or month without a year as
  the first one not yet over: people ask of their plans as they ask of their past.
"""

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

Clock = Literal["content", "written", "upload"]
Mode = Literal["semantic", "temporal", "hybrid"]
UTC = ZoneInfo("UTC")


@dataclass(frozen=True)
class DateRange:
    """A half-open range [since, until) on one clock: when the content happened (a passage dated there, or one
    that speaks of its days), when it was written (dated there), or when it was added."""

    since: datetime | None = None
    until: datetime | None = None
    clock: Clock = "content"


@dataclass(frozen=True)
class Interpretation:
    """What a question asks for: `topic` is the question without its time expression.

    `mode` is "semantic" without a time expression, "temporal" when nothing topical is left once
    the time words and filler are gone (a listing by time), and "hybrid" otherwise.
    """

    mode: Mode
    date_range: DateRange | None
    topic: str
    phrase: str = ""


# --- Vocabulary ------------------------------------------------------------------------------------

_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "a couple of": 2, "couple of": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
            ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
            ("october", "oct"), ("november", "nov"), ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip
_WEEKDAYS = {name: number for number, name in enumerate(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
)}  # fmt: skip
_FULL_MONTH_NAMES = [name for name in _MONTHS if len(name) > 4 or name in {"may", "june", "july"}]


def _alternatives(words: list[str]) -> str:
    # Longest first, so that "sept" is not cut to "sep" and "a couple of" wins over "a".
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


_NUM = rf"(?P<n>\d{{1,3}}|{_alternatives(list(_NUMBERS))})"
_UNIT = r"(?P<unit>day|week|month|year)s?"
# "the past few weeks", "the next several days", "the coming weeks": a while, read as three of them.
_FEW = r"(?P<few>(?:a\s+)?few|several)"
FEW = 3
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_DAY2 = r"(?P<day2>[0-3]?\d)(?:st|nd|rd|th)?"
_DAY_JOINER = r"(?:-|–|to|and|until|till|through)"
_MONTH = rf"(?P<month>{_alternatives(list(_MONTHS))})\.?"
_FULL_MONTH = rf"(?P<month>{_alternatives(_FULL_MONTH_NAMES)})"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_WEEKDAY = rf"(?P<weekday>{_alternatives(list(_WEEKDAYS))})"
# Words that may introduce a bare month or year: "in March", "since 2023", "between March and May".
_INTRODUCERS = frozenset("in during since before after until till from between and to of through".split())

# --- Calendar arithmetic on local dates -------------------------------------------------------------

Span = tuple[date, date]


def _add_months(day: date, months: int) -> date:
    """The first of the month `months` after `day`'s month."""
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _unit_span(day: date, unit: str) -> Span:
    """The calendar day, week (from Monday), month or year containing `day`."""
    if unit == "day":
        return day, day + timedelta(days=1)
    if unit == "week":
        monday = day - timedelta(days=day.weekday())
        return monday, monday + timedelta(weeks=1)
    if unit == "month":
        first = day.replace(day=1)
        return first, _add_months(first, 1)
    first = date(day.year, 1, 1)
    return first, date(day.year + 1, 1, 1)


def _units_before(day: date, unit: str, count: int) -> date:
    """`day` moved `count` units back, clamped to the end of a shorter month (31 March - 1 month = 28 Feb)."""
    if unit in {"day", "week"}:
        return day - timedelta(days=count * (7 if unit == "week" else 1))
    months = count * (12 if unit == "year" else 1)
    first = _add_months(day, -months)
    last_day = (_add_months(first, 1) - timedelta(days=1)).day
    return first.replace(day=min(day.day, last_day))


def _weekday_before(today: date, weekday: int) -> date:
    return today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)


def _day_of(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _recent_day(today: date, month: int, day: int) -> date | None:
    """The most recent `day` `month` not after today (29 February looks back to a leap year)."""
    for year in range(today.year, today.year - 8, -1):
        found = _day_of(year, month, day)
        if found is not None and found <= today:
            return found
    return None


def _coming_day(today: date, month: int, day: int) -> date | None:
    """The first `day` `month` from today on (29 February looks ahead to a leap year)."""
    for year in range(today.year, today.year + 8):
        found = _day_of(year, month, day)
        if found is not None and found >= today:
            return found
    return None


def _number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBERS[" ".join(text.lower().split())]


# --- The rules ---------------------------------------------------------------------------------------

Groups = dict[str, str | None]
# A resolver gets the match's groups, today's local date and, for a date written without a year
# that is one end of a range, the year the other end implies.
Resolver = Callable[[Groups, date, int | None], Span | None]


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    resolve: Resolver
    # Bare months and years are ordinary words or numbers unless a preposition introduces them.
    needs_introducer: bool = False


def _rule(pattern: str, resolve: Resolver, *, needs_introducer: bool = False) -> _Rule:
    return _Rule(re.compile(rf"\b(?:{pattern})\b", re.IGNORECASE), resolve, needs_introducer)


def _days_back(count: int) -> Resolver:
    return lambda g, today, year: _unit_span(today - timedelta(days=count), "day")


def _calendar(g: Groups, today: date, year: int | None) -> Span | None:
    unit = str(g["unit"]).lower()
    which = " ".join(str(g["which"]).lower().split())
    if unit == "day" and which not in {"this", "current"}:
        return None  # "pay the school tour - last day!!", "next day delivery": a final or following day, no date
    offset = 0 if which in {"this", "current"} else -1 if which in _FORWARD else 1
    return _unit_span(_units_before(today, unit, offset), unit)


def _rolling(g: Groups, today: date, year: int | None) -> Span | None:
    lead = " ".join(str(g["lead"]).lower().split())
    if not g.get("n") and (lead == "last" or (lead == "the last" and str(g["unit"]).lower() == "day")):
        return None  # plain "last week" is the calendar week (`_calendar`); "the last day of term" is no date
    count = FEW if g.get("few") else _number(str(g["n"])) if g.get("n") else 1
    return _units_before(today, str(g["unit"]).lower(), count), today + timedelta(days=1)


def _ago(g: Groups, today: date, year: int | None) -> Span:
    unit = str(g["unit"]).lower()
    return _unit_span(_units_before(today, unit, _number(str(g["n"]))), unit)


def _weekday(g: Groups, today: date, year: int | None) -> Span:
    weekday = _WEEKDAYS[str(g["weekday"]).lower()]
    if g.get("ahead") and not _PAST.match(str(g["whole"])):
        return _unit_span(_weekday_after_today(today, weekday), "day")
    return _unit_span(_weekday_before(today, weekday), "day")


def _weekday_after_today(today: date, weekday: int) -> date:
    return today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)


def _days_ahead(count: int) -> Resolver:
    return lambda g, today, year: _unit_span(today + timedelta(days=count), "day")


def _next_weekday(g: Groups, today: date, year: int | None) -> Span:
    return _unit_span(_weekday_after_today(today, _WEEKDAYS[str(g["weekday"]).lower()]), "day")


def _rolling_ahead(g: Groups, today: date, year: int | None) -> Span:
    """ "the next 3 days": today and the 3 days after it (mirroring "the past 3 days"); "the coming
    weeks", "the next few weeks": `FEW` of them."""
    count = _number(str(g["n"])) if g.get("n") else FEW
    return today, _units_before(today, str(g["unit"]).lower(), -count) + timedelta(days=1)


def _in(g: Groups, today: date, year: int | None) -> Span | None:
    """ "in two weeks", "three days from now": the calendar unit containing the day that many units on.

    Bare "in two weeks" only in a question that looks ahead: "did it last in seven years" is no date.
    """
    if not g.get("ahead") and not g.get("sure"):
        return None
    unit = str(g["unit"]).lower()
    return _unit_span(_units_before(today, unit, -_number(str(g["n"]))), unit)


def _later(g: Groups, today: date, year: int | None) -> Span:
    """ "later this week": from today to the end of the unit."""
    unit = str(g.get("unit") or "day").lower()
    return today, _unit_span(today, unit)[1]


def _weekend(g: Groups, today: date, year: int | None) -> Span:
    """Saturday and Sunday: this week's, next week's ("next weekend"), last week's ("last weekend"); a bare
    "the weekend" is this week's when the question looks ahead, else the latest that has begun."""
    which = " ".join(str(g.get("which") or "").lower().split())
    saturday = today - timedelta(days=today.weekday()) + timedelta(days=5)
    if which == "next":
        saturday += timedelta(weeks=1)
    elif which in {"last", "past", "the past", "previous"} or (not which and not g.get("ahead") and today < saturday):
        saturday -= timedelta(weeks=1)
    return saturday, saturday + timedelta(days=2)


def _day_month(g: Groups, today: date, year: int | None) -> Span | None:
    month, day = _MONTHS[str(g["month"]).lower()], int(str(g["day"]))
    year = int(str(g["year"])) if g.get("year") else year
    if year is None and g.get("ahead"):
        found = _coming_day(today, month, day)
    else:
        found = _day_of(year, month, day) if year is not None else _recent_day(today, month, day)
    return _unit_span(found, "day") if found else None


def _day_range(g: Groups, today: date, year: int | None) -> Span | None:
    """ "1–15 April": the first day fixes the year, the span ends after the last day."""
    first = _day_month(g, today, year)
    last = _day_month(g | {"day": g["day2"]}, today, first[0].year if first else None)
    return (first[0], last[1]) if first and last and first[0] <= last[0] else None


def _month(g: Groups, today: date, year: int | None) -> Span:
    month = _MONTHS[str(g["month"]).lower()]
    which = (g.get("which") or "").lower()
    if g.get("year"):
        year = int(str(g["year"]))
    elif year is None and (which == "next" or (g.get("ahead") and which != "last")):
        # Looking ahead, "in March" is the first March not yet over; "next March" in March is a year on.
        coming = month > today.month if which == "next" else month >= today.month
        year = today.year if coming else today.year + 1
    elif year is None:
        # "in March" in March is this March; "last March" in March is a year ago.
        recent = month < today.month if which == "last" else month <= today.month
        year = today.year if recent or which == "this" else today.year - 1
    return _unit_span(date(year, month, 1), "month")


def _year(g: Groups, today: date, year: int | None) -> Span:
    return _unit_span(date(int(str(g["year"])), 1, 1), "year")


def _iso(g: Groups, today: date, year: int | None) -> Span | None:
    found = _day_of(int(str(g["year"])), int(str(g["mm"])), int(str(g["day"])))
    return _unit_span(found, "day") if found else None


_FORWARD = frozenset({"next", "coming", "the coming"})

# What counts forward from the day a note was written, where the note means that day (`with_dates`).
_DAY_AFTER_TOMORROW = _rule(r"(?:the\s+)?day\s+after\s+(?:tomorrow|tmrw)", _days_ahead(2))
_NEXT_WEEKDAY = _rule(rf"(?:next|(?:this\s+)?coming)\s+{_WEEKDAY}", _next_weekday)
_NEXT_UNIT = _rule(rf"(?P<which>next|(?:the\s+)?coming)\s+{_UNIT}", _calendar)
_IN_SO_MUCH_TIME = _rule(rf"(?:in\s+)?{_NUM}\s+{_UNIT}(?P<sure>['’]?s?\s+time|\s+from\s+(?:now|today))", _in)

# "Femi's last night in his old place", "my last week at Acme", "the last night of the trip": after a
# possessive, "last" is the final one, no date.
_OWNED = r"(?<!['’]s\s)(?<!\bmy\s)(?<!\bhis\s)(?<!\bher\s)(?<!\bour\s)(?<!\btheir\s)(?<!\byour\s)(?<!\bits\s)"

_RULES = [
    _rule(r"(?:the\s+)?day\s+before\s+yesterday", _days_back(2)),
    _rule(r"today|tonight|this\s+(?:morning|afternoon|evening)", _days_back(0)),
    _rule(rf"yesterday|{_OWNED}(?<!\bthe\s)last\s+night", _days_back(1)),
    _rule(rf"(?P<lead>the\s+past|the\s+last|past|{_OWNED}last)\s+(?:(?:{_NUM}|{_FEW})\s+)?{_UNIT}", _rolling),
    _rule(rf"(?P<which>this|current|{_OWNED}last|previous)\s+{_UNIT}", _calendar),
    _rule(rf"{_NUM}\s+{_UNIT}\s+ago", _ago),
    _rule(rf"(?P<whole>(?:(?:last|this\s+past|past)\s+)?{_WEEKDAY})", _weekday),
    # The future, mirrored.
    _DAY_AFTER_TOMORROW,
    _rule(r"(?:tomorrow|tmrw)(?:\s+(?:morning|afternoon|evening|night))?", _days_ahead(1)),
    _rule(r"later\s+(?:today|tonight|on\s+today)", _days_back(0)),
    _rule(rf"later\s+this\s+{_UNIT}", _later),
    _rule(rf"(?:the\s+)?(?:next|coming)\s+(?:{_NUM}|{_FEW})\s+{_UNIT}", _rolling_ahead),
    _rule(r"(?:the\s+)?coming\s+(?P<unit>day|week|month|year)s\b", _rolling_ahead),
    _rule(r"(?:(?P<which>this|next|last|past|the\s+past|previous|(?:the\s+)?coming)\s+)?(?:the\s+)?weekend", _weekend),
    _NEXT_WEEKDAY,
    _NEXT_UNIT,
    _IN_SO_MUCH_TIME,
    _rule(rf"in\s+{_NUM}\s+{_UNIT}", _in),
    _rule(r"(?P<year>\d{4})-(?P<mm>\d{2})-(?P<day>\d{2})", _iso),
    _rule(rf"{_DAY}\s*{_DAY_JOINER}\s*{_DAY2}(?:\s+of)?\s+{_MONTH}(?:(?:,\s*|\s+){_YEAR})?", _day_range),
    _rule(rf"{_MONTH}\s+{_DAY}\s*{_DAY_JOINER}\s*{_DAY2}(?:(?:,\s*|\s+){_YEAR})?", _day_range),
    _rule(rf"(?:the\s+)?{_DAY}(?:\s+of)?\s+{_MONTH}(?:(?:,\s*|\s+){_YEAR})?", _day_month),
    _rule(rf"{_MONTH}\s+{_DAY}(?:(?:,\s*|\s+){_YEAR})?", _day_month),
    _rule(rf"{_MONTH}\s+{_YEAR}", _month),
    _rule(rf"(?P<which>last|this|next)\s+{_FULL_MONTH}", _month),
    _rule(_FULL_MONTH, _month, needs_introducer=True),
    _rule(_YEAR, _year, needs_introducer=True),
]  # fmt: skip

_RULE_ORDER = {id(rule): order for order, rule in enumerate(_RULES)}  # at one place, the earlier rule wins

# Expressions that count from the day they are said ("yesterday", "two weeks ago", "last month");
# a weekday counts only with "last" or "past" before it ("on Friday" may be the coming one).
_RELATIVE = _RULES[:7]
# And those that count forward from it, where a note means the day it was written: "next Tuesday",
# "next week", "the day after tomorrow", "in two weeks' time". Not "in three weeks" ("I finished the
# course in three weeks" is a length of time) nor "the next three days" (in a story, the days after it).
_RELATIVE_AHEAD = (_DAY_AFTER_TOMORROW, _NEXT_WEEKDAY, _NEXT_UNIT, _IN_SO_MUCH_TIME)
# "the next week we flew home", "the following Tuesday": the day after the story's, not the note's.
_STORY_NEXT = re.compile(r"\bthe\s+$", re.IGNORECASE)
# "the coming weeks", "next months": a while, not the next week or month.
_A_WHILE = re.compile(r"(?:day|week|month|year)s$", re.IGNORECASE)
_WEEKDAY_RULE = _RULES[6]
# Words of a question that asks about what is still to come: its plans, appointments, schedule.
_LOOKS_AHEAD = re.compile(
    r"\b(?:will|shall|going\s+to|gonna|upcoming|coming\s+up|planned|scheduled|booked|due)\b"
    r"|\b\w+['’]ll\b|\b(?:what['’]?s|what\s+is|anything|something)\s+on\b|\b(?:do|will)\s+i\s+have\b|\bhave\s+i\s+got\b"
    r"|\bam\s+i\s+\w+ing\b|\bare\s+we\s+\w+ing\b|\bwhen(?:['’]s|\s+is|\s+are)\b|\bwhat\s+time\s+is\b|\bnext\b",
    re.IGNORECASE,
)
_PAST = re.compile(r"^(?:last|this\s+past|past)\s", re.IGNORECASE)

# What may sit between the two ends of a range, and what opens or closes a range.
_JOINER = re.compile(r"\s*(?:-|–|—|to|and|until|till|through|thru)\s*", re.IGNORECASE)
_RANGE_START = re.compile(r"\b(?:between|from)\s+$", re.IGNORECASE)
_OPENERS = {"since": "since", "after": "after", "before": "before", "until": "until", "till": "until"}
_PREPOSITION = re.compile(
    r"\b(?P<word>since|after|before|until|till|from|between|in|on|during|at|of|for|within|over)\s+$", re.IGNORECASE
)
# "the week before 3 May", "two days after Monday": a span of that length next to the date, not an open range.
_OFFSET = re.compile(rf"\b(?:the|a|an|{_NUM})\s+{_UNIT}\s+$", re.IGNORECASE)
# "(last) weekend before 10 April 2023": a weekend next to a date is not this week's.
_WEEKEND_OFFSET = re.compile(r"\b(?:(?:the|last|that)\s+)?weekend\s+$", re.IGNORECASE)

# --- Finding expressions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Found:
    start: int
    end: int
    rule: _Rule
    match: re.Match[str]
    ahead: bool = False  # the question looks ahead: a bare weekday or a yearless date is a coming one

    def span(self, today: date, year: int | None = None) -> Span | None:
        groups: Groups = self.match.groupdict() | ({"ahead": "ahead"} if self.ahead else {})
        return self.rule.resolve(groups, today, year)

    @property
    def yearless(self) -> bool:
        groups = self.match.groupdict()
        return "month" in groups and "year" in groups and not groups["year"]


def _introduced(text: str, start: int) -> bool:
    words = text[:start].split()
    return bool(words) and words[-1].lower() in _INTRODUCERS


@functools.lru_cache(maxsize=16)
def _matches(text: str) -> tuple[tuple[_Rule, re.Match[str]], ...]:
    """Every rule's matches in `text`, however they resolve: read once for a passage's two readings (`mentioned`)."""
    return tuple(
        (rule, match)
        for rule in _RULES
        for match in rule.pattern.finditer(text)
        if not (rule.needs_introducer and not _introduced(text, match.start())) and not _in_a_title(text, match)
    )


def _expressions(text: str, today: date, *, ahead: bool = False) -> list[_Found]:
    """Non-overlapping time expressions, leftmost first and, at one place, the longest."""
    candidates = [_Found(match.start(), match.end(), rule, match, ahead) for rule, match in _matches(text)]
    candidates.sort(key=lambda found: (found.start, -(found.end - found.start), _RULE_ORDER[id(found.rule)]))
    chosen: list[_Found] = []
    for found in candidates:
        if (not chosen or found.start >= chosen[-1].end) and found.span(today) is not None:
            chosen.append(found)
    return chosen


@dataclass(frozen=True)
class _Piece:
    """One resolved part of the question: a span of dates and how it is bounded."""

    start: int  # where it begins in the question, its preposition included
    end: int
    span: Span
    opens: str = ""  # "since" / "after" → open end; "before" / "until" → open start


def _pair(text: str, first: _Found, second: _Found, today: date) -> Span | None:
    """ "from 1 April to 15 April", "between March and May": the span from the first to the end of the second."""
    between = text[first.end : second.start]
    if not _JOINER.fullmatch(between):
        return None
    if between.strip().lower() == "and" and not _RANGE_START.search(text[: first.start]):
        return None
    one, two = first.span(today), second.span(today)
    if one is None or two is None:
        return None
    # A date without a year takes its year from the other end: "1 December to 15 January 2024".
    if second.yearless:
        two = second.span(today, one[0].year)
        if two is not None and two[0] < one[0]:
            two = second.span(today, one[0].year + 1)
    elif first.yearless:
        one = first.span(today, two[0].year)
        if one is not None and one[0] > two[0]:
            one = first.span(today, two[0].year - 1)
    if one is None or two is None or one[0] > two[0]:
        return None
    return one[0], two[1]


def _pieces(text: str, today: date, *, ahead: bool = False) -> list[_Piece]:
    found = _expressions(text, today, ahead=ahead)
    pieces: list[_Piece] = []
    index = 0
    while index < len(found):
        first = found[index]
        prefix = _PREPOSITION.search(text[: first.start])
        word = prefix.group("word").lower() if prefix else ""
        start = prefix.start() if prefix else first.start
        paired = _pair(text, first, found[index + 1], today) if index + 1 < len(found) else None
        if paired is not None:
            pieces.append(_Piece(start, found[index + 1].end, paired))
            index += 2
            continue
        span = first.span(today)
        assert span is not None  # `_expressions` keeps only expressions that resolve
        offset = _OFFSET.search(text[:start]) if word in {"before", "after"} else None
        weekend = _WEEKEND_OFFSET.search(text[:start]) if word in {"before", "after"} else None
        if weekend is not None:
            # "last weekend before 10 April 2023" is not this week's weekend: the date's range is
            # searched for the weekend's words, which a note of it holds ("last weekend we…").
            while pieces and pieces[-1].end > weekend.start():
                pieces.pop()
        if offset is not None:
            introduced = _PREPOSITION.search(text[: offset.start()])  # "in the week before …"
            start = introduced.start() if introduced else offset.start()
            pieces.append(_Piece(start, first.end, _next_to(span, word, offset)))
        else:
            # "from" alone is not "since": "notes from last week" are notes of last week.
            pieces.append(_Piece(start, first.end, span, _OPENERS.get(word, "")))
        index += 1
    return pieces


def _next_to(span: Span, word: str, offset: re.Match[str]) -> Span:
    """ "the week before 3 May": the 7 days up to 3 May; "two days after 3 May": 4 and 5 May."""
    count = _number(offset.group("n")) if offset.group("n") else 1
    unit = offset.group("unit").lower()
    if word == "before":
        return _units_before(span[0], unit, count), span[0]
    if unit in {"day", "week"}:
        return span[1], span[1] + timedelta(days=count * (7 if unit == "week" else 1))
    return span[1], _units_before(span[1], unit, -count)


def _bounds(pieces: list[_Piece]) -> tuple[date | None, date | None]:
    """The dates the pieces cover together; several plain ones ("in March or April") are joined."""
    since: date | None = min(piece.span[0] for piece in pieces)
    until: date | None = max(piece.span[1] for piece in pieces)
    if len(pieces) == 1:
        piece = pieces[0]
        if piece.opens in {"since", "after"}:
            since, until = (piece.span[0] if piece.opens == "since" else piece.span[1]), None
        elif piece.opens in {"before", "until"}:
            since, until = None, (piece.span[0] if piece.opens == "before" else piece.span[1])
    return since, until


# --- Clock, topic and mode ----------------------------------------------------------------------------

_UPLOAD_VERBS = re.compile(
    r"\b(?:upload(?:s|ed|ing)?|add(?:s|ed|ing)?|record(?:s|ed|ing)?|sav(?:e|es|ed|ing)|import(?:s|ed|ing)?)\b",
    re.IGNORECASE,
)
# What someone wrote on a day is what is dated that day: "what did I write yesterday?" is not today's note
# that says "booked the flights last night", nor one of last month that says "book club next month".
_WRITING_VERBS = re.compile(
    r"\b(?:writ(?:e|es|ing|ten)|wrote|jot(?:s|ted|ting)?|not(?:e|es|ed|ing)\s+down|typ(?:e|es|ed|ing)\s+(?:up|out))\b",
    re.IGNORECASE,
)
# "to-do" is a word of its own (a topic), not "to" and "do".
_WORDS = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*|\d+")
# Words that carry no topic: question words, pronouns, auxiliaries, and the verbs and nouns of
# "what did I do / upload / talk about" questions.
_FILLER = frozenset(
    """
    what which who whom whose when where why how did do does done doing i me my mine myself we us our
    you your was were is are am be been being have has had having the a an any anything something
    everything all some of in on at from to for about by with up there it its that this these those
    then so and or show list tell give find see get got let please can could would will should
    happen happened happening talk talked talking discuss discussed say said write wrote written work
    worked working go went going upload uploaded uploads uploading add added adding record recorded
    recording recordings save saved import imported store stored note notes file files document
    documents source sources stuff thing things new recent recently latest earlier ago else again
    whole time s t ve ever down jot jotted noted typed writing kept made here few couple
    planned plan plans scheduled schedule upcoming coming due booked lined agenda calendar diary busy free
    """.split()
)


def _topical(text: str) -> bool:
    return any(word not in _FILLER for word in _WORDS.findall(text.lower()))


def _without(text: str, pieces: list[_Piece]) -> str:
    kept, position = [], 0
    for piece in pieces:
        kept.append(text[position : piece.start])
        position = piece.end
    kept.append(text[position:])
    joined = " ".join("".join(kept).split())
    return re.sub(r"\s+([?.!,;:])", r"\1", joined).strip(" ,;:")


def interpret(question: str, *, now: datetime, zone: ZoneInfo) -> Interpretation:
    """Read `question`'s time expression in `zone` at `now` (aware): range, clock, mode and remaining topic."""
    today = now.astimezone(zone).date()
    pieces = _pieces(question, today, ahead=looks_ahead(question))
    if not pieces:
        return Interpretation(mode="semantic", date_range=None, topic=question.strip())
    since, until = _bounds(pieces)
    topic = _without(question, pieces)
    date_range = DateRange(
        since=datetime.combine(since, time.min, tzinfo=zone) if since else None,
        until=datetime.combine(until, time.min, tzinfo=zone) if until else None,
        clock=clock_of(question),
    )
    phrase = " … ".join(" ".join(question[piece.start : piece.end].split()) for piece in pieces)
    return Interpretation(
        mode="hybrid" if _topical(topic) else "temporal", date_range=date_range, topic=topic, phrase=phrase
    )


def without_times(text: str) -> str:
    """`text` with every time expression a rule reads in it ("on 24 November", "in 2024", "at 10:30")
    blanked out, however it resolves: what is left are the numbers that are not times."""
    for _, match in _matches(text):
        text = text[: match.start()] + " " * (match.end() - match.start()) + text[match.end() :]
    return text


def looks_ahead(question: str) -> bool:
    """Whether the question asks about what is still to come ("what's on…", "when is…", "…will…")."""
    return bool(_LOOKS_AHEAD.search(question))


def clock_of(question: str) -> Clock:
    """ "upload" when the question is about adding things ("what did I upload / add / record…"), "written" when
    about writing them ("what did I write / jot down…"), else "content"."""
    if _UPLOAD_VERBS.search(question):
        return "upload"
    return "written" if _WRITING_VERBS.search(question) else "content"


def is_topical(text: str) -> bool:
    """Whether `text` has anything to search for besides filler ("what did I add?" has not)."""
    return _topical(text)


def with_dates(text: str, said_on: date) -> str:
    """`text` with the date after each expression that counts from the day it was said.

    "I went to the support group yesterday" in a note of 8 May 2023 reads "… yesterday (7 May
    2023)": a reader (or a small model) who sees the passage apart from its note's date cannot work
    that out, and "when did I …?" wants the date.
    """
    back = [
        found
        for found in _expressions(text, said_on)
        if found.rule in _RELATIVE and (found.rule is not _WEEKDAY_RULE or _PAST.match(found.match.group(0)))
    ]
    ahead = [
        found
        for found in _expressions(text, said_on, ahead=True)
        if found.rule in _RELATIVE_AHEAD
        and not _STORY_NEXT.search(text[: found.start])
        and not _A_WHILE.search(found.match.group(0))
    ]
    out, done = [], 0
    for found in sorted(back + ahead, key=lambda found: (found.start, -found.end)):
        span = found.span(said_on)
        if span is None or found.start < done:
            continue
        label, _ = _dates_label(span[0], span[1] - timedelta(days=1))
        out.append(f"{text[done : found.end]} ({label})")
        done = found.end
    return _with_dates_ahead("".join(out) + text[done:], said_on)


# The longest span a passage's mention of time may cover to be searched by: "this year" or "in 2019"
# speaks of too many days to find the passage by any of them.
MENTION_MAX_DAYS = 31


def mentioned(text: str, said_on: date) -> list[Span]:
    """The spans of days `text` speaks of, read from `said_on` (the day it was written).

    A note tells of plans before they happen and of events after: "she's off 2-6 Nov" in a note of
    6 October 2026 is 2–6 November 2026, "last Friday" the Friday before `said_on`, "Thurs 9.40am" the
    Thursday after it (as `with_dates` reads them for the model). A date without
    its year is the nearer of its two readings (the last such day or the next); a bare weekday ("on
    Friday") may be either, and is left out, as is a span over `MENTION_MAX_DAYS`.
    """
    past = _pieces(text, said_on)
    coming = {piece.end: piece for piece in _pieces(text, said_on, ahead=True)}
    spans: list[Span] = []
    for piece in past:
        other = coming.pop(piece.end, None)
        span = piece.span
        if other is not None and other.span != span:
            if _distance(other.span, said_on) <= 7 and _distance(span, said_on) <= 7:
                continue  # "on Friday", "the weekend": the last one or the next
            span = min(span, other.span, key=lambda candidate: _distance(candidate, said_on))
        spans.append(span)
    spans += [piece.span for piece in coming.values()]  # "in two weeks", read only as what is to come
    # "Fri 28th", "Thurs 9.40am": how people jot down what is to come.
    spans += [_unit_span(when, "day") for _, _, when in _days_ahead_in(text, said_on)]
    return sorted({span for span in spans if (span[1] - span[0]).days <= MENTION_MAX_DAYS})


# A span of days a text speaks of tells of a range's days when it is not much wider than the range: "book club
# next month" speaks of December, not of yesterday, nor does "next week" tell what is on Friday; "the weekend"
# does tell of its Saturday. At most `MENTION_WIDTH` times the range's length, or `MENTION_WIDTH_MIN_DAYS`; an
# open range ("since Monday") takes any. The search applies the same rule in SQL (`chat.selectors._MENTIONED`).
MENTION_WIDTH = 2
MENTION_WIDTH_MIN_DAYS = 3


def speaks_of(span: Span, since: date | None, until: date | None) -> bool:
    """Whether a span of days a text speaks of tells of the range [since, until)."""
    if (until is not None and span[0] >= until) or (since is not None and span[1] <= since):
        return False
    if since is None or until is None:
        return True
    return (span[1] - span[0]).days <= max(MENTION_WIDTH_MIN_DAYS, MENTION_WIDTH * (until - since).days)


def speaking_of(text: str, said_on: date, since: date | None, until: date | None) -> str | None:
    """The first line of `text` (the sentence, in a long one) that speaks of a day in [since, until), as
    `mentioned` reads it from `said_on`: what a listing of those days shows of a note written before them."""
    for line in text.splitlines():
        for sentence in _SENTENCE_END.split(line) if len(line.split()) > 20 else [line]:
            if any(speaks_of(span, since, until) for span in mentioned(sentence, said_on)):
                return sentence.strip()
    return None


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def mentioned_times(text: str, at: datetime, zone: ZoneInfo) -> list[tuple[datetime, datetime]]:
    """`mentioned` for a passage dated `at`, as half-open ranges between local midnights in `zone`."""
    return [
        (datetime.combine(since, time.min, tzinfo=zone), datetime.combine(until, time.min, tzinfo=zone))
        for since, until in mentioned(text, at.astimezone(zone).date())
    ]


def _distance(span: Span, day: date) -> int:
    """Days from `day` to the nearest day of `span` (0 inside it)."""
    if span[0] <= day < span[1]:
        return 0
    return min(abs((span[0] - day).days), abs((span[1] - timedelta(days=1) - day).days))


# A line that is only a date, as diaries and logs head their days: "Sat 28 Nov", "## Monday 3 March",
# "**2026-11-28**" — what is left of it without its date, its weekday and its marks.
_HEADING_REST = re.compile(r"[\W_]+|\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\b", re.IGNORECASE)


def under_date_headings(text: str, said_on: date) -> list[tuple[str, date | None]]:
    """Each line of `text` with the day of the date heading it stands under, None for the headings
    themselves and the lines before the first. A yearless date is the last such day on or before
    `said_on` (the day the note was written)."""
    lines: list[tuple[str, date | None]] = []
    day: date | None = None
    for line in text.splitlines():
        found = [found for found in _expressions(line, said_on) if found.rule is not _WEEKDAY_RULE]
        span = found[0].span(said_on) if len(found) == 1 else None
        rest = _HEADING_REST.sub("", line[: found[0].start] + line[found[0].end :]) if found else line
        if span is not None and span[1] - span[0] == timedelta(days=1) and not rest:
            day = span[0]
            lines.append((line, None))
        else:
            lines.append((line, day))
    return lines


# What a note says of days to come, where it is unmistakable: "tomorrow" ("tmrw"); a weekday with its
# day of the month ("Fri 28th", "Thursday the 4th"; not when its month follows, "Monday 7 December 2026"
# says it all) — the nearest such day to the note's date, or the next such day of the month where the weekday
# slipped; and a
# weekday with a time of day ("Thurs 9.40am", "Tuesday at 7pm", "Thursday at 9"), which is how people jot down an
# appointment — the first such weekday after the note's date (a week on when it is that day: "next
# session Thurs 9.40am" written on a Thursday). A bare weekday is left alone: "on Friday" in a note may
# be the one before or the one after.
_SHORT_WEEKDAYS = r"(?P<weekday>mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?\.?"
_AHEAD = [
    (re.compile(r"\b(?:tomorrow|tmrw|tmr|tmoz|2moro)\b", re.IGNORECASE), lambda g, said_on: said_on + timedelta(days=1)),
    (
        re.compile(rf"\b{_SHORT_WEEKDAYS}\s+(?:the\s+)?(?P<day>[0-3]?\d)(?:st|nd|rd|th)?\b(?!\s*(?:[:.]\d|am|pm|%|[-–]\s*\d{{1,2}}(?:[:.]\d|\s*[ap]m)|(?:of\s+)?(?:{_alternatives(list(_MONTHS))})\b))", re.IGNORECASE),
        lambda g, said_on: _weekday_and_day(g["weekday"], int(g["day"]), said_on),
    ),
    (
        re.compile(rf"\b{_SHORT_WEEKDAYS}\s+(?:(?:at\s+|@\s*)?(?:[01]?\d[:.][0-5]\d(?:\s*[ap]\.?m\b\.?)?|[01]?\d\s*[ap]\.?m\b\.?)|(?:at\s+|@\s*)(?:1[0-2]|[1-9])\b(?![.:,]\d|\s*%))", re.IGNORECASE),
        lambda g, said_on: _weekday_after(g["weekday"], said_on),
    ),
]  # fmt: skip


_DAY_WORD = re.compile(r"(?:today|tonight|yesterday|tomorrow)\b", re.IGNORECASE)
_EMPHASIS = re.compile(r"\*\*|__|[\"“”]")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;(\[]|^\s*(?:[-*+]|\d+[.)])|\*\*|__|[\"“])\s*$")


def _in_a_title(text: str, match: re.Match[str]) -> bool:
    """A "tomorrow", "today" or "yesterday" that is part of a title: "**Tomorrow, and Tomorrow, and Tomorrow**"
    (a book), "Who recommended Tomorrow, and Tomorrow…?" — in bold or in quotes, or with a capital where no
    sentence starts. (Weekdays and months always have their capital.)"""
    if not _DAY_WORD.match(match.group(0)):
        return False
    line = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
    if len(_EMPHASIS.findall(line)) % 2:  # inside "**…**" or quotes opened on its line
        return True
    return match.group(0)[:1].isupper() and not _SENTENCE_START.search(line)


def _weekday_after(weekday: str, said_on: date) -> date:
    """The first day after `said_on` that falls on `weekday` ("thurs")."""
    wanted = next(number for name, number in _WEEKDAYS.items() if name.startswith(weekday.lower()[:3]))
    return said_on + timedelta(days=(wanted - said_on.weekday() - 1) % 7 + 1)


def _weekday_and_day(weekday: str, day: int, said_on: date) -> date | None:
    """The date nearest `said_on` (within about six weeks) that falls on `day` of its month and on `weekday`;
    if none does (a weekday slipped), the first that falls on `day` after it: "I've booked Kieran for
    Wednesday the 12th" in an e-mail of 26 November is a plan, 12 December, not 12 November."""
    wanted = next(number for name, number in _WEEKDAYS.items() if name.startswith(weekday.lower()[:3]))
    near = [
        candidate
        for offset in range(-1, 2)
        if (candidate := _day_of(*_month_shift(said_on, offset), day)) is not None
        and abs((candidate - said_on).days) <= 45
    ]
    matching = [candidate for candidate in near if candidate.weekday() == wanted]
    if not matching:
        return min((candidate for candidate in near if candidate > said_on), default=None)
    return min(matching, key=lambda candidate: abs((candidate - said_on).days))


def _month_shift(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def _days_ahead_in(text: str, said_on: date) -> list[tuple[int, int, date]]:
    """Where `text` jots down a day to come (`_AHEAD`), and which day: (start, end, day), in no order."""
    found: list[tuple[int, int, date]] = []
    for pattern, resolve in _AHEAD:
        for match in pattern.finditer(text):
            when = resolve(match.groupdict(), said_on)
            if when is not None and not _in_a_title(text, match):
                found.append((match.start(), match.end(), when))
    return found


def _with_dates_ahead(text: str, said_on: date) -> str:
    found = [(start, end, when) for start, end, when in _days_ahead_in(text, said_on) if text[end:][:2] != " ("]
    out, done = [], 0
    for start, end, when in sorted(found):
        if start >= done:
            out.append(f"{text[done:end]} ({day_label(when)})")
            done = end
    return "".join(out) + text[done:]


# --- Describing a range to people ---------------------------------------------------------------------


def day_label(day: date) -> str:
    """A date as people write it: "3 May 2026"."""
    return f"{day.day} {day:%B %Y}"


def _dates_label(since: date, last: date) -> tuple[str, str]:
    """The dates from `since` to `last` inclusive, and whether that is a "day", a "period" (month, year) or "span"."""
    if since == last:
        return day_label(since), "day"
    if since.day == 1 and _add_months(since, 1) - timedelta(days=1) == last:
        return f"{since:%B %Y}", "period"
    if (since.month, since.day, last.month, last.day) == (1, 1, 12, 31) and since.year == last.year:
        return str(since.year), "period"
    if (since.year, since.month) == (last.year, last.month):
        return f"{since.day}–{day_label(last)}", "span"
    if since.year == last.year:
        return f"{since.day} {since:%B} – {day_label(last)}", "span"
    return f"{day_label(since)} – {day_label(last)}", "span"


def _moment(value: datetime, zone: ZoneInfo) -> str:
    local = value.astimezone(zone)
    return day_label(local.date()) + ("" if local.time() == time.min else f" {local:%H:%M}")


def _midnight(value: datetime | None, zone: ZoneInfo) -> bool:
    return value is not None and value.astimezone(zone).time() == time.min


def describe(date_range: DateRange, *, zone: ZoneInfo) -> str:
    """The range for people, read in `zone`: "Content from 1–15 April 2026", "Added on 3 May 2026", "Written
    in May 2026"."""
    start = {"upload": "Added", "written": "Written", "content": "Content"}[date_range.clock]
    since, until = date_range.since, date_range.until
    if since is not None and until is not None and _midnight(since, zone) and _midnight(until, zone):
        dates, shape = _dates_label(since.astimezone(zone).date(), until.astimezone(zone).date() - timedelta(days=1))
        if start == "Content":
            return f"Content from {dates}"
        return {"day": f"{start} on ", "period": f"{start} in "}.get(shape, f"{start} ") + dates
    if since is not None and until is not None:
        return f"{start} from {_moment(since, zone)} to {_moment(until, zone)}"
    if since is not None:
        return f"{start} since {_moment(since, zone)}"
    if until is not None:
        return f"{start} before {_moment(until, zone)}"
    return f"{start} from any time"
