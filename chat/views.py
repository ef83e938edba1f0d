from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.http import AuthedRequest
from chat import selectors, services
from chat.forms import SearchForm
from chat.models import Message

SEARCH_RESULTS = 10


@dataclass(frozen=True)
class Turn:
    """A question and its answer (None when none was stored: stopped before the model wrote)."""

    question: Message
    answer: Message | None
    last: bool


@login_required
def chat(request: AuthedRequest, conversation_id: int | None = None) -> HttpResponse:
    conversation = (
        selectors.conversation_get(owner=request.user, conversation_id=conversation_id)
        if conversation_id is not None
        else None
    )
    context = {
        "conversations": selectors.conversations_of(owner=request.user)[:50],
        "conversation": conversation,
        "turns": turns_of(selectors.messages_of(conversation=conversation)) if conversation else [],
    }
    return render(request, "chat/chat.html", context)


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
            owner=request.user, query=form.cleaned_data["q"], k=SEARCH_RESULTS, kind=form.cleaned_data["kind"] or None
        )
    return render(request, "chat/search.html", {"form": form, "retrieval": retrieval})


def turns_of(messages: Iterable[Message]) -> list[Turn]:
    """Pair each question with the answer after it: the page keys a turn by its question's id, as
    the socket's `start` event does, so a regenerated answer replaces the one shown."""
    pairs: list[tuple[Message, Message | None]] = []
    for message in messages:
        if message.role == Message.Role.USER:
            pairs.append((message, None))
        elif pairs and pairs[-1][1] is None:
            pairs[-1] = (pairs[-1][0], message)
    return [Turn(question, answer, last=index == len(pairs) - 1) for index, (question, answer) in enumerate(pairs)]
