"""`manage.py ingest PATH_OR_URL… --user NAME`: files and folders from this machine, as if uploaded one by
one, and web pages by their http(s) address, as if added on the page."""

import os
import re
import time
from argparse import ArgumentParser
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from accounts.models import AuditEntry, User
from accounts.selectors import user_named
from accounts.services import Via
from ingestion import selectors, services
from ingestion.models import Job
from secondbrain import rls
from secondbrain.errors import AppError

# Refusals that say the file is not for us (or already here), not that something went wrong.
SKIPPED_CODES = frozenset({"unsupported_type", "duplicate"})
FINISHED = (Job.Status.DONE, Job.Status.FAILED, Job.Status.CANCELLED)
POLL_SECONDS = 0.5


WEB_ADDRESS = re.compile(r"https?://", re.IGNORECASE)
Item = Path | str  # a file, or a web page's address


@dataclass
class Outcome:
    added: dict[Item, Job] = field(default_factory=dict)
    skipped: list[tuple[Item, str]] = field(default_factory=list)
    failed: list[tuple[Item, str]] = field(default_factory=list)


class Command(BaseCommand):
    help = (
        "Add files and folders (recursively) to a person's sources: notes (Markdown with front matter, "
        "such as an Obsidian vault), PDFs, audio, images and calendars; and web pages by their http(s) address. "
        "Hidden files and folders (.obsidian, .git) are skipped."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH_OR_URL")
        parser.add_argument("--user", required=True, help="the username whose sources these become")
        parser.add_argument("--wait", action="store_true", help="wait for processing and report each outcome")
        parser.add_argument(
            "--private", action="store_true", help="add them as private: left out of search and answers unless asked"
        )

    def handle(self, *args: Any, paths: list[str], user: str, wait: bool, private: bool, **options: Any) -> None:
        owner = user_named(user)
        if owner is None:
            raise CommandError(f"There is no user named {user!r}.")
        with rls.owner_scope(owner.pk):
            self._ingest(owner, paths, wait=wait, private=private)

    def _ingest(self, owner: User, paths: list[str], *, wait: bool, private: bool) -> None:
        outcome = Outcome()
        items: list[Item] = []
        for path in paths:
            items += [path] if WEB_ADDRESS.match(path) else self._files([Path(path)], outcome)
        # The bar writes to the stream itself: OutputWrapper ends every write with a newline, which
        # would turn each redraw into a line of its own. disable=None: no bar unless on a terminal.
        for item in tqdm(items, desc="Adding", unit="item", file=self.stderr._out, disable=None):
            try:
                outcome.added[item] = self._add(owner, item, private=private)
            except AppError as exc:
                (outcome.skipped if exc.code in SKIPPED_CODES else outcome.failed).append((item, _reason(exc)))
            except OSError as exc:
                outcome.failed.append((item, f"unreadable: {exc.strerror or exc}"))
        if wait and outcome.added:
            self._wait(owner, outcome)
        self._summary(outcome, waited=wait)
        if outcome.failed:
            noun = "files" if all(isinstance(item, Path) for item in items) else "items"
            raise CommandError(f"{len(outcome.failed)} of {len(items)} {noun} failed.")

    def _add(self, owner: User, item: Item, *, private: bool) -> Job:
        if isinstance(item, Path):
            return services.file_add(owner=owner, path=item, private=private)
        # Not counted against the web's upload rate, as files from this machine are not.
        return services.web_page_create(
            owner=owner, url=item, rated=False, via=Via(AuditEntry.Channel.COMMAND), private=private
        )

    def _files(self, paths: list[Path], outcome: Outcome) -> list[Path]:
        """Every file under `paths`, hidden ones left out (and listed as skipped) and in a stable order."""
        found: list[Path] = []
        for path in paths:
            if path.is_file():
                found.append(path)
            elif path.is_dir():
                for root, folders, names in os.walk(path):
                    for hidden in sorted(name for name in folders + names if name.startswith(".")):
                        outcome.skipped.append((Path(root) / hidden, "hidden"))
                    folders[:] = sorted(name for name in folders if not name.startswith("."))
                    found += [Path(root) / name for name in sorted(names) if not name.startswith(".")]
            else:
                outcome.failed.append((path, "not_found: there is no such file or folder."))
        return found

    def _wait(self, owner: User, outcome: Outcome) -> None:
        """Poll the jobs until each has finished; failed ones move to `failed` with the worker's reason."""
        pending = {job.pk: item for item, job in outcome.added.items()}
        with tqdm(total=len(pending), desc="Processing", unit="file", file=self.stderr._out, disable=None) as bar:
            while pending:
                for job in selectors.jobs_of(owner=owner).filter(pk__in=pending, status__in=FINISHED):
                    item = pending.pop(job.pk)
                    if job.status == Job.Status.DONE:
                        outcome.added[item] = job
                    else:
                        del outcome.added[item]
                        outcome.failed.append((item, f"{job.error_code or job.status}: {job.error_message}"))
                    bar.update()
                if pending:
                    time.sleep(POLL_SECONDS)

    def _summary(self, outcome: Outcome, *, waited: bool) -> None:
        verb = "Added" if waited else "Added (processing continues in the worker)"
        self.stdout.write(f"{verb}: {len(outcome.added)}")
        for item, job in outcome.added.items():
            self.stdout.write(f"  {item} → “{job.source.title}”")
        for heading, rows in (("Skipped", outcome.skipped), ("Failed", outcome.failed)):
            self.stdout.write(f"{heading}: {len(rows)}")
            for item, reason in rows:
                self.stdout.write(f"  {item}: {reason}")


def _reason(error: AppError) -> str:
    return f"{error.code}: {error.message}"
