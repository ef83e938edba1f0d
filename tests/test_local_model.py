"""The chat model `make run` serves: the local llama.cpp server this test run started the way `make run` does.

The suite's answers come from a scripted model; this is the one place the real one must answer. It
caught a build of llama.cpp that used instructions the machine reports but faults on (AMX tiles in a
virtual machine): the server started, then died on its first answer, and every chat with it.
"""

import os

import openai


def test_the_local_chat_model_answers_a_question() -> None:
    client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"], max_retries=0)
    reply = client.chat.completions.create(
        model=os.environ["CHAT_MODEL"],
        messages=[
            {"role": "system", "content": "Sources:\n[1] Shopping (3 May 2026)\nMilk, eggs and a loaf of brown bread."},
            {"role": "user", "content": "What bread do I need to buy?"},
        ],
        temperature=0.0,
        max_tokens=12,
        timeout=60,
    )
    assert "brown" in (reply.choices[0].message.content or "").lower()
