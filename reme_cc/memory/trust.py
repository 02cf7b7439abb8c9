"""Which repositories' team memory reaches the SessionStart brief: the user's trust list.

A repository's ``.reme/`` holds notes written by whoever can commit to it. The search tools still
return its hits from any repository, each labelled as team memory written by others; the brief, which
Claude reads before the user has asked anything, lists them only for a repository the user has said
to trust, in a section of its own. For a repository not decided yet the brief says one line: it carries
team memory, and the command that trusts it (or, with ``--revoke``, stops the notice). Asked once:
a revoked repository is remembered as declined, and the brief leaves it alone.

The list is ``trusted-repositories.json`` in the personal workspace, next to ``config.json``: a file
at the workspace root, which no tool can change (the note service writes only in the memory layers,
notes/store.py), and not in ``metadata/``, which is derived and may be wiped. ``reme-cc trust`` is the
one writer. Keys are repository roots with symlinks resolved.

Standard library only (the SessionStart hook reads it with the system python3).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shlex
from pathlib import Path
from typing import Any

from ..base.errors import InvalidInputError, ReMeError
from ..base.workspace import Workspace, atomic_write
from .project import find_root

FILE_NAME = "trusted-repositories.json"
VERSION = 1


def trust_file(ws_root: Path) -> Path:
    return Path(ws_root) / FILE_NAME


def repo_key(repo: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(repo))


def load(ws_root: Path) -> dict[str, dict[str, Any]]:
    """{repository root: {"trusted": bool, "decided": ISO time}}; {} when there is no list. A list
    that cannot be read raises ReMeError saying how to fix it (it is never rewritten meanwhile)."""
    path = trust_file(ws_root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ReMeError(
            f"the trust list {path} cannot be read ({exc}); fix it, or delete it to start over "
            "(every repository is then undecided)"
        ) from None
    repos = data.get("repositories") if isinstance(data, dict) else None
    if not isinstance(repos, dict) or not all(
        isinstance(v, dict) and isinstance(v.get("trusted"), bool) for v in repos.values()
    ):
        raise ReMeError(
            f'the trust list {path} is not in the expected shape ({{"repositories": {{path: '
            '{"trusted": true|false}}}}); fix it, or delete it to start over'
        )
    return repos


def decision(ws_root: Path, repo: str | os.PathLike[str]) -> bool | None:
    """True: trusted; False: declined (``--revoke``); None: not decided yet."""
    entry = load(ws_root).get(repo_key(repo))
    return entry["trusted"] if entry else None


def decide(ws_root: Path, repo: str | os.PathLike[str], trusted: bool) -> str:
    """Record the user's decision for ``repo``; returns its key. Under a lock: two commands at once
    lose neither decision."""
    ws = Workspace(ws_root, create=False)
    key = repo_key(repo)
    with ws.lock("trust"):
        repos = load(ws_root)
        repos[key] = {"trusted": trusted, "decided": _dt.datetime.now().isoformat(timespec="seconds")}
        data = {"version": VERSION, "repositories": dict(sorted(repos.items()))}
        atomic_write(trust_file(ws_root), (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return key


def trust_command(repo: str | os.PathLike[str]) -> str:
    """The exact command that trusts ``repo`` (shown in the brief)."""
    return f"reme-cc trust {shlex.quote(repo_key(repo))}"


def revoke_command(repo: str | os.PathLike[str]) -> str:
    return f"reme-cc trust --revoke {shlex.quote(repo_key(repo))}"


def repository_of(folder: str | os.PathLike[str]) -> Path:
    """The git repository containing ``folder``, or InvalidInputError saying what to do."""
    path = Path(os.path.abspath(os.fspath(folder)))
    if not path.is_dir():
        raise InvalidInputError(f"{path} is not a folder; give a folder inside the repository to trust")
    root, is_git = find_root(path)
    if not is_git:
        raise InvalidInputError(
            f"{path} is not inside a git repository; team memory lives in a repository's "
            ".reme/ folder: run this in (or name) that repository"
        )
    return root


def status(ws_root: Path, repo: str | os.PathLike[str] | None) -> dict[str, Any]:
    """For ``status``: whether ``repo`` is trusted (None = undecided), the trusted repositories, and
    a problem reading the list."""
    try:
        repos = load(ws_root)
    except ReMeError as exc:
        return {"team_trusted": None, "trusted_repositories": [], "trust_problem": str(exc)}
    entry = repos.get(repo_key(repo)) if repo else None
    return {
        "team_trusted": entry["trusted"] if entry else None,
        "trusted_repositories": sorted(k for k, v in repos.items() if v["trusted"]),
    }
