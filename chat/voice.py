"""An answer spoken to the person: where it repeats their own notes' "I", "me" and "my", it says
"you" and "your".

A person's notes are written in the first person ("I paid €110 cash today"), and the small model
copies that voice into its answers: asked "How far did I run in Griffith Park?", it answered "I ran
3.3 kilometers in Griffith Park [1]." — the assistant claiming the run; 10 of the first week's 124
answers read so (2026-12-07). Told in the prompt to speak to the person as "you", the 1.5B model
still wrote "I ran…" and "Rebecca wants me to lead…"; told also to turn "I" into "you", it wrote
"You charged €240 for the brakes." for what the mechanic charged, and lost three first-week answers.
So the answer is turned here, by rule, where the passages it cites are the person's own words.

The prompt speaks of the person as "the user" ("questions about the user's own notes"), and the model
answers in those words: "The user is staying at Hotel Vesterlys [1]." To the person that is always
"you", whatever the answer cites (`the_user_as_you`).
"""

import re

# The first person and what it becomes, the verb that agrees with it included.
_SECOND_PERSON = {
    "i am": "you are",
    "i'm": "you're",
    "i was": "you were",
    "i've": "you've",
    "i'd": "you'd",
    "i'll": "you'll",
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
}
_FIRST_PERSON = re.compile(
    r"(?<![\w'’-])(?:i am|i['’]m|i was|i['’]ve|i['’]d|i['’]ll|i|me|my|mine|myself)(?![\w'’-])", re.IGNORECASE
)
# "World War I", "Type I", "Part I": a numeral, not the writer.
_NUMBERED = re.compile(
    r"\b(?:war|type|part|phase|stage|grade|level|class|tier|chapter|act|book|volume|section|article|appendix|"
    r"annex|schedule|figure|table)\s*$",
    re.IGNORECASE,
)
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”')  # someone's words as they said them stay theirs
# A sentence in which the assistant speaks of itself ("I couldn't find the date", "I'm not sure"): its "I" is its own.
_ASSISTANT = re.compile(
    r"\bI (?:could(?:n['’]t| not)|can(?:['’]t|not| not)|do(?:n['’]t| not)|did(?:n['’]t| not)) "
    r"(?:find|see|know|tell|have (?:any|information|access))\b"
    r"|\bI(?:['’]m| am) (?:sorry|not sure|unable|afraid|an? (?:AI|assistant|language model))\b"
)
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?]+(?=[^\s.!?]))+(?:[.!?]+|\n|$)")  # "3.3" inside one


def spoken_to(text: str) -> str:
    """`text` with the first person turned into the second, except in quotations and in sentences
    about the notes themselves."""
    return _SENTENCE.sub(lambda sentence: _sentence_spoken_to(sentence.group()), text)


def _sentence_spoken_to(sentence: str) -> str:
    if _ASSISTANT.search(sentence):
        return sentence
    parts: list[str] = []
    last = 0
    for quoted in _QUOTED.finditer(sentence):
        parts += [_turned(sentence[last : quoted.start()], sentence_start=last == 0), quoted.group()]
        last = quoted.end()
    parts.append(_turned(sentence[last:], sentence_start=last == 0))
    return "".join(parts)


def _turned(part: str, *, sentence_start: bool) -> str:
    def turn(match: re.Match[str]) -> str:
        word = match.group()
        before = part[: match.start()]
        if word.lower() == "i" and _NUMBERED.search(before):
            return word
        new = _SECOND_PERSON[word.lower().replace("’", "'")]
        opens = not before.strip(" \t-*•(") and sentence_start
        return new[0].upper() + new[1:] if opens or (word[0].isupper() and word.lower() != "i") else new

    return _FIRST_PERSON.sub(turn, part)


_THE_USER = re.compile(
    r"\b(?P<user>the user)\b(?:(?P<own>['’]s)\b|(?:\s+(?P<verb>(?-i:[a-z]+|(?<=[A-Z] )[A-Z]+)\b))?)", re.IGNORECASE
)
_AGREEING = {"is": "are", "was": "were", "has": "have", "does": "do", "goes": "go"}
_NO_VERBS = frozenset("always sometimes perhaps thus afterwards also".split())  # words in -s a verb may follow
_THEIR = re.compile(r"\b(?:their|themselves)\b")
_SOMEONE = re.compile(r"(?<!^)\b[A-Z][a-z]+|\band\b|,")  # someone else "their" may point at


def the_user_as_you(text: str) -> str:
    """`text` with "the user" said as "you": "The user is staying…" → "You are staying…", "the user's
    sister" → "your sister"; "their" after it, with no one else named in between, is "your"."""
    return _SENTENCE.sub(lambda sentence: _user_turned(sentence.group()), text)


def _user_turned(sentence: str) -> str:
    parts: list[str] = []
    last = 0
    for match in _THE_USER.finditer(sentence):
        you = "your" if match["own"] else "you"
        if match["verb"]:
            verb = match["verb"].lower()
            if verb in _AGREEING:
                verb = _AGREEING[verb]
            elif verb.endswith("ies"):
                verb = verb[:-3] + "y"  # "carries"
            elif verb.endswith("s") and not verb.endswith("ss") and verb not in _NO_VERBS:
                verb = verb[:-1]  # "wants", "plans"
            you += " " + verb
        if match["user"].isupper():
            you = you.upper()  # "THE USER IS LATE" → "YOU ARE LATE"
        opens = not sentence[: match.start()].strip(" \t-*•(")
        parts += [_their_turned(sentence[last : match.start()]) if parts else sentence[last : match.start()]]
        parts.append(you[0].upper() + you[1:] if opens else you)
        last = match.end()
    rest = sentence[last:]
    parts.append(_their_turned(rest) if parts else rest)
    return "".join(parts)


def _their_turned(part: str) -> str:
    """ "their" → "your" up to the first name, "and" or comma: after it, "their" may be someone else's."""
    other = _SOMEONE.search(part)
    head, tail = (part[: other.start()], part[other.start() :]) if other else (part, "")
    return _THEIR.sub(lambda match: "your" if match.group() == "their" else "yourself", head) + tail
