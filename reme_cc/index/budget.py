"""What of a repository's team memory gets indexed: its content is anyone's commit, so it is bounded.

A team index (``Index(..., budget=Budget.of(config))``) indexes at most ``team_max_files`` files and
``team_max_bytes`` bytes, chosen in a fixed order (digest/ first, then resource/, then daily/ newest
first, then the rest); PDF and .docx files only when the user opted in (``team_documents``), and then
with at most ``team_extract_s`` seconds of extraction per session. Files beyond the budget are left
out of the catalog (the answer says how many). Every write of a team index runs in the background
(writer.CatalogWriter), so no repository can hold a tool.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

from ..notes.documents import DOCUMENT_EXTS, MAX_DOCUMENT_BYTES

_ORDER = ("digest/", "resource/", "daily/")


@dataclass(frozen=True)
class Budget:
    files: int
    bytes: int
    documents: bool
    extract_s: float

    @classmethod
    def of(cls, config: Any) -> Budget:
        return cls(config.team_max_files, config.team_max_bytes, config.team_documents, config.team_extract_s)


@dataclass(frozen=True)
class Selection:
    kept: dict[str, tuple[int, int]]  # {path: (mtime_ns, size)} to index
    total: int  # files the walk found
    documents: int  # PDF/.docx left out (not opted in, or the extraction time is spent)
    over: str | None  # the budget setting that cut the rest, if any

    def note(self) -> str | None:
        """One line for the answer when something was left out."""
        if len(self.kept) == self.total:
            return None
        parts = [f"team memory: {len(self.kept):,} of {self.total:,} files indexed"]
        if self.over:
            parts.append(f"{self.over} reached (raise it with REME_{self.over.upper()})")
        if self.documents:
            parts.append(
                f"{self.documents:,} PDF/.docx not extracted from the repository "
                "(set REME_TEAM_DOCUMENTS=true to opt in)"
            )
        return "; ".join(parts)


def select(
    budget: Budget, disk: dict[str, tuple[int, int]], unextracted: set[str] | frozenset[str] = frozenset()
) -> Selection:
    """The files of ``disk`` a team index holds. ``unextracted``: documents left out because the
    session's extraction time is spent."""

    def rank(path: str) -> tuple[int, str]:
        return next((i for i, p in enumerate(_ORDER) if path.startswith(p)), len(_ORDER)), path

    ordered = sorted(disk, key=rank)
    daily = [p for p in ordered if p.startswith("daily/")]
    if daily:  # the newest days first: their names sort by date
        start = ordered.index(daily[0])
        ordered[start : start + len(daily)] = sorted(daily, reverse=True)
    kept: dict[str, tuple[int, int]] = {}
    used = documents = 0
    over = None
    for path in ordered:
        if path.lower().endswith(DOCUMENT_EXTS) and (not budget.documents or path in unextracted):
            documents += 1
            continue
        size = disk[path][1]
        if len(kept) >= budget.files:
            over = over or "team_max_files"
            break
        if used + size > budget.bytes:
            over = over or "team_max_bytes"
            break
        kept[path] = disk[path]
        used += size
    return Selection(kept, len(disk), documents, over)


class Spending:
    """A team index's budget as this session spends it: the last choice of files, and the documents
    left out once the extraction time is spent."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self.selection: Selection | None = None  # the last choice of files
        self._unextracted: set[str] = set()  # documents left out: the session's extraction time is spent
        self._extract_left = budget.extract_s

    def select(self, disk: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
        """The files of ``disk`` to index."""
        self.selection = select(self.budget, disk, self._unextracted)
        return self.selection.kept

    def left_out(self) -> str | None:
        """What the budget left out, as one line for the answer (None: nothing)."""
        return self.selection.note() if self.selection is not None else None

    def extract(
        self, root: Path, metadata: Path, todo: dict[str, tuple[int, int] | None], stopping: Callable[[], None]
    ) -> None:
        """Extract the documents of ``todo`` now, one at a time, while the session's extraction time
        lasts (``team_extract_s``; a hostile PDF costs up to documents.TIMEOUT_S). Past it, the rest are
        dropped from ``todo`` and left out of the catalog for this session. ``stopping`` raises when
        the index is closing."""
        from ..notes.documents import text_view
        from .sync import _no_follow

        for path, st in list(todo.items()):
            if st is None or not path.lower().endswith(DOCUMENT_EXTS) or st[1] > MAX_DOCUMENT_BYTES:
                continue
            stopping()
            if self._extract_left <= 0:
                del todo[path]
                self._unextracted.add(path)
                continue
            started = time.monotonic()
            try:
                with open(root / path, "rb", opener=_no_follow) as fh:
                    data = fh.read()
            except OSError:
                continue  # gone: the write treats it as deleted
            text_view(metadata, path, data)  # cached by content hash: the write reads it from there
            self._extract_left -= time.monotonic() - started
