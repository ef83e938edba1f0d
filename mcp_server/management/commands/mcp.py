"""`manage.py mcp --user NAME`: the MCP server over stdio, for an assistant that starts it itself
(Claude Desktop's `command`), acting for NAME.

Whoever can run `manage.py` on this machine can read every account's data already; naming the person
here is the same trust as `manage.py ask --user NAME`. Calls are audited as "MCP over stdio".
"""

from argparse import ArgumentParser
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError

from accounts.models import AuditEntry
from accounts.selectors import user_named
from accounts.services import Via
from mcp_server.tools import Caller, caller, server
from secondbrain import rls


class Command(BaseCommand):
    help = "Serve the MCP tools over stdin/stdout for one person (for an MCP client that starts this command)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--user", required=True, help="the username whose notes the tools reach")

    def handle(self, *args: Any, user: str, **options: Any) -> None:
        owner = user_named(user)
        if owner is None:
            raise CommandError(f"There is no user named {user!r}.")
        # stdout is the protocol's channel from here on: nothing else may be written to it.
        caller.set(Caller(user=owner, via=Via(AuditEntry.Channel.STDIO)))
        with rls.owner_scope(owner.pk):
            anyio.run(server.run_stdio_async)
