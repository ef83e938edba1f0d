"""What the chat says to a message that is conversation, not a question about the notes (`intent.CONVERSATION`):
a greeting, thanks, a goodbye, or a question about the assistant itself — answered at once, without a search.

A question about the assistant gets the answer to what it asked: "How do I delete a file?" the Delete
button, "Can other people see my notes?" who can, "Do you use the internet?" where answers come from and
where the model runs. Only "what can you do?" and its like get the whole introduction.
"""

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

# What a question about the assistant asks about, first match first: its words, as a person puts them.
# "How do I add a PDF?" is about adding though PDFs are a kind; "Can anyone else see my files?" about
# privacy though files are stored.
TOPICS: tuple[tuple[str, frozenset[str]], ...] = (
    ("delete", frozenset("delete deleted deleting remove removing erase forget".split())),
    ("kinds", frozenset("kind kinds sort sorts type types format formats".split())),
    ("add", frozenset("add adding upload uploading save import record drop".split())),
    (
        "privacy",
        frozenset(
            "private privacy secure safe safely see access anyone someone others other people share shared".split()
        ),
    ),
    (
        "storage",
        frozenset(
            "cloud server servers stored store storing kept local locally offline internet online web google".split()
        ),
    ),
    (
        "model",
        frozenset("model ai llm chatgpt gpt openai bot chatbot human robot real trained train built made".split()),
    ),
    ("memory", frozenset("remember memory earlier previous chats conversations conversation".split())),
    (
        "trust",
        frozenset("sure accurate trust wrong mistakes guess invent citations cite brackets numbers links".split()),
    ),
    ("asking", frozenset(["ask"])),
)
_WORDS = re.compile(r"[a-z]+")


def topic_of(message: str) -> str:
    """What a question about the assistant asks about (a `TOPICS` name), or "about" for what it is and does."""
    words = set(_WORDS.findall(message.lower()))
    return next((name for name, said in TOPICS if words & said), "about")


@dataclass(frozen=True)
class Setting:
    """What the replies say of this app: how much the person keeps here and where the model runs."""

    sources: int
    model: str
    model_url: str

    @property
    def held(self) -> str:
        if not self.sources:
            return "You haven't added anything yet."
        return f"You have {self.sources} source{'' if self.sources == 1 else 's'} here so far."

    @property
    def model_where(self) -> str:
        host = urlsplit(self.model_url).hostname or ""
        if host in {"127.0.0.1", "localhost", "::1"}:
            return f"the model that writes them ({self.model}) runs on this server, so nothing leaves it"
        return f"the model that writes them ({self.model}) is reached at {host}, which is sent the passages each answer reads"


_ADDING = (
    "On the Sources page you type a note, add a web page by its address or drop in PDFs, audio, images, "
    "calendars and text files; each is read in the background and can be asked about a moment later."
)


def reply(acts: tuple[str, ...], topic: str, setting: Setting) -> str:
    """The reply to a conversation message whose clauses do `acts` (`intent.conversation_acts`)."""
    if "meta" in acts:
        return ("Hello! " if "greeting" in acts else "") + _about(topic, setting)
    if "thanks" in acts or "praise" in acts:
        return "You're welcome!" + (" Bye for now." if "farewell" in acts else "")
    if "farewell" in acts:
        return "Bye! Your notes will be here when you need them."
    return "Hello! What would you like to know from your notes?"


def _about(topic: str, setting: Setting) -> str:
    if topic == "add":
        return f"{_ADDING} {setting.held}"
    if topic == "kinds":
        return (
            "Notes you type, PDFs, audio (voice memos and recordings, transcribed), images, calendars (.ics), "
            "text and Markdown files, and web pages by their address. You add them on the Sources page."
        )
    if topic == "delete":
        return (
            "Each source on the Sources page has a Delete button: it removes the file, everything read from it "
            "and its place in answers. A conversation has “Delete this conversation” on its page, and Settings "
            "deletes your whole account."
        )
    if topic == "privacy":
        return (
            "Your sources, conversations and answers are yours alone: no other account here can search, see or "
            "be answered from them. A source you mark private is also left out of your own search and answers "
            "unless you include private sources."
        )
    if topic == "storage":
        return (
            "What you add is kept in this app's own database and files. Answers come only from your sources, "
            f"never from the internet, and {setting.model_where}. A web page is fetched once, when you add it."
        )
    if topic == "model":
        return (
            f"I'm the assistant of your Second Brain: a language model ({setting.model}) that answers from the "
            "passages a search finds in your own sources, and cites them. I'm not ChatGPT and I don't know what "
            "isn't in your notes."
        )
    if topic == "memory":
        return (
            "Within a conversation I remember what was said, so you can follow up (“what else did he say?”). "
            "A new conversation starts fresh; the earlier ones stay in your list of conversations. To keep an "
            "answer as a note, press “Remember this” under it."
        )
    if topic == "trust":
        return (
            "Each sentence of an answer ends with the number of the passage it comes from: click it to read "
            "that passage. When your notes don't hold the answer I say so rather than guess, but I can still "
            "misread one, so the cited passage has the last word."
        )
    if topic == "asking":
        return (
            "Ask as you would ask a friend who read your notes: “what did the plumber charge?”, “what did I "
            "write last week?”, “summarize my plans for the trip”. Name the person, thing or time you mean; "
            "a follow-up can lean on the answer before (“and what else did he say?”)."
        )
    return (
        "I answer questions from what you keep here — notes, PDFs, recordings, calendars, images and web "
        "pages — and cite the passages each answer comes from, never the internet. Ask as you would ask a "
        'friend who read your notes: "what did I note about the garden?", "what did I write last week?", '
        '"what were my plans for the trip?". When your notes don\'t hold the answer, I say so rather than '
        f"guess. {setting.held} {_ADDING}"
    )
