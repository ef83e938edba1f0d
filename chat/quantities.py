"""Quantities and their units: an answer that quotes a number keeps the unit its passages give it.

A small model reading "4% raise" writes "a $4 raise"; reading "1hr labour £70" it may write "70 hours".
The number is in the passages, so the sentence looks supported, but what it tells is not what they say.
A quantity of the answer is *misquoted* when its number stands in the passages only with units of
another meaning: never bare, never with the answer's unit. A number the passages do not have, or have
bare ("groceries 700" answered "€700"), is not this rule's to judge — but a currency the passages never
name is taken off it: "quartz ~1,200" is not "$1,200" to someone who counts in euro. A sum of money the
passages give in no form at all (not in thousands, not as two of their numbers added or taken apart) is
*invented*: "€3,200" from "€3k more" and "~€1,200". Rules of how people write amounts, in notes, prose and
dialogue alike.
"""

import re
from decimal import Decimal, InvalidOperation

# Each way of writing a unit, to the units it may mean ("pounds" is money or weight; "°" either scale).
_UNITS: dict[str, frozenset[str]] = {}


def _unit(meanings: str, *spellings: str) -> None:
    for spelling in spellings:
        _UNITS[spelling] = frozenset(meanings.split())


_unit("$", "$", "usd", "dollar", "dollars", "bucks")
_unit("€", "€", "eur", "euro", "euros")
_unit("£", "£", "gbp", "quid")
_unit("£ lb", "pound", "pounds")
_unit("¥", "¥", "yen", "jpy")
_unit("₹", "₹", "inr", "rupee", "rupees")
_unit("%", "%", "percent", "per cent")
_unit("second", "sec", "secs", "second", "seconds")
_unit("minute", "min", "mins", "minute", "minutes")
_unit("hour", "h", "hr", "hrs", "hour", "hours")
_unit("day", "day", "days")
_unit("week", "wk", "wks", "week", "weeks")
_unit("month", "month", "months", "mo", "mos")
_unit("year", "yr", "yrs", "year", "years")
_unit("mm", "mm", "millimetre", "millimetres", "millimeter", "millimeters")
_unit("cm", "cm", "centimetre", "centimetres", "centimeter", "centimeters")
_unit("metre", "metre", "metres", "meter", "meters")
_unit("km", "km", "kms", "kilometre", "kilometres", "kilometer", "kilometers")
_unit("mile", "mi", "mile", "miles")
_unit("foot", "ft", "foot", "feet")
_unit("mg", "mg", "milligram", "milligrams")
_unit("g", "g", "gram", "grams", "gr")
_unit("kg", "kg", "kgs", "kilo", "kilos", "kilogram", "kilograms")
_unit("lb", "lb", "lbs")
_unit("oz", "oz", "ounce", "ounces")
_unit("ml", "ml", "millilitre", "millilitres", "milliliter", "milliliters")
_unit("l", "l", "litre", "litres", "liter", "liters")
_unit("°C °F", "°", "degree", "degrees")
_unit("°C", "°c", "c", "celsius")
_unit("°F", "°f", "f", "fahrenheit")
_unit("kb", "kb")
_unit("mb", "mb")
_unit("gb", "gb")
_unit("tb", "tb")
_unit("am", "am", "a.m.")
_unit("pm", "pm", "p.m.")

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?::\d{2}|\.\d+)?"
_BEFORE = r"[$€£¥₹]"
_AFTER = "|".join(re.escape(spelling) for spelling in sorted(_UNITS, key=len, reverse=True))
# A number, the symbol before it ("€240") and the unit after it ("4%", "500mg", "2 hrs", "200 °C", "7pm", "240 €").
# A unit is a word of its own: "40k" and "the 1990s" are numbers written bare.
_QUANTITY = re.compile(
    rf"(?P<before>{_BEFORE})?\s?(?<![\d.,:])(?P<number>{_NUMBER})(?![\d,]*\d)"
    rf"(?:\s?(?P<after>{_AFTER})(?![\w%]))?",
    re.IGNORECASE,
)


def quantities(text: str) -> list[tuple[str, frozenset[str]]]:
    """Each number of `text` with the units it may be in (empty when it is written bare)."""
    return [(value, units) for _, value, units in _read(text)]


def _read(text: str) -> list[tuple[str, str, frozenset[str]]]:
    """Each quantity of `text` as written, its value and the units it may be in."""
    found = []
    for match in _QUANTITY.finditer(text):
        units: frozenset[str] = frozenset()
        for spelling in (match["before"], match["after"]):
            if spelling:
                units |= _UNITS.get(spelling.lower(), frozenset())
        found.append((match.group(0).strip(), _value(match["number"]), units))
    return found


def _value(number: str) -> str:
    """The same value however written: "1,255" and "1255", "4.50" and "4.5", "07:15" and "7:15"."""
    if ":" in number:
        return number.lstrip("0") or number
    try:
        return format(Decimal(number.replace(",", "")).normalize(), "f")
    except InvalidOperation:
        return number


Given = dict[str, list[frozenset[str]]]


def given(passages: list[str]) -> Given:
    """Each number of the passages, to the units each time it stands in them (read once per answer)."""
    found: Given = {}
    for passage in passages:
        for value, units in quantities(passage):
            found.setdefault(value, []).append(units)
    return found


def misquoted(sentence: str, passages: Given) -> list[str]:
    """The quantities of `sentence` whose number the passages give only in other units ("$4" where
    they say "4%"), each as the sentence writes it."""
    wrong = []
    for written, value, units in _read(sentence):
        theirs = passages.get(value)
        if units and theirs and not any(not other or other & units for other in theirs):
            wrong.append(written)
    return wrong


_CURRENCIES = frozenset("$ € £ ¥ ₹".split())
_SCALES = (Decimal(1), Decimal(1000), Decimal(1_000_000), Decimal(1_000_000_000))  # "3k", "€1.2m", "2bn" as told
_SUMMED_MAX = 200  # of the passages' numbers, the first this many are added and taken from each other


def invented(sentence: str, passages: Given) -> list[str]:
    """The sums of money in `sentence` that the passages never give, each as the sentence writes it: "€3,200"
    where they say "rooflight … €3k more" and "~€1,200 for calcs" and "85-95k". A sum they give in thousands
    or millions ("€3,000" for "3k", "€1.2k" for "1,200"), or two of their numbers so written added or one
    taken from the other ("€35,000" for "95k" less "60k"), is given."""
    told = {Decimal(value) for value in passages if _is_decimal(value)}
    numbers = sorted(told)[:_SUMMED_MAX]
    wrong = []
    for written, value, units in _read(sentence):
        if not units & _CURRENCIES or not _is_decimal(value):
            continue
        scaled = {Decimal(value) / scale for scale in _SCALES} | {Decimal(value) * scale for scale in _SCALES}
        if scaled & told or any({amount - number, amount + number} & told for amount in scaled for number in numbers):
            continue
        wrong.append(written)
    return wrong


def _is_decimal(value: str) -> bool:
    return bool(re.fullmatch(r"\d+(?:\.\d+)?", value))


def without_unnamed_currency(sentence: str, passages: Given) -> str:
    """`sentence` without the currency symbols put on numbers the passages give only bare, where they name
    that currency nowhere ("$1,200" from "quartz ~1,200" becomes "1,200"); "€700" stays where they say
    "€" of another amount."""
    named = {unit for readings in passages.values() for units in readings for unit in units} & _CURRENCIES
    cut = []
    for match in _QUANTITY.finditer(sentence):
        symbol = match["before"]
        theirs = passages.get(_value(match["number"]))
        if symbol and theirs and not any(theirs) and not _UNITS[symbol] & named:
            cut.append((match.start("before"), match.start("number")))
    for start, end in reversed(cut):
        sentence = sentence[:start] + sentence[end:]
    return sentence
