from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.http import PAGE, AuthedRequest
from chat import selectors, services
from chat.forms import SearchForm
from chat.models import Message
from ingestion.models import Source
from secondbrain.errors import AppError, with_retry_after

SEARCH_RESULTS = 10


@dataclass(frozen=True)
class Turn:
    """A question and its answer (None when none was stored: stopped before the model wrote)."""

    question: Message
    answer: Message | None
    last: bool
    remembered: Source | None = None  # the note the answer was saved as ("Remember this")


@login_required
def chat(request: AuthedRequest, conversation_id: int | None = None) -> HttpResponse:
    conversation = (
        selectors.conversation_get(owner=request.user, conversation_id=conversation_id)
        if conversation_id is not None
        else None
    )
    turns: list[Turn] = []
    if conversation is not None:
        messages = list(selectors.messages_of(conversation=conversation))
        answers = [message.pk for message in messages if message.role == Message.Role.ASSISTANT]
        turns = turns_of(messages, remembered=selectors.remembered_notes(owner=request.user, message_ids=answers))
    context = {
        "conversations": selectors.conversations_of(owner=request.user)[:50],
        "conversation": conversation,
        "turns": turns,
    }
    return render(request, "chat/chat.html", context)


@login_required
@require_POST
def message_remember(request: AuthedRequest, message_id: int) -> HttpResponse:
    """The "Remember this" button under an answer: with htmx the button comes back as "Remembered" and a link to
    the note; posted without it, the conversation again."""
    try:
        remembered = services.message_remember(user=request.user, message_id=message_id, via=PAGE)
    except AppError as exc:
        context = {"message_id": message_id, "remember_error": exc.message}
        # htmx swaps only a 2xx answer: the button with its error comes back as one.
        response = render(request, "chat/chat.html#remember", context, status=200 if request.htmx else exc.status)
        return with_retry_after(response, exc)
    if request.htmx:
        return render(request, "chat/chat.html#remember", {"message_id": message_id, "remembered": remembered.source})
    return redirect("conversation", remembered.message.conversation_id)


@login_required
@require_POST
def conversation_delete(request: AuthedRequest, conversation_id: int) -> HttpResponse:
    """Delete the conversation (the page asks first), then show a new one."""
    services.conversation_delete(
        conversation=selectors.conversation_get(owner=request.user, conversation_id=conversation_id)
    )
    if request.htmx:
        return HttpResponse(status=204, headers={"HX-Redirect": reverse("chat")})
    return redirect("chat")


@login_required
def search(request: AuthedRequest) -> HttpResponse:
    """The owner's passages for `q`, best first, as `GET /api/search` finds them; no `q`, only the form."""
    form = SearchForm(request.GET or None)
    retrieval = None
    if form.is_valid() and form.cleaned_data["q"]:
        retrieval = selectors.retrieve(
            owner=request.user,
            query=form.cleaned_data["q"],
            k=SEARCH_RESULTS,
            kind=form.cleaned_data["kind"] or None,
            include_private=form.cleaned_data["include_private"],
        )
    return render(request, "chat/search.html", {"form": form, "retrieval": retrieval})


def turns_of(messages: Iterable[Message], *, remembered: Mapping[int, Source] | None = None) -> list[Turn]:
    """Pair each question with the answer after it: the page keys a turn by its question's id, as
    the socket's `start` event does, so a regenerated answer replaces the one shown."""
    pairs: list[tuple[Message, Message | None]] = []
    for message in messages:
        if message.role == Message.Role.USER:
            pairs.append((message, None))
        elif pairs and pairs[-1][1] is None:
            pairs[-1] = (pairs[-1][0], message)
    remembered = remembered or {}
    return [
        Turn(question, answer, last=index == len(pairs) - 1, remembered=remembered.get(answer.pk) if answer else None)
        for index, (question, answer) in enumerate(pairs)
    ]
