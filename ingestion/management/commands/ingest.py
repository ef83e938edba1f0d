"""`manage.py ingest PATH… --user NAME`: files and folders from this machine, as if uploaded one by one."""

import os
import time
from argparse import ArgumentParser
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from accounts.models import User
from accounts.selectors import user_named
from ingestion import selectors, services
from ingestion.models import Job
from secondbrain import rls
from secondbrain.errors import AppError

# Refusals that say the file is not for us (or already here), not that something went wrong.
SKIPPED_CODES = frozenset({"unsupported_type", "duplicate"})
FINISHED = (Job.Status.DONE, Job.Status.FAILED, Job.Status.CANCELLED)
POLL_SECONDS = 0.5


@dataclass
class Outcome:
    added: dict[Path, Job] = field(default_factory=dict)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)


class Command(BaseCommand):
    help = (
        "Add files and folders (recursively) to a person's sources: notes (Markdown with front matter, "
        "such as an Obsidian vault), PDFs and audio. Hidden files and folders (.obsidian, .git) are skipped."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path, metavar="PATH")
        parser.add_argument("--user", required=True, help="the username whose sources these become")
        parser.add_argument("--wait", action="store_true", help="wait for processing and report each outcome")
        parser.add_argument(
            "--private", action="store_true", help="add them as private: left out of search and answers unless asked"
        )

    def handle(self, *args: Any, paths: list[Path], user: str, wait: bool, private: bool, **options: Any) -> None:
        owner = user_named(user)
        if owner is None:
            raise CommandError(f"There is no user named {user!r}.")
        with rls.owner_scope(owner.pk):
            self._ingest(owner, paths, wait=wait, private=private)

    def _ingest(self, owner: User, paths: list[Path], *, wait: bool, private: bool) -> None:
        outcome = Outcome()
        files = self._files(paths, outcome)
        # The bar writes to the stream itself: OutputWrapper ends every write with a newline, which
        # would turn each redraw into a line of its own. disable=None: no bar unless on a terminal.
        for path in tqdm(files, desc="Adding", unit="file", file=self.stderr._out, disable=None):
            try:
                outcome.added[path] = services.file_add(owner=owner, path=path, private=private)
            except AppError as exc:
                (outcome.skipped if exc.code in SKIPPED_CODES else outcome.failed).append((path, _reason(exc)))
            except OSError as exc:
                outcome.failed.append((path, f"unreadable: {exc.strerror or exc}"))
        if wait and outcome.added:
            self._wait(owner, outcome)
        self._summary(outcome, waited=wait)
        if outcome.failed:
            raise CommandError(f"{len(outcome.failed)} of {len(files)} files failed.")

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
        pending = {job.pk: path for path, job in outcome.added.items()}
        with tqdm(total=len(pending), desc="Processing", unit="file", file=self.stderr._out, disable=None) as bar:
            while pending:
                for job in selectors.jobs_of(owner=owner).filter(pk__in=pending, status__in=FINISHED):
                    path = pending.pop(job.pk)
                    if job.status == Job.Status.DONE:
                        outcome.added[path] = job
                    else:
                        del outcome.added[path]
                        outcome.failed.append((path, f"{job.error_code or job.status}: {job.error_message}"))
                    bar.update()
                if pending:
                    time.sleep(POLL_SECONDS)

    def _summary(self, outcome: Outcome, *, waited: bool) -> None:
        verb = "Added" if waited else "Added (processing continues in the worker)"
        self.stdout.write(f"{verb}: {len(outcome.added)}")
        for path, job in outcome.added.items():
            self.stdout.write(f"  {path} → “{job.source.title}”")
        for heading, rows in (("Skipped", outcome.skipped), ("Failed", outcome.failed)):
            self.stdout.write(f"{heading}: {len(rows)}")
            for path, reason in rows:
                self.stdout.write(f"  {path}: {reason}")


def _reason(error: AppError) -> str:
    return f"{error.code}: {error.message}"
