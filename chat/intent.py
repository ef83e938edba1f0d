"""What a message to the chat is, and so which path answers it (issue 20: route → retrieve → write → check → store).

- **conversation** — a greeting, thanks, a goodbye, or a question about the assistant itself ("what can
  you do?"): answered at once, without a search, sources or the abstention sentence.
- **question** — everything else: searched and answered from the notes. A question that leans on the
  conversation before it ("what else did he recommend?", "and the one after that?") is a follow-up:
  it is searched as a standalone question made from the previous turn, and the rewrite is kept in the
  answer's trace. (Whether the search reads it as a listing by time is the retrieval's call: a question
  naming only a time, "what did I add yesterday?", lists that time's sources.)

A question also has a **shape**, which decides how much is read and how the answer is written:

- **list** — it asks for several things ("which books…", "what exercises…", "what do I need to…",
  "who still hasn't…"): every match, one per line;
- **summary** — it asks for the gist ("summarize…", "what were my plans for…", "how did … go?", "what
  happened at work?"): a short paragraph;
- **fact** — everything else: one or two sentences.

Rules, not the model: they decide in microseconds, a greeting never waits for the model, and each rule
is a thing a person says, not a dataset's format. A message is conversation only when every clause of
it is: "hi, what did Maria promise?" is a question.
"""

import re
from dataclasses import dataclass

from chat import grounding, temporal

CONVERSATION = "conversation"
QUESTION = "question"
FACT, LIST, SUMMARY = "fact", "list", "summary"

_GREETING = (
    r"(?:hi|hello|hey|hiya|howdy|yo|hallo|good (?:morning|afternoon|evening|day)|morning|evening)"
    r"(?: there| again| you| everyone)?"
    r"|how are you(?: doing| today)?|how's it going|how is it going|what's up|nice to meet you"
)
_FAREWELL = (
    r"(?:bye|goodbye|bye bye|see you|see ya|good night|later|that's all|that is all|nothing else)(?: for now| then)?"
)
# Questions about the assistant and the app itself, not about the notes: what it does, how to ask it,
# what it takes and how to add it ("how do I add a note?" — but "how do I fix the bike?" is a question).
_KEPT = r"(?:notes?|files?|pdfs?|documents?|recordings?|audio|voice (?:memos?|notes?)|sources?|things|stuff)"
_META = (
    r"(?:what can you do|what do you do|what are you|who are you|what is this|how do(?:es)? (?:you|this|it) work|"
    r"what can i ask(?: you)?|what (?:should|can) i ask(?: you)?|help(?: me)?|how do i use (?:you|this)|"
    r"what are you for|what are you able to do|can you help(?: me)?|how can you help(?: me)?|"
    r"how (?:should|do|can) i ask(?: you)?(?: things| questions)?(?: to get (?:good|better) answers)?|"
    rf"what (?:kinds?|sorts?|types?) of {_KEPT} can (?:i|you) (?:add|upload|save|use|read|take)|"
    rf"(?:how )?(?:do|can|should) i (?:add|upload|save|import|record|delete|remove) (?:a |an |my |new |more )*{_KEPT}"
    rf"(?: here| to you)?|how do i (?:add|upload|save|import|record|delete|remove) (?:a |an |my |new |more )*{_KEPT}"
    r"(?: here| to you)?)"
)
_KINDS = {
    "greeting": re.compile(rf"(?:{_GREETING})"),
    "farewell": re.compile(rf"(?:{_FAREWELL})"),
    "meta": re.compile(rf"(?:{_META})"),
}
# Thanks and praise are said in too many ways to list as phrases ("ok great", "brilliant ta", "lovely,
# thanks a million"): a clause is one when it is made only of such words and holds at least one that
# thanks or praises. A message with a question mark is never one ("is it good?").
_THANKING = frozenset("thanks thank thx ty ta cheers appreciated appreciate".split())
_PRAISING = frozenset(
    "great perfect awesome cool nice lovely brilliant excellent wonderful helpful useful good amazing fantastic "
    "fab grand super sound sweet class ace legend noted ok okay fine right gotcha understood sense helps helped got "
    "needed see".split()
)
_ACKNOWLEDGING = (
    _THANKING
    | _PRAISING
    | frozenset(
        "oh ah so very really that that's this is was it a lot much again for the you u your help answer info "
        "one stuff got i makes to know all million mill loads tons what".split()
    )
)
# A question about the assistant or the keeping of one's notes, not about what they say: it speaks to
# the assistant ("you", "your") or of "my notes/data/files", and has no other words than these.
_ABOUT_THE_ASSISTANT = frozenset(
    "answer answers answered come comes get gets internet web online google search searches notes note data "
    "files documents sources source stuff things private privacy secure safe safely stored store storing "
    "kept keep cloud server servers local locally offline model ai llm chatgpt gpt openai bot chatbot "
    "assistant human robot real person remember memory earlier previous chats chat conversations "
    "conversation know see read access other others people anyone someone everyone else share shared "
    "trained train made built work works use using uses numbers brackets square citations cite links "
    "sure accurate trust wrong mistakes guess invent make up help find finding".split()
)
_ADDRESSED = re.compile(r"\b(?:you|your|yours)\b|\bmy (?:notes|data|files|documents|sources|stuff|things|chats)\b")
_CLAUSES = re.compile(r"[,.!?;:…]+|\s+-\s+|\s+—\s+")
_NOT_WORDS = re.compile(r"[^\w\s'’-]+")

# A follow-up leans on the turn before: it opens by continuing it, or it names someone or something
# only by a pronoun. "that/this/those/these/there" count only as the question's last word ("when did I
# buy that?"), where they cannot open a clause of their own ("the note that …", "is there …").
_OPENERS = re.compile(
    r"^(?:and|also|so|but|what else|anything else|who else|where else|when else|what about|how about|"
    r"and what about|why(?: is that| was that)?|how come|tell me more|more|what then|then what)\b",
    re.IGNORECASE,
)
_PERSONAL = frozenset("he she him her his hers they them their theirs".split())
_THING = frozenset("it its".split())
# People named by what they are to the person or what they do: a pronoun after one of them in the same
# question points back to it ("what did my sister say about her new job?"), not to the turn before.
_PEOPLE = frozenset(
    """
    person people man men woman women guy guys lady kid kids child children baby boy boys girl girls
    mom mum mother dad father parent parents sister sisters brother brothers sibling siblings son sons
    daughter daughters wife husband partner fiance fiancee spouse grandma grandpa grandmother grandfather
    grandparents aunt uncle cousin cousins nephew niece family friend friends neighbour neighbor
    neighbours neighbors roommate flatmate housemate boyfriend girlfriend
    boss manager colleague colleagues coworker coworkers team client clients customer customers
    landlord landlady tenant tenants doctor doctors dentist nurse physio physiotherapist therapist vet
    mechanic technician plumber electrician builder contractor cleaner teacher teachers coach tutor
    lawyer accountant agent author writer speaker president minister king queen
    """.split()
)
_LAST_ONLY = frozenset("that this those these there then".split())
_WORD = re.compile(r"[A-Za-z][\w'’-]*")
# Capitalized at the start of a sentence without being a name.
_NOT_NAMES = frozenset(
    "i i'm i've i'd you your yes no the a an on in at it its this that these those he she they we my our "
    "what when where which who why how there here and but so if then after before yesterday today tomorrow "
    "monday tuesday wednesday thursday friday saturday sunday "
    "do does did have has had am is are was were should can could will would shall may might must".split()
)


# The gist of something: asked for by name, or by asking what happened, how it went, what the plans were.
_SUMMARY = re.compile(
    r"\b(?:summar(?:y|ise|ize)|sum (?:it |that |this )?up|gist|recap|overview|catch me up|fill me in|"
    r"remind me (?:what|about|of)|tell me about|what happened|what(?:'s| has| have) been (?:happening|going on)|"
    r"what went on|how did (?:it|the|my|our|that)\b.* go|how (?:is|was|are|were) (?:the|my|our)\b.* going|"
    r"what (?:are|were|was|is) (?:my|the|our) plans?|what(?:'s| is| was) the plan|"
    r"what did i (?:write|note|say|jot down) (?:in|about)|what do i know about|"
    # "What did the doctor say?", "what did Rebecca say in my 1:1?": all they said; "…say about my knee?" asks one thing.
    r"what did (?:(?:the|my|our|your|his|her|their) )?(?:[\w'’-]+ ){0,2}[\w'’-]+ (?:say|tell (?:me|us|you|him|her|them))"
    r"(?:\s+(?:at|in|during|on|when|after)\b[^?]*)?\s*\?*\s*$|"
    r"what(?:'s| is| was| are| were) (?:the|this|that|these|those|my) (?:\w+ ){1,3}about(?=\s*\?*\s*$))",
    re.IGNORECASE,
)
# Several things: "which …", "list …", "what <things> …" (a plural noun), "what do I need to …",
# "what's on my list", "who still / else / all …".
_LIST = re.compile(
    r"^(?:which|list|name)\b|\blist\b|\b(?:all|every) (?:the |my |of )?\w+s\b|"
    r"\bwhat (?:do|did|does|should|will) (?:i|we) (?:need|have|want) (?:to|for)\b|"
    r"\bwhat (?:am|are) (?:i|we) (?:bringing|taking|packing|buying|getting)\b|"
    r"\bwhat(?:'s| is) (?:left|still)\b|\bstill (?:need|needs|to do|have to)\b|\bto-?do\b|"
    r"\bwho (?:still|else|all)\b",
    re.IGNORECASE,
)
_AUXILIARY = frozenset(
    "do does did have has had am is are was were should can could will would shall may might must "
    "i i've i'd i'm we you he she they it's that's".split()
)
_NOT_PLURAL = re.compile(r"(?:ss|us|is|ous|'s|’s)$")


@dataclass(frozen=True)
class Intent:
    kind: str  # CONVERSATION or QUESTION
    acts: tuple[str, ...] = ()  # for conversation: greeting, thanks, praise, farewell, meta
    search: str = ""  # what retrieval reads: the question, or the follow-up made standalone
    follow_up: bool = False
    shape: str = FACT  # for a question: FACT, LIST or SUMMARY
    source_kind: str | None = None  # "pdf", "audio", "image", "url" when it points at a source by its kind ("the PDF")
    order: "Order | None" = None  # "what was the last thing I wrote down?": a listing by order
    page: int | None = None  # "what's on page 9 of the PDF?": a PDF's page, numbered as its citations show it
    named: tuple[str, ...] = ()  # "summarize the table PDF": words of the title of the source pointed at


@dataclass(frozen=True)
class Order:
    """The newest or oldest sources, and how many: "the last thing I wrote" is one, "my latest notes" five."""

    oldest: bool
    count: int
    kind: str | None = None  # only notes, PDFs or recordings ("my latest recording")


def read(message: str, previous: tuple[str, str] | None = None, *, assume_follow_up: bool = False) -> Intent:
    """The intent of `message`; `previous` is the conversation's last question and its answer, if any.
    With `assume_follow_up`, a question is read as a follow-up of `previous` though nothing in it points
    back ("How many kids have said yes so far?" after "When is Finn's party?")."""
    acts = conversation_acts(message)
    if acts:
        return Intent(CONVERSATION, acts=acts)
    kind, order, page = source_kind_of(message), order_of(message), page_of(message)
    named: tuple[str, ...] = ()
    if kind is None and page is None and (found := named_source(message)) is not None:
        kind, named = found
    if page is not None:  # a page is a PDF's; the question's shape is read without it ("what is page 4 about?")
        rest = _PAGE.sub(" ", message)
        # Nothing asked of the page but what is on it ("what's on page 3 of the PDF?"): its gist.
        kind, shape = kind or "pdf", shape_of(rest) if names_a_topic(rest) else SUMMARY
    elif kind is not None and order is None and not names_a_topic(message):
        # Nothing asked of a source pointed at by its kind but what is in it ("what did the recording say?",
        # "what's the paper about?"): its gist, as for a page.
        shape = SUMMARY
    else:
        shape = shape_of(message)
    if previous is not None and (assume_follow_up or is_follow_up(message)):
        search = standalone(message, *previous)
        return Intent(
            QUESTION, search=search, follow_up=True, shape=shape, source_kind=kind, order=order, page=page, named=named
        )
    return Intent(QUESTION, search=message, shape=shape, source_kind=kind, order=order, page=page, named=named)


# A PDF's page as people name it after reading a citation ("page 4"): "on page 9", "page 12 of the report", "p. 3".
_PAGE = re.compile(r"(?:\b(?:on|from|in|at)\s+)?\b(?:page|pg\.?|p\.)\s*(?P<page>\d{1,4})\b", re.IGNORECASE)


def page_of(question: str) -> int | None:
    """The page of a PDF the question names, or None."""
    found = _PAGE.search(question)
    return int(found["page"]) if found and int(found["page"]) > 0 else None


# The newest or the oldest of what is kept, asked for and nothing else: "what was the last thing I wrote
# down?", "what's the oldest note I have?", "show me my latest notes". With a topic it is a question:
# "what was the last thing the physio said?".
_ORDER = re.compile(
    r"\b(?P<end>last|latest|newest|most recent|oldest|first|earliest)\s+"
    r"(?P<what>thing|note|entry|entrie|source|file|recording|memo|voice memo|upload|one|pdf|document)(?P<several>s)?\b",
    re.IGNORECASE,
)
LATEST_SEVERAL = 5


def order_of(question: str) -> Order | None:
    """The listing by order the question asks for, or None when it asks anything besides."""
    found = _ORDER.search(question)
    if found is None:
        return None
    rest = question[: found.start()] + " " + question[found.end() :]
    if temporal.is_topical(rest.replace("’", "'")):
        return None
    oldest = found["end"].lower() in {"oldest", "first", "earliest"}
    what = found["what"].lower()
    # What was written is a note ("the last thing I wrote down" is not the PDF I uploaded after it).
    kind = _ORDER_KINDS.get(what) or ("note" if _WRITTEN.search(rest) else None)
    return Order(oldest=oldest, count=LATEST_SEVERAL if found["several"] else 1, kind=kind)


_ORDER_KINDS = {"note": "note", "entry": "note", "entrie": "note", "recording": "audio", "memo": "audio",
                "voice memo": "audio", "pdf": "pdf", "document": "pdf"}  # fmt: skip
_WRITTEN = re.compile(r"\b(?:wrote|written|write|jotted|jot|noted|typed)\b", re.IGNORECASE)


# A source pointed at by its kind, as people do right after dropping one in: "summarize the PDF", "what
# is the paper about?", "what did I say in my last voice memo?". Only with a word that picks one out
# ("the", "this", "my last" …): "do I have any PDFs about tax?" asks of the notes in general.
_POINTER = (
    r"\b(?:the|this|that|my|these|those)\s+"
    r"(?:(?:last|latest|new|newest|recent|most recent|uploaded|first|scanned|whole|entire|full)\s+)?"
)
_SOURCE_KINDS = {
    "pdf": re.compile(_POINTER + r"(?:pdf|paper|article|document|doc|report|scan|slides|handout)s?\b", re.IGNORECASE),
    "audio": re.compile(
        _POINTER + r"(?:recording|audio|voice ?(?:memo|note|message)|memo|transcript|podcast|lecture|talk|speech)s?\b",
        re.IGNORECASE,
    ),
    "image": re.compile(_POINTER + r"(?:photo|picture|pic|image|screenshot|whiteboard)s?\b", re.IGNORECASE),
    "url": re.compile(_POINTER + r"(?:web ?page|website|web site|blog ?post|bookmark)s?\b", re.IGNORECASE),
}


# A file named by words of its title before the word for what it is: "the table PDF", "my Lisbon voice memo",
# "the tenancy agreement PDF". Only words that mean a file (not "the school talk", which may be an event).
_NAMED = re.compile(
    r"\b(?:the|this|that|my)\s+(?P<words>(?:[\w'’-]+\s+){1,3}?)"
    r"(?P<kind>pdf|recording|voice ?memo|voice ?note|screenshot)s?\b",
    re.IGNORECASE,
)
_NAMED_KINDS = {"pdf": "pdf", "recording": "audio", "screenshot": "image"}


def named_source(question: str) -> tuple[str, tuple[str, ...]] | None:
    """The kind of file the question names by words of its title, and those words ("the table PDF" →
    ("pdf", ("table",))), or None."""
    match = _NAMED.search(question)
    if match is None:
        return None
    kind = _NAMED_KINDS.get(match["kind"].lower(), "audio")
    return kind, tuple(word.lower() for word in _WORD.findall(match["words"]))


def source_kind_of(question: str) -> str | None:
    """The kind of source the question points at ("pdf", "audio", "image", "url"), or None."""
    found = [(match.start(), kind) for kind, pattern in _SOURCE_KINDS.items() if (match := pattern.search(question))]
    return min(found)[1] if found else None


# What asking for a source's gist says besides the source: "summarize the PDF", "give me the main points
# of the recording", "what is the paper about?" name no topic to search for.
_GIST = frozenset(
    """summarize summarise summary sum up gist recap overview quick short brief main key points point idea
    ideas mean means say says said cover covers covered in of about please me give tell what is was are
    were it did i my the a an this that do does just added saved uploaded what's whats on remind write wrote""".split()
)


def names_a_topic(question: str) -> bool:
    """Whether a question that points at a source by kind also asks about something in it
    ("what does the paper say about HPO?") rather than for the source itself ("summarize the PDF")."""
    rest = _NAMED.sub(" ", question)  # "summarize the table PDF": "table" names the file, not a topic
    for pattern in _SOURCE_KINDS.values():
        rest = pattern.sub(" ", rest)
    return bool(beyond_the_gist(rest))


def beyond_the_gist(text: str) -> tuple[str, ...]:
    """The words of `text` that ask for more than a source's gist, lower-cased and without a possessive 's:
    "Summarize my 1:1 with Rebecca." → ("with", "rebecca"); "Remind me what my app idea was about." → ("app",)."""
    words = (re.sub(r"['’]s$", "", word.lower()) for word in _WORD.findall(text))
    return tuple(dict.fromkeys(word for word in words if word not in _GIST))


def shape_of(question: str) -> str:
    """Whether the question asks for a summary, a list of several things, or a fact."""
    text = " ".join(question.replace("’", "'").split())
    if _SUMMARY.search(text):
        return SUMMARY
    if _LIST.search(text) or _asks_for_things(text):
        return LIST
    return FACT


# A question that asks for a time: "when…", "what date/day/time…", "how long ago…", "what year…".
_ASKS_WHEN = re.compile(
    r"\bwhen\b|\bwhat (?:date|day|time|year|month)\b|\bhow long ago\b|\bwhich (?:date|day|year)\b", re.I
)


def asks_when(question: str) -> bool:
    return bool(_ASKS_WHEN.search(question))


def _asks_for_things(question: str) -> bool:
    """ "What exercises did…", "what gift ideas have I…": "what" and a plural noun before the verb."""
    words = [word.lower() for word in _WORD.findall(question)]
    if not words or words[0] not in {"what", "which"}:
        return False
    taken: list[str] = []
    for word in words[1:4]:
        if word in _AUXILIARY:
            break
        taken.append(word)
    return bool(taken) and len(taken[-1]) > 3 and taken[-1].endswith("s") and not _NOT_PLURAL.search(taken[-1])


def conversation_acts(message: str) -> tuple[str, ...]:
    """What each clause of a purely conversational message does; empty when any clause asks something else."""
    text = message.lower().replace("’", "'")
    text = re.sub(r"[\U0001F300-\U0001FAFF\u2600-\u27BF]+", " ", text)  # emoji and symbols: 👋 🙏 ✨
    clauses = [" ".join(_NOT_WORDS.sub(" ", clause).split()) for clause in _CLAUSES.split(text)]
    clauses = [clause for clause in clauses if clause]
    if not clauses or len(" ".join(clauses).split()) > 12:
        return ()
    acts: list[str] = []
    for clause in clauses:
        act = next((name for name, pattern in _KINDS.items() if pattern.fullmatch(clause)), None)
        act = act or _acknowledgement(clause, asked="?" in text) or _about_the_assistant(clause)
        if act is None:
            return ()
        acts.append(act)
    return tuple(dict.fromkeys(acts))


def _acknowledgement(clause: str, *, asked: bool) -> str | None:
    words = set(clause.split())
    if asked or not words <= _ACKNOWLEDGING:
        return None
    if words & _THANKING:
        return "thanks"
    return "praise" if words & _PRAISING else None


def _about_the_assistant(clause: str) -> str | None:
    words = set(clause.split()) - grounding.STOPWORDS
    return "meta" if _ADDRESSED.search(clause) and words <= _ABOUT_THE_ASSISTANT else None


def is_follow_up(question: str) -> bool:
    words = [word.lower().replace("’", "'") for word in _WORD.findall(question)]
    if not words:
        return False
    if _OPENERS.match(question.strip()):
        return True
    if words[-1] in _LAST_ONLY and not (len(words) >= 2 and words[-2] in {"is", "are", "was", "were"}):
        return True
    pronoun = next((at for at, word in enumerate(words) if word in _PERSONAL), None)
    if pronoun is not None and not _names(question) and not _PEOPLE.intersection(words[:pronoun]):
        return True
    # "it" with no thing of its own: "when is it due?", "how much did it cost?"
    return points_at_a_thing(question) and len(words) <= 6


def points_at_a_thing(question: str) -> bool:
    """Whether the question says "it" or "its": a thing named before, or the weather ("is it raining?")."""
    return any(word.lower() in _THING for word in _WORD.findall(question))


def standalone(question: str, previous_question: str, previous_answer: str) -> str:
    """The follow-up as a question of its own: a person's pronoun replaced by the name the last answer
    gave (the answer to "who recommended Piranesi?" is who "he" is), then the previous question as
    context for the search ("what about the peppers?" after "when do the tomatoes go in?")."""
    answer = re.sub(r"\s*\[\d+\]", "", previous_answer)
    named = [name for name in _names(answer) if name.lower() not in previous_question.lower()] or _names(
        previous_question
    )
    rewritten = question.strip()
    if named:
        name = named[0]
        rewritten = re.sub(r"\b(?:he|she|they)\b", name, rewritten, flags=re.IGNORECASE)
        rewritten = re.sub(r"\b(?:him|them)\b", name, rewritten, flags=re.IGNORECASE)
        rewritten = re.sub(r"\b(?:his|her|their|hers|theirs)\b", f"{name}'s", rewritten, flags=re.IGNORECASE)
    return f"{rewritten} ({previous_question.strip()})"


def _names(text: str) -> list[str]:
    """Capitalized words that are not just a sentence's first word: the people and things a text names."""
    names: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group()[:-2] if match.group().endswith(("'s", "’s")) else match.group()
        if word[0].isupper() and word.lower() not in _NOT_NAMES and word not in names:
            names.append(word)
    return names
