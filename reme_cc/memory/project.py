"""Which project a session, a note or a working directory belongs to.

Standard library only (the SessionStart brief uses it under the system python3).

A project is a folder: the root of the git repository containing the working directory, or the
working directory itself when there is no repository. Three frontmatter keys record it on a card:

* ``project``: the project's **name**, which is both the stored value and what the user sees and
  types (``search --project reme-cc``). It is the root folder's name, cleaned of control characters
  and slashes. It is unique within one workspace: when a *different* root with the same folder name
  is already known (``~/work/app`` and ``~/personal/app``), the newcomer is qualified with as many
  parent folders as it takes (``personal/app``); the first one keeps the bare name, so names already
  stored never change.
* ``project_root``: the absolute root path, which is what tells same-named folders apart.
* ``cwd``: the session's working directory (from the transcript's entries, not from the model).

A note without ``project`` (a resource, a general preference) is *general*: it belongs to every
project. Digest nodes may carry a list (``project: [a, b]``) when their sources came from several.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Mapping

ALL = "all"  # the `project` parameter value that turns project preference off
MAX_NAME_CHARS = 80
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]+")


@dataclass(frozen=True)
class Project:
    name: str  # stored in frontmatter `project` and shown to the user (unique in a workspace)
    root: str  # absolute path of the git root or of the working directory
    cwd: str

    def frontmatter(self) -> dict[str, str]:
        return {"project": self.name, "project_root": self.root, "cwd": self.cwd}


def find_root(cwd: str | os.PathLike[str]) -> tuple[Path, bool]:
    """(project root, is a git repository) for a working directory: the nearest ancestor holding
    ``.git`` (a folder, or a file in worktrees and submodules); else the directory itself. Reads no
    file contents and starts no process, so it also works for a folder that has since disappeared."""
    path = Path(os.path.abspath(os.fspath(cwd)))
    for folder in (path, *path.parents):
        try:
            if (folder / ".git").exists():
                return folder, True
        except OSError:  # unreadable parent: stop looking, the working directory is the project
            break
    return path, False


def clean_name(raw: str) -> str:
    """A folder name made safe to store and show: no control characters or slashes, one line,
    at most MAX_NAME_CHARS; the root folder ``/`` is called ``root``."""
    name = " ".join(_UNSAFE.sub(" ", raw or "").split())[:MAX_NAME_CHARS].strip()
    return name if name and name not in (".", "..") else "root"


def unique_name(root: Path, known: Mapping[str, str]) -> str:
    """The name for ``root`` given the names already used in the workspace (name -> root)."""
    for name, known_root in known.items():
        if known_root == str(root):
            return name  # this root was seen before: keep its name
    parts = [clean_name(p) for p in root.parts[1:]] or ["root"]
    for depth in range(1, len(parts) + 1):
        name = "/".join(parts[-depth:])
        if name not in known:
            return name
    return str(root)  # every suffix taken (cannot happen for distinct roots); the path is unique


def detect(cwd: str | os.PathLike[str], known: Mapping[str, str] | None = None) -> Project:
    root, _ = find_root(cwd)
    return Project(unique_name(root, known or {}), str(root), os.path.abspath(os.fspath(cwd)))


def cwd_of_entries(entries: Iterable[Mapping[str, Any]]) -> str | None:
    """The working directory a conversation ran in: the most frequent ``cwd`` of its entries (a
    session that ``cd``s into a subfolder for one command still belongs where it mostly worked);
    ties go to the latest."""
    counts: Counter[str] = Counter()
    last: dict[str, int] = {}
    for i, entry in enumerate(entries):
        cwd = entry.get("cwd") if isinstance(entry, Mapping) else None
        if isinstance(cwd, str) and os.path.isabs(cwd):
            counts[cwd] += 1
            last[cwd] = i
    if not counts:
        return None
    return max(counts, key=lambda c: (counts[c], last[c]))


def names_of(value: Any) -> list[str]:
    """The project names a frontmatter ``project`` value holds (a string or a list); [] = general."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, (list, tuple)):  # whitespace collapsed: a hand-edited value stays one line
        return [" ".join(v.split()) for v in value if isinstance(v, str) and v.strip()]
    return []


def current(known: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None) -> Project:
    """The project of ``cwd`` (default: the working directory), named consistently with the
    workspace's notes (``known``: name -> root, from ``index.readonly.known_projects``)."""
    return detect(cwd or os.getcwd(), known or {})


CURRENT, GENERAL, OTHER = 0, 1, 2  # tiers: lower ranks first
BY_OTHERS = 0.5  # a note written by others (team memory) comes after the user's own notes of its tier


@dataclass(frozen=True)
class Preference:
    """How recall treats projects: the current project's notes first, general notes next, other
    projects' notes after both (``current``); only one project's notes (``only``); or no preference
    (neither). ``unlabelled`` is the project of notes that name none: None in the personal workspace
    (such notes are general), the repository's project in its shared ``.reme/``. ``others``: the notes
    are written by others (a repository's ``.reme/``), so anyone who can commit there could label them
    with the current project: they rank after the user's own notes of their tier and never before the
    user's general notes."""

    current: str | None = None
    only: str | None = None
    unlabelled: str | None = None
    others: bool = False

    @classmethod
    def of(cls, param: str | None, current: str | None) -> Preference:
        """From a tool's ``project`` parameter: empty = prefer ``current``; "all" = off; a name = only it."""
        value = (param or "").strip()
        if not value:
            return cls(current=current)
        if value.lower() == ALL:
            return cls()
        return cls(only=value)

    def names(self, value: Any) -> list[str]:
        names = names_of(value)
        return names or ([self.unlabelled] if self.unlabelled else [])

    def tier(self, value: Any) -> float | None:
        """The tier of a note whose frontmatter ``project`` is ``value``; None = leave it out."""
        tier = self._own_tier(self.names(value))
        return tier if tier is None or not self.others else max(tier, GENERAL) + BY_OTHERS

    def _own_tier(self, names: list[str]) -> int | None:
        if self.only is not None:
            return CURRENT if self.only in names else None
        if self.current is None:
            return CURRENT
        if not names:
            return GENERAL
        return CURRENT if self.current in names else OTHER

    def for_team(self, project: str | None) -> Preference:
        """For a repository's team memory: its unlabelled notes are ``project``'s, written by others."""
        return Preference(self.current, self.only, project, others=True)


def label(names: list[str]) -> str:
    """How a hit's project is shown: its names, or "general"."""
    return ", ".join(names) if names else "general"
