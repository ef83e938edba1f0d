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
"you", whatever the answer cites (`the_user_as_you`), and so is the "they" the model goes on with ("They
were snappy all week" in the summary of a journal; 3 of the first week's 10 summaries, 2026-12-07).
"""

import re

from chat import kinds
from chat.grounding import STOPWORDS

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


_THE_USER = r"\b(?P<user>the user)\b(?:(?P<own>['’]s)\b|(?:\s+(?P<verb>(?-i:[a-z]+|(?<=[A-Z] )[A-Z]+)\b))?)"
_AGREEING = {"is": "are", "was": "were", "has": "have", "does": "do", "goes": "go"}
_NO_VERBS = frozenset("always sometimes perhaps thus afterwards also".split())  # words in -s a verb may follow
# The pronouns the model uses for "the user" after naming them so, and what each is said to the person.
_THEY = r"\b(?P<they>they['’](?:re|ve|d|ll)|they|their|theirs|them|themselves)\b"
_AS_YOU = {"they": "you", "their": "your", "theirs": "yours", "them": "you", "themselves": "yourself"}
# Others "they" may point at: people named together ("Grace and Ravi"), or a plural of living things
# ("the kids", "the guests", "the dogs": `kinds.is_living`).
_GROUP = r"\b(?P<group>(?-i:[A-Z][a-z]+(?:,\s*[A-Z][a-z]+)*,?\s+(?:and|&)\s+[A-Z][a-z]+))"
_PLURAL = r"\b(?P<plural>(?-i:[a-z]+[^s\W]s))\b"  # "the guests", not "boss" or "class"
_TOLD_OF = re.compile("|".join((_THE_USER, _THEY, _GROUP, _PLURAL)), re.IGNORECASE)
_OPENS = re.compile(r"(?:^|[.!?]\s+|\n\s*(?:[-*•]\s+)?)$")


def the_user_as_you(text: str) -> str:
    """`text` with "the user" said as "you": "The user is staying…" → "You are staying…", "the user's
    sister" → "your sister". The model goes on to call the user "they": from "the user" on, "they",
    "their" and "them" are "you" and "your" until someone else they may point at is named ("Grace and
    Ravi", "the kids")."""
    parts: list[str] = []
    last = 0
    theirs = False  # whether "they" is the user here
    for match in _TOLD_OF.finditer(text):
        if match["group"] or match["plural"]:
            others = match["group"] or (match["plural"] not in STOPWORDS and kinds.is_living(match["plural"]))
            theirs = theirs and not others  # "does" is no doe
            continue
        if match["they"] and not theirs:
            continue
        said = _you(match) if match["user"] else _AS_YOU.get(match["they"].lower(), "")
        if not said:  # "they're", "they've": their ending kept
            they = match["they"]
            said = ("You" if they[0].isupper() else "you") + they[4:]
        opens = bool(_OPENS.search(text[: match.start()]))
        parts += [text[last : match.start()], said[0].upper() + said[1:] if opens else said]
        last = match.end()
        theirs = True
    return "".join(parts) + text[last:]


def _you(match: re.Match[str]) -> str:
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
    return you.upper() if match["user"].isupper() else you  # "THE USER IS LATE" → "YOU ARE LATE"
