"""A deleted source's words leave its owner's stored answers, however it is deleted (see
`ingestion/signals.py`: the app's one-statement delete sends the same signal as the ORM's)."""

from typing import Any

from django.db.models import QuerySet
from django.db.models.signals import pre_delete
from django.dispatch import receiver

from accounts.models import User
from chat.services import source_forget
from ingestion.models import Source


@receiver(pre_delete, sender=Source, dispatch_uid="chat.source_forget")
def forget_source_text(sender: type[Source], instance: Source, origin: object = None, **kwargs: Any) -> None:
    if _user_going(origin):  # the user's conversations go in the same deletion: nothing to rewrite
        return
    source_forget(source=instance)


def _user_going(origin: object) -> bool:
    return isinstance(origin, User) or (isinstance(origin, QuerySet) and origin.model is User)
