"""The one module that talks to a chat-model server, through the `openai` client.

Any OpenAI-compatible server works: OpenAI, Ollama, vLLM, or the local llama.cpp server that
`make run` starts.
"""

from collections.abc import AsyncIterator

import openai
from django.conf import settings


class ModelError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


async def chat_stream(messages: list[dict[str, str]], *, max_tokens: int) -> AsyncIterator[str]:
    """Yield the answer's text as the model produces it; failures become a ModelError."""
    # A client per call: its connection pool belongs to the event loop that created it, and
    # answers run on whichever loop the consumer or the API view happens to have.
    client = openai.AsyncOpenAI(
        base_url=settings.OPENAI_BASE_URL,
        api_key=settings.OPENAI_API_KEY,
        timeout=float(settings.CHAT_TIMEOUT_SECONDS),
        max_retries=0,
    )
    try:
        stream = await client.chat.completions.create(
            model=settings.CHAT_MODEL,
            messages=messages,  # type: ignore[arg-type]
            stream=True,
            temperature=0.0,
            max_tokens=max_tokens,
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                yield chunk.choices[0].delta.content
    except openai.APITimeoutError:
        raise ModelError("model_timeout", "The chat model took too long to answer.") from None
    except openai.APIConnectionError:
        raise ModelError("model_unavailable", "The chat model server cannot be reached.") from None
    except openai.APIStatusError as exc:
        raise ModelError("model_error", f"The chat model server answered with an error ({exc.status_code}).") from None
    finally:
        await client.close()
