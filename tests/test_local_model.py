"""The chat model `make run` serves: the local llama.cpp server this test run started the way `make run` does.

The suite's answers come from a scripted model; this is the one place the real one must answer. It
caught a build of llama.cpp that used instructions the machine reports but faults on (AMX tiles in a
virtual machine): the server started, then died on its first answer, and every chat with it.
"""

import os
import threading

import openai
from openai.types.chat import ChatCompletionMessageParam

SHOPPING: list[ChatCompletionMessageParam] = [
    {"role": "system", "content": "Sources:\n[1] Shopping (3 May 2026)\nMilk, eggs and a loaf of brown bread."},
    {"role": "user", "content": "What bread do I need to buy?"},
]


def local_model() -> openai.OpenAI:
    return openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"], max_retries=0)


def test_the_local_chat_model_answers_a_question() -> None:
    reply = local_model().chat.completions.create(
        model=os.environ["CHAT_MODEL"], messages=SHOPPING, temperature=0.0, max_tokens=12, timeout=60
    )
    assert "brown" in (reply.choices[0].message.content or "").lower()


def test_a_second_question_waits_its_turn_and_does_not_cut_the_answer_being_written() -> None:
    """llama-cpp-python's server ended the answer it streamed, with no error, when another request came."""
    counting: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": "Write the numbers from 1 to 40, separated by commas."}
    ]
    first: list[tuple[str, str | None]] = []
    writing = threading.Event()

    def ask_to_count() -> None:
        stream = local_model().chat.completions.create(
            model=os.environ["CHAT_MODEL"], messages=counting, temperature=0.0, max_tokens=80, timeout=120,
            stream=True,
        )  # fmt: skip
        text, finish = "", None
        for chunk in stream:
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
                finish = chunk.choices[0].finish_reason or finish
                if text:
                    writing.set()  # its first words are out: the second question comes now
        first.append((text, finish))

    counter = threading.Thread(target=ask_to_count)
    counter.start()
    assert writing.wait(timeout=120)
    reply = local_model().chat.completions.create(
        model=os.environ["CHAT_MODEL"],
        messages=SHOPPING,
        temperature=0.0,
        max_tokens=12,
        timeout=120,
    )
    counter.join(timeout=120)
    ((text, finish),) = first
    assert finish in {"stop", "length"} and "10" in text, first  # written to its end
    assert "brown" in (reply.choices[0].message.content or "").lower()
