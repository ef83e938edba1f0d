"""A question about the assistant gets the answer to what it asked, not one introduction for all."""

import pytest

from chat import intent, replies

LOCAL = replies.Setting(sources=3, model="qwen2.5-coder-1.5b-instruct", model_url="http://127.0.0.1:8081/v1")


@pytest.mark.parametrize(
    ("message", "topic"),
    [
        ("What can you do?", "about"),
        ("where do your answers come from?", "about"),
        ("How do I add a new note?", "add"),
        ("How do I add a PDF?", "add"),
        ("What kind of files can I add?", "kinds"),
        ("How do I delete a file?", "delete"),
        ("Can other people see my notes?", "privacy"),
        ("is my data private?", "privacy"),
        ("are my notes stored in the cloud?", "storage"),
        ("Do you use the internet?", "storage"),
        ("Are you ChatGPT?", "model"),
        ("which AI model are you?", "model"),
        ("Do you remember our earlier chats?", "memory"),
        ("How should I ask you things to get good answers?", "asking"),
    ],
)
def test_a_question_about_the_assistant_is_read_for_what_it_asks(message: str, topic: str) -> None:
    assert intent.read(message).kind == intent.CONVERSATION
    assert replies.topic_of(message) == topic


def test_each_topic_has_its_own_reply_and_only_what_can_you_do_gets_the_introduction() -> None:
    said = {topic: replies.reply(("meta",), topic, LOCAL) for topic in [name for name, _ in replies.TOPICS] + ["about"]}
    assert len(set(said.values())) == len(said)
    assert said["about"].startswith("I answer questions from what you keep here")
    assert "You have 3 sources here so far." in said["about"] and "You have 3 sources" in said["add"]
    assert all(not text.startswith("I answer questions") for topic, text in said.items() if topic != "about")


def test_where_the_model_runs_is_told_as_it_is() -> None:
    assert "runs on this server, so nothing leaves it" in replies.reply(("meta",), "storage", LOCAL)
    remote = replies.Setting(sources=0, model="gpt-4o-mini", model_url="https://api.openai.com/v1")
    told = replies.reply(("meta",), "storage", remote)
    assert "reached at api.openai.com, which is sent the passages each answer reads" in told
    assert "nothing leaves" not in told
    assert "You haven't added anything yet." in replies.reply(("meta",), "add", remote)


def test_a_greeting_with_a_question_about_the_assistant_greets_first() -> None:
    assert replies.reply(("greeting", "meta"), "asking", LOCAL).startswith("Hello! Ask as you would ask")
    assert replies.reply(("thanks", "farewell"), "about", LOCAL) == "You're welcome! Bye for now."
