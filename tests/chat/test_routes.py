"""The question's type decides the path (chat/intent.py): what a person notices in the first week.

A greeting gets a greeting at once (no search, no sources, no "couldn't find"); "what did I add
today?" lists today's sources, each cited; a follow-up is searched as a question of its own, and the
page shows how it was read. The scripted model server stands in for the model, so a test can tell
whether the model was asked at all.
"""

import re
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from django.utils import timezone

from accounts.models import User
from chat import intent
from chat.models import Conversation, Message
from tests.chat.test_trust import events_of, note_of
from tests.factories import ApiClient, make_user
from tests.ingestion.test_files_pipeline import PDFS, processed
from tests.scripted_model import Script, ScriptedModel
from tests.test_pipeline import GARDEN_NOTE

FIRSTWEEK = Path(__file__).resolve().parent.parent / "data" / "firstweek" / "notes"

pytestmark = pytest.mark.django_db(transaction=True)

BOOKS_NOTE = """# Books

Tom recommended Piranesi by Susanna Clarke; he says it's strange and lovely.
He also swears by The Overstory, for the trees.
Anna lent me Circe last week."""


def stages(events: list[dict[str, Any]]) -> list[str]:
    return [event["stage"] for event in events if event["type"] == "stage"]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("hi", "Hello!"),
        ("Hi there 👋", "Hello!"),
        ("Thanks, that's helpful!", "You're welcome!"),
        ("ok great thanks", "You're welcome!"),
        ("What can you do?", "cite the passages"),
        ("Good morning! What can I ask you?", "Hello! Ask as you would ask a friend"),
        ("bye", "Bye!"),
        ("How do I add a new note?", "On the Sources page you type a note"),
        ("What kind of files can I add?", "PDFs, audio (voice memos and recordings, transcribed), images"),
        ("How do I delete a file?", "has a Delete button"),
        ("Can other people see my notes?", "no other account here can search, see or be answered from them"),
        ("Do you use the internet?", "never from the internet"),
        ("Do you remember our earlier chats?", "Within a conversation I remember what was said"),
    ],
)
def test_greetings_thanks_and_what_can_you_do_are_answered_at_once_without_a_search(
    celery_worker: None, scripted_model: ScriptedModel, message: str, expected: str
) -> None:
    user = User.objects.create_user("newcomer", password="x-long-enough-Passw0rd")
    note_of(user, GARDEN_NOTE)
    events = events_of(user=user, question=message)
    done = events[-1]
    assert expected in done["answer"], done["answer"]
    assert not done["abstained"] and done["citations"] == [] and done["nearest"] == []
    assert "couldn't find" not in done["answer"]
    assert "searching" not in stages(events) and scripted_model.script.requests == 0
    assert Message.objects.get(pk=done["message_id"]).route == Message.Route.CONVERSATION


def test_what_can_you_do_tells_how_much_is_kept_and_where_to_start(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    empty = User.objects.create_user("empty", password="x-long-enough-Passw0rd")
    assert "haven't added anything yet" in events_of(user=empty, question="what can you do?")[-1]["answer"]
    user = User.objects.create_user("keeper", password="x-long-enough-Passw0rd")
    note_of(user, GARDEN_NOTE)
    note_of(user, BOOKS_NOTE)
    assert "You have 2 sources here so far." in events_of(user=user, question="What can you do?")[-1]["answer"]


def test_a_greeting_before_a_question_is_still_a_question(celery_worker: None, scripted_model: ScriptedModel) -> None:
    user = User.objects.create_user("polite", password="x-long-enough-Passw0rd")
    note_of(user, GARDEN_NOTE)
    scripted_model.script = Script(tokens=["The tomatoes go into the raised bed on 12 May [1]."])
    events = events_of(user=user, question="Hi! When do the tomatoes go into the raised bed?")
    done = events[-1]
    assert "12 May" in done["answer"] and done["citations"], done["answer"]
    assert scripted_model.script.requests == 1 and "searching" in stages(events)
    assert Message.objects.get(pk=done["message_id"]).route == Message.Route.QUESTION


def test_a_conversation_opened_with_hi_is_titled_by_its_first_question(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    user = User.objects.create_user("greeter", password="x-long-enough-Passw0rd")
    conversation_id = events_of(user=user, question="hi")[0]["conversation_id"]
    events_of(user=user, question="thanks!", conversation_id=conversation_id)
    events_of(user=user, question="What did the plumber say about the boiler?", conversation_id=conversation_id)
    events_of(user=user, question="And the kitchen tap?", conversation_id=conversation_id)
    titles = list(Conversation.objects.filter(owner=user).values_list("title", flat=True))
    assert titles == ["What did the plumber say about the boiler?"]


def test_what_did_i_add_today_lists_todays_sources_each_cited_and_no_one_elses(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    user = User.objects.create_user("lister", password="x-long-enough-Passw0rd")
    note_of(user, GARDEN_NOTE)
    note_of(user, BOOKS_NOTE)
    stranger = User.objects.create_user("stranger", password="x-long-enough-Passw0rd")
    note_of(stranger, "# Secret plans\n\nThe surprise party is on Friday.")
    done = events_of(user=user, question="What did I add today?")[-1]
    answer = done["answer"]
    assert answer.startswith("Added on ") and "2 sources:" in answer, answer
    assert "**Books**" in answer and "**Garden plan**" in answer and "Secret" not in answer
    assert "Tom recommended Piranesi" in answer  # how each one opens
    assert sorted(citation["source_title"] for citation in done["citations"]) == ["Books", "Garden plan"]
    assert [citation["marker"] for citation in done["citations"]] == [1, 2]
    assert not done["abstained"] and scripted_model.script.requests == 0
    assert Message.objects.get(pk=done["message_id"]).route == Message.Route.LISTING

    # A note typed line by line opens as its lines, kept apart where no stop ends them.
    note_of(user, "Kitchen reno\nquote came in at 9,400 incl fitting\ndeposit is 30% of the total, due when we sign")
    typed = events_of(user=user, question="What did I add today?")[-1]["answer"]
    assert "quote came in at 9,400 incl fitting · deposit is 30% of the total…" in typed, typed

    nothing = events_of(user=user, question="What did I add yesterday?")[-1]
    assert nothing["abstained"] and nothing["answer"].startswith("Nothing in your notes is from that time (added on ")


def test_a_follow_up_is_searched_as_a_question_of_its_own_and_shown_as_read(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    user = User.objects.create_user("reader", password="x-long-enough-Passw0rd")
    note_of(user, GARDEN_NOTE)
    note_of(user, BOOKS_NOTE)
    scripted_model.script = Script(tokens=["Tom recommended Piranesi [1]."])
    first = events_of(user=user, question="Who recommended Piranesi to me?")[-1]
    assert first["answer"] == "Tom recommended Piranesi [1].", first["answer"]
    scripted_model.script = Script(tokens=["Tom also recommended The Overstory [1]."])
    events = events_of(user=user, question="What else did he recommend?", conversation_id=first["conversation_id"])
    read_as = next(event for event in events if event["type"] == "stage" and event["stage"] == "follow_up")
    assert read_as["text"] == "Read as a follow-up: What else did Tom recommend? (Who recommended Piranesi to me?)"
    done = events[-1]
    assert "The Overstory" in done["answer"] and done["citations"][0]["source_title"] == "Books"
    trace = Message.objects.get(pk=done["message_id"]).trace
    assert trace["follow_up"] == "What else did Tom recommend? (Who recommended Piranesi to me?)"
    assert trace["route"] == Message.Route.QUESTION


def test_only_a_follow_up_is_asked_after_the_earlier_turns(celery_worker: None, scripted_model: ScriptedModel) -> None:
    # Shown an earlier answer, the small model copies it: "Dr Okafor:" after "Murphy Kitchens: €14,200".
    user = User.objects.create_user("asker", password="x-long-enough-Passw0rd")
    note_of(user, GARDEN_NOTE)
    note_of(user, BOOKS_NOTE)
    scripted_model.script = Script(tokens=["Tom recommended Piranesi [1]."])
    first = events_of(user=user, question="Who recommended Piranesi to me?")[-1]
    scripted_model.script = Script(tokens=["On 12 May [1]."])
    events_of(
        user=user, question="When do the tomatoes go into the raised bed?", conversation_id=first["conversation_id"]
    )
    assert [message["role"] for message in last_prompt(scripted_model)] == ["system", "user"]
    scripted_model.script = Script(tokens=["Tom also recommended The Overstory [1]."])
    events_of(user=user, question="What else did he recommend?", conversation_id=first["conversation_id"])
    earlier = [message["content"] for message in last_prompt(scripted_model)[1:-1]]
    assert earlier == ["Who recommended Piranesi to me?", "Tom recommended Piranesi.", "When do the tomatoes go into "
                       "the raised bed?", "On 12 May."]  # fmt: skip


@pytest.mark.parametrize(
    "question",
    [
        "What did Maria promise her brother?",  # the pronoun's person is named in the question
        "What did the president say about his country?",  # … or said by what they are
        "what did my sister say about her new job",
        "Did the kids like their presents?",
        "When is the plumber coming back and what does he need?",
        "Is there a plumber's number in my notes?",  # "is there" opens a question of its own
        "What is the guest wifi called?",
        "Summarize what still needs doing in the garden.",
        "How do I fix the bike?",  # a question about the notes, not about the app
    ],
)
def test_a_question_of_its_own_is_not_read_as_a_follow_up(question: str) -> None:
    read = intent.read(question, ("Who recommended Piranesi to me?", "Tom recommended Piranesi [1]."))
    assert read.kind == intent.QUESTION and not read.follow_up and read.search == question


@pytest.mark.parametrize(
    "question",
    [
        "What did he say about the budget?",
        "and her phone number?",
        "What is the name of her dog?",  # "name" is no one the pronoun could point back to
        "Did they reply?",
        "When did she call?",
    ],
)
def test_a_pronoun_with_no_one_before_it_is_a_follow_up(question: str) -> None:
    read = intent.read(question, ("Who recommended Piranesi to me?", "Tom recommended Piranesi [1]."))
    assert read.follow_up and read.search.endswith("(Who recommended Piranesi to me?)")


# Written for these tests, before the rules were changed, not taken from the first-week yardstick:
# acknowledgements and questions about the assistant as people type them, and questions that only
# look like them.
@pytest.mark.parametrize(
    "message",
    [
        "cool thanks",
        "great stuff",
        "ok cool",
        "perfect, cheers!",
        "brilliant ta",
        "lovely, thanks a million",
        "nice one",
        "super, thank you so much!",
        "ok got it",
        "amazing thank you",
        "grand, thanks again",
        "where do your answers come from?",
        "Do you use the internet?",
        "Can other people see my notes?",
        "is my data private?",
        "Are you ChatGPT?",
        "which AI model are you?",
        "Do you remember our earlier chats?",
        "how do you know this stuff?",
        "are my notes stored in the cloud?",
        "can you help me find things in my notes?",
    ],
)
def test_acknowledgements_and_questions_about_the_assistant_are_conversation(message: str) -> None:
    assert intent.read(message).kind == intent.CONVERSATION, message


@pytest.mark.parametrize(
    "message",
    [
        "ok, what about the dentist?",
        "great, and when is it?",
        "thanks - what did Tom recommend?",
        "Do you know where I put my passport?",
        "What did I note about the internet bill?",
        "Where did I get the brown bread recipe from?",
        "do you remember what the plumber charged?",
        "Can you find the guest wifi password?",
        "Can you help me find the plumber's number?",
        "Which model of bike did I buy?",
        "what did Rebecca say about the data model?",
        "Are my notes on the garden up to date?",
        "is the boiler service booked?",
    ],
)
def test_messages_that_look_like_chat_but_ask_about_the_notes_are_questions(message: str) -> None:
    assert intent.read(message).kind == intent.QUESTION, message


PHYSIO_NOTE = """Physio, Tuesday

Shoulder still clicks when I reach overhead. Dana says it's the rotator cuff, not the joint.
Exercises, twice a day:
- pendulum swings, 30 seconds each way
- wall slides, 10 reps
- external rotation with the green band, 3 x 12
- sleeper stretch, hold 30 seconds
Next visit in two weeks; no swimming until then."""


@pytest.mark.parametrize(
    ("question", "shape"),
    [
        ("What exercises did the physio give me?", intent.LIST),
        ("Which books have people recommended to me?", intent.LIST),
        ("What do I need to pack for the camping trip?", intent.LIST),
        ("Who still hasn't replied about the party?", intent.LIST),
        ("Summarize my 1:1 with Rebecca.", intent.SUMMARY),
        ("How did the interview go? Give me the gist.", intent.SUMMARY),
        ("What were my plans for Lisbon?", intent.SUMMARY),
        ("What did the doctor say?", intent.SUMMARY),  # seen in a browser walk: one line of five came back
        ("What did Rebecca say in my 1:1?", intent.SUMMARY),
        ("What did the doctor say about my knee?", intent.FACT),
        ("What is the guest wifi called?", intent.FACT),
        ("What's the printer's IP address?", intent.FACT),
        ("When is the dentist appointment?", intent.FACT),
        ("Who recommended Piranesi to me?", intent.FACT),
        ("How much did the brakes cost?", intent.FACT),
    ],
)
def test_a_question_is_read_as_a_fact_a_list_or_a_summary(question: str, shape: str) -> None:
    assert intent.read(question).shape == shape


def test_a_list_question_asks_for_every_item_and_keeps_the_answers_lines(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    user = User.objects.create_user("patient", password="x-long-enough-Passw0rd")
    note_of(user, PHYSIO_NOTE)
    scripted_model.script = Script(
        tokens=["- Pendulum swings [1]\n", "- Wall slides [1]\n", "- External rotation with the green band [1]\n",
                "- Sleeper stretch [1]"]
    )  # fmt: skip
    events = events_of(user=user, question="What exercises did the physio give me?")
    writing = next(event for event in events if event["type"] == "stage" and event["stage"] == "writing")
    assert writing["text"] == "Writing a list…"
    done = events[-1]
    lines = done["answer"].split("\n")
    assert len(lines) == 4 and all(line.startswith("- ") and line.endswith("[1]") for line in lines), done["answer"]
    assert done["citations"] and not done["abstained"]
    system = scripted_model.script.bodies[-1]["messages"][0]["content"]  # type: ignore[index]
    assert "every item the sources give" in system and "one per line" in system
    assert Message.objects.get(pk=done["message_id"]).trace["shape"] == intent.LIST


def test_a_summary_reads_its_source_whole_in_order(celery_worker: None, scripted_model: ScriptedModel) -> None:
    user = User.objects.create_user("manager", password="x-long-enough-Passw0rd")
    topics = ["the dashboard migration", "the raise", "the Amsterdam offsite", "the hiring plan", "the on-call rota"]
    paragraphs = [
        f"Rebecca and I spent a while on {topic}. " + " ".join(f"We noted point {n} about {topic}." for n in range(8))
        for topic in topics
    ]
    note_of(user, "1:1 with Rebecca\n\n" + "\n\n".join(paragraphs))
    scripted_model.script = Script(tokens=["We covered the dashboard migration and the on-call rota [1]."])
    done = events_of(user=user, question="Summarize my 1:1 with Rebecca.")[-1]
    assert Message.objects.get(pk=done["message_id"]).trace["shape"] == intent.SUMMARY
    system = scripted_model.script.bodies[-1]["messages"][0]["content"]  # type: ignore[index]
    assert "short paragraph" in system
    places = [system.find(topic) for topic in topics]
    assert all(place >= 0 for place in places) and places == sorted(places), places


def test_a_summary_of_a_note_named_by_its_title_reads_that_note_alone(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    """The birthday party's guest lists come closer to "Finn's teacher" than the teacher's note does; shown
    them after the note, the 1.5B summed up one line of the meeting."""
    user = make_user("parent")
    api = ApiClient.for_user(user)
    for title, name in (("Parent-teacher meeting with Ms Gallagher", "parent-teacher.txt"),
                        ("Finn's 9th birthday party", "finn-birthday-party.md")):  # fmt: skip
        body = {"title": title, "text": (FIRSTWEEK / name).read_text()}
        assert api.wait_for_job(api.post("/notes", body).json()["job_id"])["status"] == "done"
    scripted_model.script = Script(tokens=["His reading is flying but his handwriting is messy [1]."])
    events_of(user=user, question="Sum up what Finn's teacher said at the parent-teacher meeting.")
    sources = scripted_model.script.bodies[-1]["messages"][0]["content"].split("Sources:", 1)[1]  # type: ignore[index]
    assert "handwriting messy" in sources and "Dublin Zoo" in sources, sources
    assert "Finn's 9th birthday party" not in sources and "Jump Zone" not in sources, sources


def test_a_list_cut_across_two_passages_reaches_the_model_whole_and_in_the_order_it_was_written(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    """The physio's four exercises span two passages, and the one with the last two scores higher: shown
    in order of score, the model read "- external rotation …" before the line that says what the list is."""
    user = make_user("patient")
    note_of(user, (FIRSTWEEK / "physio-1.txt").read_text())
    scripted_model.script = Script(tokens=["- pendulum swings [1]"])
    done = events_of(user=user, question="What exercises did the physio give me?")[-1]
    system = scripted_model.script.bodies[-1]["messages"][0]["content"]  # type: ignore[index]
    sources = system.split("Sources:", 1)[1]
    places = [
        sources.find(item) for item in ("exercises 2x a day", "pendulum", "wall slides", "external rotation", "sleeper")
    ]
    assert all(place >= 0 for place in places) and places == sorted(places), sources
    assert "[2]" not in sources[: places[-1]], "the list is cut in two numbered sources"
    assert done["citations"]


def test_whats_on_my_to_do_list_today_reads_the_to_do_note_not_another_list(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    """The word "today" names the day to read and is also in what the question asks: "To do today" is no weaker a
    match for it than last night's packing list (with "today" taken out, the note fell under the gate)."""
    user = make_user("busy")
    api = ApiClient.for_user(user)
    yesterday = (timezone.now() - timedelta(days=1)).isoformat()
    for title, name, written in (("Camping packing list", "camping-packing-list.md", yesterday),
                                 ("To do today", "todo-today.txt", None)):  # fmt: skip
        body = {"title": title, "text": (FIRSTWEEK / name).read_text(), "occurred_at": written}
        assert api.wait_for_job(api.post("/notes", body).json()["job_id"])["status"] == "done"
    scripted_model.script = Script(tokens=["- pay Finn's school tour €22 [1]"])
    done = events_of(user=user, question="What's on my to-do list today?")[-1]
    assert scripted_model.script.bodies, f"no passage reached the model: {done['answer']}"
    sources = scripted_model.script.bodies[-1]["messages"][0]["content"].split("Sources:", 1)[1]  # type: ignore[index]
    assert "pay Finn's school tour" in sources and "ring Jump Zone" in sources, sources


@pytest.mark.parametrize(
    ("question", "kind", "topic"),
    [
        ("Summarize the PDF", "pdf", False),
        ("What is the paper about?", "pdf", False),
        ("What's the PDF about?", "pdf", False),
        ("Summarize the scanned PDF", "pdf", False),  # how it was made is not what it is about
        ("Give me the gist of the whole document", "pdf", False),
        ("Give me the main points of this document please", "pdf", False),
        ("What did I say in my last voice memo?", "audio", False),
        ("What did the recording say?", "audio", False),  # as a fact, the 1.5B: "I couldn't find that…"
        ("When was the recording made?", "audio", True),
        ("What does the paper say about hyperparameters?", "pdf", True),
        ("What was the recording about the budget?", "audio", True),
        ("What does the screenshot say?", "image", False),
        ("Summarize the web page I just added", "url", False),
        ("What does the webpage say about watering?", "url", True),
        ("Do I have any PDFs about tax?", None, True),  # no source picked out: the notes in general
        ("What did the physio say about my shoulder?", None, True),
    ],
)
def test_a_question_can_point_at_a_source_by_its_kind(question: str, kind: str | None, topic: bool) -> None:
    read = intent.read(question)
    assert read.source_kind == kind
    assert intent.names_a_topic(question) is topic
    if kind is not None and not topic:  # nothing asked of it but what it holds: its gist
        assert read.shape == intent.SUMMARY


def test_summarize_the_pdf_reads_the_newest_pdf_from_its_start_and_no_one_elses(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    user, other = make_user("reader"), make_user("neighbour")
    api = ApiClient.for_user(user)
    processed(api, "lorem.pdf", (PDFS / "multicolumn_latex_two_column_lorem.pdf").read_bytes())
    processed(api, "otsl.pdf", (PDFS / "academic_arxiv2305.03393_page9.pdf").read_bytes())  # the newest
    processed(ApiClient.for_user(other), "register.pdf", (PDFS / "federal-register-three-columns.pdf").read_bytes())
    note_of(user, GARDEN_NOTE)
    scripted_model.script = Script(tokens=["It compares OTSL with HTML for table structure recognition [1]."])

    done = events_of(user=user, question="Summarize the PDF")[-1]

    # Without the pointer the question matches nothing well enough, and the answer was an abstention.
    assert not done["abstained"] and {citation["source_title"] for citation in done["citations"]} == {"otsl"}
    system = scripted_model.script.bodies[-1]["messages"][0]["content"]  # type: ignore[index]
    assert "Hyper Parameter Optimization" in system and "PubTabNet" in system
    assert "Lorem" not in system and "tomato" not in system.lower() and "Federal Register" not in system
    # The header "otsl (page 9)" does not say what it is; the model is told it is the PDF asked about.
    assert system.endswith("The sources are from the PDF document the question points at.")
    trace = Message.objects.get(pk=done["message_id"]).trace
    assert trace["source_kind"] == "pdf" and trace["pointed"] and trace["shape"] == intent.SUMMARY


@pytest.mark.parametrize(
    ("question", "named", "shape"),
    [
        ("Summarize the table PDF.", ("table",), intent.SUMMARY),
        ("What's in my kitchen reno recording?", ("kitchen", "reno"), intent.SUMMARY),
        ("What does the tenancy PDF say about pets?", ("tenancy",), intent.FACT),
        ("What time is the school talk?", (), intent.FACT),  # a talk may be an event, not a file
    ],
)
def test_a_file_can_be_named_by_words_of_its_title(question: str, named: tuple[str, ...], shape: str) -> None:
    read = intent.read(question)
    assert read.named == named and read.shape == shape


def test_summarize_the_table_pdf_reads_the_pdf_so_titled_not_the_newest(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    # Seen in a browser walk: "Summarize the table PDF." was not read as pointing at a PDF at all, and the
    # table's passages (rows of numbers) fell under the relevance gate: "I couldn't find…".
    user = make_user("tables")
    api = ApiClient.for_user(user)
    processed(
        api,
        "table_nics_background_checks_2015-11.pdf",
        (PDFS / "table_nics_background_checks_2015-11.pdf").read_bytes(),
    )
    processed(api, "otsl.pdf", (PDFS / "academic_arxiv2305.03393_page9.pdf").read_bytes())  # the newest
    scripted_model.script = Script(tokens=["It lists checks by state, from Alabama to Wyoming [1]."])
    done = events_of(user=user, question="Summarize the table PDF.")[-1]
    message = Message.objects.get(pk=done["message_id"])
    assert message.trace["pointed"] and message.trace["shape"] == intent.SUMMARY
    system = last_prompt(scripted_model)[0]["content"]
    assert "[1] table_nics_background_checks_2015-11" in system and "Alabama" in system
    assert "otsl" not in system and "PubTabNet" not in system
    # No PDF so titled: the question is searched as any other, not read from the newest PDF.
    events_of(user=user, question="Summarize the budget PDF.")
    assert Message.objects.filter(role="assistant").order_by("-id").first().trace["pointed"] is False  # type: ignore[union-attr]


def test_a_summary_of_a_note_named_by_its_title_is_asked_for_by_that_title(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    # Over five passages of the app idea's note and nothing else, the 1.5B replied "I couldn't find that" to
    # "Remind me what my app idea was about." and summed the note up when asked for it by its title.
    user = make_user("titled")
    api = ApiClient.for_user(user)
    for title, name in (("App idea: Pocket Points", "app-idea-chores.md"), ("Copenhagen trip", "copenhagen-trip.md")):
        body = {"title": title, "text": (FIRSTWEEK / name).read_text()}
        assert api.wait_for_job(api.post("/notes", body).json()["job_id"])["status"] == "done"
    scripted_model.script = Script(tokens=["Chores earn points that buy screen time [1]."])
    done = events_of(user=user, question="Remind me what my app idea was about.")[-1]
    assert last_prompt(scripted_model)[-1]["content"] == 'Summarize "App idea: Pocket Points".'
    assert not done["abstained"] and done["citations"][0]["source_title"] == "App idea: Pocket Points"
    asked = Message.objects.filter(role="user").order_by("-id").first()
    assert asked is not None and asked.content == "Remind me what my app idea was about."  # as the person asked it
    # A question that asks for more than the gist goes to the model as it was asked.
    events_of(user=user, question="What were my plans for Copenhagen?")
    assert last_prompt(scripted_model)[-1]["content"] == "What were my plans for Copenhagen?"
    assert intent.beyond_the_gist("Summarize my 1:1 with Rebecca.") == ("with", "rebecca")
    assert intent.beyond_the_gist("What did I write in Finn's journal?") == ("finn", "journal")


def test_a_question_about_a_source_pointed_at_is_asked_without_the_turns_before_it(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    # Shown the turn before, the 1.5B answered "What did the recording say?" with that turn's answer.
    user = make_user("pointer")
    api = ApiClient.for_user(user)
    note_of(user, GARDEN_NOTE)
    processed(api, "otsl.pdf", (PDFS / "academic_arxiv2305.03393_page9.pdf").read_bytes())
    first = events_of(user=user, question="When do the tomatoes go into the raised bed?")[-1]
    conversation = first["conversation_id"]
    scripted_model.script = Script(tokens=["It compares OTSL with HTML for table structure recognition [1]."])
    events_of(user=user, question="What is the paper about?", conversation_id=conversation)
    pointed = last_prompt(scripted_model)
    assert [item["role"] for item in pointed] == ["system", "user"]
    assert "The sources are from the PDF document the question points at." in pointed[0]["content"]
    scripted_model.script = Script(tokens=["Every second evening [1]."])
    events_of(user=user, question="And how often should I water them?", conversation_id=conversation)
    asked = last_prompt(scripted_model)  # a follow-up: asked after the turns before it
    assert [item["role"] for item in asked][-3:] == ["user", "assistant", "user"]
    assert "points at" not in asked[0]["content"]


def last_prompt(model: ScriptedModel) -> list[dict[str, str]]:
    return cast("list[dict[str, str]]", model.script.bodies[-1]["messages"])


@pytest.mark.parametrize(
    ("question", "page", "shape"),
    [
        ("What is the paper on page 9 about?", 9, intent.SUMMARY),
        ("What does page 2 of the PDF say about the STS?", 2, intent.FACT),
        ("Summarize p. 3", 3, intent.SUMMARY),
        ("What is on page 3 of the PDF?", 3, intent.SUMMARY),  # nothing asked of it but what it holds
        ("what's on pg 12", 12, intent.SUMMARY),
        ("What's the page count of the report?", None, intent.FACT),
        ("How many steps 3 times a day?", None, intent.FACT),
    ],
)
def test_a_question_can_name_a_page(question: str, page: int | None, shape: str) -> None:
    read = intent.read(question)
    assert (read.page, read.shape) == (page, shape)
    if page is not None:  # a page is a PDF's
        assert read.source_kind == "pdf"


def test_a_page_named_is_read_from_the_newest_pdf_that_has_it(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    user, other = make_user("page-reader"), make_user("page-neighbour")
    api = ApiClient.for_user(user)
    processed(api, "register.pdf", (PDFS / "federal-register-three-columns.pdf").read_bytes())  # 4 pages
    processed(api, "lorem.pdf", (PDFS / "multicolumn_latex_two_column_lorem.pdf").read_bytes())  # 3, the newest
    processed(ApiClient.for_user(other), "otsl.pdf", (PDFS / "academic_arxiv2305.03393_page9.pdf").read_bytes())
    scripted_model.script = Script(tokens=["It lists EU countries [1]."])

    done = events_of(user=user, question="What is on page 3 of the PDF?")[-1]
    system = scripted_model.script.bodies[-1]["messages"][0]["content"]  # type: ignore[index]
    assert "Table 1: EU Countries" in system and "Two-Column Document" not in system and "Federal" not in system
    assert {citation["anchor"].get("page") for citation in done["citations"]} == {3}, done["citations"]

    # Only the register has a fourth page: that page, the sweep of the trim actuator, and no other.
    scripted_model.script = Script(tokens=["It describes the sweep of the actuator [1]."])
    done = events_of(user=user, question="What is the paper on page 4 about?")[-1]
    system = scripted_model.script.bodies[-1]["messages"][0]["content"]  # type: ignore[index]
    assert "The sweep is done with the actuator" in " ".join(system.split()) and "Request To Allow" not in system
    trace = Message.objects.get(pk=done["message_id"]).trace
    assert trace["page"] == 4 and trace["pointed"] and trace["shape"] == intent.SUMMARY


def test_a_question_about_something_in_the_pdf_searches_only_pdfs(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    user = make_user("student")
    processed(ApiClient.for_user(user), "otsl.pdf", (PDFS / "academic_arxiv2305.03393_page9.pdf").read_bytes())
    note_of(user, "Hyper parameter tuning notes for my own model: try a learning rate of 3e-4 and 6 layers.")
    scripted_model.script = Script(tokens=["They tuned it on PubTabNet [1]."])
    events_of(user=user, question="What does the paper say about hyper parameter optimization?")
    system = scripted_model.script.bodies[-1]["messages"][0]["content"]  # type: ignore[index]
    assert "PubTabNet" in system and "learning rate" not in system


def test_the_last_or_the_oldest_thing_written_is_listed_without_the_model(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    user, stranger = make_user("diarist"), make_user("stranger")
    api = ApiClient.for_user(user)
    for text, day in [
        ("Boiler serviced, all fine.", "2026-10-02"),
        (BOOKS_NOTE, "2026-11-20"),
        (GARDEN_NOTE, "2026-11-01"),
    ]:
        job = api.post("/notes", {"text": text, "occurred_at": f"{day}T09:00:00+00:00"}).json()["job_id"]
        assert api.wait_for_job(job)["status"] == "done"
    other = ApiClient.for_user(stranger)
    assert other.wait_for_job(other.post("/notes", {"text": "# Secret plans\n\nParty on Friday."}).json()["job_id"])
    processed(api, "lorem.pdf", (PDFS / "multicolumn_latex_two_column_lorem.pdf").read_bytes())  # dated today

    last = events_of(user=user, question="What was the last thing I wrote down?")[-1]
    assert [citation["source_title"] for citation in last["citations"]] == ["Books"], last["answer"]
    assert last["answer"].startswith("Your newest source — 1 source:") and not last["abstained"]
    assert "**Books** (20 November 2026): Tom recommended Piranesi" in last["answer"]  # the title not twice
    # What was written is a note; what was added last is the PDF.
    added = events_of(user=user, question="What's the newest thing I've added?")[-1]
    assert [citation["source_title"] for citation in added["citations"]] == ["lorem"], added["answer"]
    oldest = events_of(user=user, question="What's the oldest note I have?")[-1]
    assert [citation["source_title"] for citation in oldest["citations"]] == ["Boiler serviced, all fine."]
    latest = events_of(user=user, question="Show me my latest notes")[-1]
    assert [citation["source_title"] for citation in latest["citations"]] == [
        "Books",
        "Garden plan",
        "Boiler serviced, all fine.",
    ]
    assert scripted_model.script.requests == 0
    assert Message.objects.get(pk=last["message_id"]).route == Message.Route.LISTING

    # With a topic it is a question for the notes, not a listing.
    scripted_model.script = Script(tokens=["Tom recommended The Overstory [1]."])
    asked = events_of(user=user, question="What was the last book Tom recommended?")[-1]
    assert scripted_model.script.requests == 1 and asked["citations"], asked["answer"]
    assert events_of(user=make_user("newcomer"), question="What was the last thing I wrote down?")[-1]["answer"] == (
        "There is nothing in your notes yet."
    )


def test_a_listing_of_days_to_come_shows_the_note_that_speaks_of_them(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    user = make_user("planner-of-notes")
    api = ApiClient.for_user(user)
    today = timezone.now().date()
    away = today + timedelta(days=6)
    for title, text, written in [
        (
            "1:1 with Priya",
            f"Roadmap review went fine.\nPriya is off on {away.day} {away:%B}, Ben covers approvals.",
            3,
        ),
        ("Boiler", "Boiler serviced, all fine.", 1),
        ("Diary", f"Went to the cinema on {(today - timedelta(days=5)).day} {today - timedelta(days=5):%B}.", 2),
    ]:
        when = (timezone.now() - timedelta(days=written)).isoformat()
        job = api.post("/notes", {"title": title, "text": text, "occurred_at": when}).json()["job_id"]
        assert api.wait_for_job(job)["status"] == "done"

    done = events_of(user=user, question="What's on in the next 10 days?")[-1]

    assert [citation["source_title"] for citation in done["citations"]] == ["1:1 with Priya"], done["answer"]
    # The line that speaks of the day, not the note's opening; and when it was written.
    assert f"Priya is off on {away.day} {away:%B}, Ben covers approvals" in done["answer"], done["answer"]
    assert "Roadmap review" not in done["answer"] and "(written " in done["answer"]
    assert scripted_model.script.requests == 0
    # Written on one day and speaking of another: a listing of the day it was written still shows it whole.
    that_day = events_of(user=user, question="What did I note down 3 days ago?")[-1]
    assert "Roadmap review went fine" in that_day["answer"], that_day["answer"]


def test_what_i_wrote_on_a_day_is_what_is_dated_then_and_a_wide_plan_is_no_days_news(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    """ "What did I write yesterday?" lists yesterday's notes, not today's that tells of last night; "what
    happened yesterday?" lists that one too. A note that speaks of "the next two weeks" is no answer to
    "what's on tomorrow?", where one that says "tomorrow" is."""
    user = make_user("day-by-day")
    api = ApiClient.for_user(user)
    for title, text, written in [
        ("Boiler", "Boiler serviced, all fine.", 1),
        ("Trip", "Booked the flights last night!!", 0),
        ("Book club", "Book club in the next two weeks, bring the Zevin.", 0),
        ("Dentist", "Dentist tomorrow at 9.", 0),
        ("School tour", "pay Finn's school tour on the app - last day!!", 0),
    ]:
        when = (timezone.now() - timedelta(days=written, minutes=1)).isoformat()
        job = api.post("/notes", {"title": title, "text": text, "occurred_at": when}).json()["job_id"]
        assert api.wait_for_job(job)["status"] == "done"

    def listed(question: str) -> tuple[set[str], str]:
        done = events_of(user=user, question=question)[-1]
        return {citation["source_title"] for citation in done["citations"]}, done["answer"]

    on_the_day, answer = listed("What did I write yesterday?")
    assert on_the_day == {"Boiler"} and answer.startswith("Written on "), answer
    happened, answer = listed("What happened yesterday?")
    assert happened == {"Boiler", "Trip"}, answer  # "last day!!" of the school tour is no yesterday
    coming, answer = listed("What's on tomorrow?")
    assert coming == {"Dentist"}, answer
    assert "Book club" in listed("What's on in the next 10 days?")[0]
    assert scripted_model.script.requests == 0


PARTY_NOTE = """Ella's party
Sat 14th, 3-5pm at the climbing wall, booked for up to 10 kids, €150
coming (6 so far): Ava, Sam, Noor, Luca, Grace, Tom
no reply yet from the twins"""


def test_a_question_that_finds_nothing_alone_is_read_as_a_follow_up_when_that_finds_its_words(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    user = User.objects.create_user("host", password="x-long-enough-Passw0rd")
    note_of(user, GARDEN_NOTE)
    note_of(user, PARTY_NOTE)
    scripted_model.script = Script(tokens=["Ella's party is on Saturday the 14th, 3–5pm [1]."])
    first = events_of(user=user, question="When is Ella's party?")[-1]
    assert not first["abstained"], first["answer"]
    alone = events_of(user=user, question="How many kids have said yes so far?")[-1]  # a conversation of its own
    assert alone["abstained"] and scripted_model.script.requests == 1

    scripted_model.script = Script(tokens=["Six are coming so far: Ava, Sam, Noor, Luca, Grace and Tom [1]."])
    events = events_of(
        user=user, question="How many kids have said yes so far?", conversation_id=first["conversation_id"]
    )
    read_as = next(event for event in events if event["type"] == "stage" and event["stage"] == "follow_up")
    assert read_as["text"] == "Read as a follow-up: How many kids have said yes so far? (When is Ella's party?)"
    done = events[-1]
    assert not done["abstained"] and done["citations"][0]["source_title"] == "Ella's party", Message.objects.get(
        pk=done["message_id"]
    ).citation_check

    # Or it points back with "it", though none of its words is in the note.
    scripted_model.script = Script(tokens=["Ella's party is on Saturday the 14th, 3–5pm [1]."])
    again = events_of(user=user, question="When is Ella's party?")[-1]
    scripted_model.script = Script(tokens=["The climbing wall costs €150 for up to 10 kids [1]."])
    question = "How much am I paying for it all in the end?"
    events = events_of(user=user, question=question, conversation_id=again["conversation_id"])
    assert "follow_up" in stages(events) and not events[-1]["abstained"], events[-1]["answer"]

    # The last question's words alone find its passages: a question none of whose words they have is not
    # read as about them, and stays unanswered.
    absent = events_of(
        user=user, question="What's Bernadette's phone number?", conversation_id=first["conversation_id"]
    )
    assert "follow_up" not in stages(absent) and absent[-1]["abstained"]
    assert scripted_model.script.requests == 1  # the script of the "it" question: the absent one was not asked


def test_a_fact_question_shows_the_model_only_the_passages_near_the_best_one(
    celery_worker: None, scripted_model: ScriptedModel
) -> None:
    """The tickets' note tells what the Lankum tickets cost; the trip's notes and the party pass the relevance
    gate but are far below it, and would only cost the model's time to its first word. Asked for a list, the
    same notes are all read."""
    user = make_user("fan")
    for name in ("lankum-tickets.txt", "gift-ideas.txt", "copenhagen-trip.md", "finn-birthday-party.md"):
        note_of(user, (FIRSTWEEK / name).read_text())
    scripted_model.script = Script(tokens=["Two standing tickets came to €109.40 [1]."])
    events_of(user=user, question="How much did the Lankum tickets cost?")
    fact = scripted_model.script.bodies[-1]["messages"][0]["content"].split("Sources:", 1)[1]  # type: ignore[index]
    assert "€109.40" in fact and "kroner" not in fact and "Jump Zone" not in fact, fact
    scripted_model.script = Script(tokens=["- Lankum tickets [1]"])
    events_of(user=user, question="Which things have I bought tickets or booked places for?")
    listed = scripted_model.script.bodies[-1]["messages"][0]["content"].split("Sources:", 1)[1]  # type: ignore[index]
    assert "€109.40" in listed and _numbered(listed) > _numbered(fact), listed


def _numbered(sources: str) -> int:
    return len(re.findall(r"^\[\d+\] ", sources, re.MULTILINE))
