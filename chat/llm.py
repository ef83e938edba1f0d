"""The one module that talks to a chat-model server, through the `openai` client.

Any OpenAI-compatible server works: OpenAI, Ollama, vLLM, or the local llama.cpp server that
`make run` starts.
"""

import asyncio
import atexit
import functools
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import httpx2
import openai
from django.conf import settings
from openai.types.chat import ChatCompletionMessageParam

from secondbrain import metrics

logger = logging.getLogger(__name__)

# Without the model's own vocabulary a token is taken to be three characters: fewer than BPE
# vocabularies average on English, so the estimate errs towards leaving a turn out.
CHARS_PER_TOKEN_ESTIMATE = 3
BROKEN_STREAM = "The chat model's answer broke off before it was finished."


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
    streaming = False
    usage = Usage(started=time.perf_counter())
    try:
        stream = await client.chat.completions.create(
            model=settings.CHAT_MODEL,
            messages=cast("list[ChatCompletionMessageParam]", messages),
            stream=True,
            temperature=0.0,
            max_tokens=max_tokens,
            # The token counts as the last chunk (OpenAI, vLLM, Ollama); llama.cpp's server ignores it.
            stream_options={"include_usage": True},
        )
        streaming = True
        async for chunk in stream:
            if chunk.usage is not None:
                usage.reported = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
            if chunk.choices and chunk.choices[0].delta.content:
                usage.first_token = usage.first_token or time.perf_counter()
                usage.answer.append(chunk.choices[0].delta.content)
                yield chunk.choices[0].delta.content
        usage.outcome = "done"
    except openai.APITimeoutError:
        raise ModelError("model_timeout", "The chat model took too long to answer.") from None
    except openai.APIConnectionError:
        if streaming:  # the server answered, then the connection dropped
            raise ModelError("model_stream_broken", BROKEN_STREAM) from None
        raise ModelError("model_unavailable", "The chat model server cannot be reached.") from None
    except openai.APIStatusError as exc:
        raise ModelError("model_error", f"The chat model server answered with an error ({exc.status_code}).") from None
    except (openai.APIError, httpx2.HTTPError):
        # A connection that drops mid-answer surfaces as an error of httpx2 (this openai release's
        # HTTP client, which it does not wrap while a stream is read), or as an APIError.
        raise ModelError("model_stream_broken", BROKEN_STREAM) from None
    finally:
        await client.close()
        if settings.METRICS_ENABLED:
            # In a thread: counting with the model's vocabulary and writing to Redis would hold the event loop.
            await asyncio.to_thread(usage_record, usage, messages)


@dataclass
class Usage:
    """One call's timings and tokens; `outcome` stays "failed" unless the stream ended by itself."""

    started: float
    first_token: float | None = None
    answer: list[str] = field(default_factory=list)
    reported: tuple[int, int] | None = None  # (in, out) as the server counted them
    outcome: str = "failed"


def usage_record(usage: Usage, messages: list[dict[str, str]]) -> None:
    """The call's latencies and tokens in the metrics: the server's counts, else our own (an answer
    stopped or broken off has no usage from the server)."""
    model = settings.CHAT_MODEL
    if usage.first_token is not None:
        metrics.observe("model_first_token_seconds", usage.first_token - usage.started, model=model)
    metrics.observe("model_answer_seconds", time.perf_counter() - usage.started, model=model, outcome=usage.outcome)
    if usage.reported is not None:
        tokens_in, tokens_out, counted = *usage.reported, "server"
    else:
        tokens_in = sum(count_tokens(message["content"]) for message in messages)
        tokens_out, counted = count_tokens("".join(usage.answer)), "estimate"
    metrics.count("model_tokens", tokens_in, model=model, direction="in", counted=counted)
    metrics.count("model_tokens", tokens_out, model=model, direction="out", counted=counted)


# Answers' steps run on several threads (CHAT_THREADS): the vocabulary is loaded once, and
# llama-cpp-python does not promise that one C object may tokenize on two threads at once.
_tokenizer_lock = threading.Lock()


def count_tokens(text: str) -> int:
    """How many tokens the chat model reads for `text`: its own tokenizer when its weights are local."""
    with _tokenizer_lock:
        return _tokenizer(str(settings.CHAT_MODEL_PATH))(text)


@functools.cache
def _tokenizer(model_path: str) -> Callable[[str], int]:
    """The vocabulary of the local GGUF (loaded alone: no weights, ~0.1 s), or an estimate."""
    if not Path(model_path).is_file():
        return lambda text: -(-len(text) // CHARS_PER_TOKEN_ESTIMATE)
    try:
        import llama_cpp
    except ImportError:
        logger.warning("llama_cpp is not installed: token counts for %s are estimated", model_path)
        return lambda text: -(-len(text) // CHARS_PER_TOKEN_ESTIMATE)
    vocabulary = llama_cpp.Llama(model_path=model_path, vocab_only=True, verbose=False)
    # Freed before the interpreter tears modules down: llama_cpp's own finaliser then finds its
    # C bindings gone and prints a TypeError at every exit.
    atexit.register(vocabulary.close)
    return lambda text: len(vocabulary.tokenize(text.encode(), add_bos=False, special=False))
