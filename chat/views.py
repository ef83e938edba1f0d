from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from chat import selectors


@login_required
def chat(request: HttpRequest, conversation_id: int | None = None) -> HttpResponse:
    conversation = (
        selectors.conversation_get(owner=request.user, conversation_id=conversation_id)
        if conversation_id is not None
        else None
    )
    context = {
        "conversations": selectors.conversations_of(owner=request.user)[:50],
        "conversation": conversation,
        "messages": selectors.messages_of(conversation=conversation) if conversation else [],
    }
    return render(request, "chat/chat.html", context)
