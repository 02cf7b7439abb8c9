"""Stale notes: a note of a project that cites a file, folder, script, command or symbol the project's
working tree no longer has (issue 26, 3).

``citations(text)`` finds what a note's statement cites: paths (``src/payments/retry.py``,
``scripts/``, ``./deploy.sh``, also inside commands such as ``pytest tests/test_x.py``), ``make``
targets, npm/pnpm/yarn scripts, and symbols written with their file (``retry.py::backoff``,
``retry.py:backoff``, ``retry.py#backoff``). ``check(root, cites)`` looks them up beneath the
project's root; ``missing`` lists what is gone.

The working tree is hostile input (the threat model in docs/ARCHITECTURE.md): every name is reached
one folder at a time without following a symlink (``base/nofollow``) — a path through a symlink is
"cannot tell", never "missing" —, nothing there is executed, a file is read only when it is a regular
file with one link and at most ``READ_BYTES``, and the work is bounded (``MAX_CITATIONS`` per note, a
deadline per check). Standard library only: the SessionStart brief runs the cheap check too.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base import nofollow
from ..base.errors import NotFoundError, ReMeError
from ..notes.history import STALE, STALE_KEPT, STALE_SINCE, flat_meta, note_status, statement

MAX_CITATIONS = 20  # per note
READ_BYTES = 1_000_000  # a Makefile, package.json or a symbol's file is read this far
MAX_PATH_CHARS = 300
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
_CODE = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)
_LINK = re.compile(r"!?\[\[[^\]\n]*\]\]|\]\([^)\n]*\)|https?://\S+")
_BARE = re.compile(r"(?<![\w/.~-])((?:\./)?[\w.-]+(?:/[\w.-]+)*/?)(?![\w/])")
_SYMBOL = re.compile(r"^(.+?\.[A-Za-z0-9]{1,8})(?:::|:|#)([A-Za-z_][\w.]*)$")
_LINE_SUFFIX = re.compile(r":\d+(?:-\d+)?$")
_MEMORY_LAYERS = ("daily/", "digest/", "resource/", "session/", "metadata/")
_SCRIPT_RUNNERS = {"npm": "run", "pnpm": None, "yarn": None, "bun": "run"}


@dataclass(frozen=True)
class Citation:
    kind: str  # "path" | "symbol" | "make" | "script"
    text: str  # as the note wrote it
    path: str  # the file or folder beneath the root it needs
    name: str = ""  # the symbol, make target or script name


@dataclass(frozen=True)
class Missing:
    citation: Citation
    why: str


def citations(text: str) -> list[Citation]:
    """What the note's statement cites of a working tree (Sources, History, wikilinks and URLs aside),
    at most ``MAX_CITATIONS``, in order of appearance."""
    body = _LINK.sub(" ", statement(text))
    code = [m.group(1) for m in _CODE.finditer(body)]
    code += [line for m in _FENCE.finditer(body) for line in m.group(0).splitlines()[1:-1]]
    prose = _FENCE.sub(" ", _CODE.sub(" ", body))
    out: list[Citation] = []
    for span in code:
        out += _from_code(span.strip())
    for m in _BARE.finditer(prose):
        token = m.group(1).rstrip(".,;:")
        last = token.rstrip("/").rsplit("/", 1)[-1]
        if (
            "/" in token.strip("/") and _EXT.search(last) or (token.endswith("/") and len(token) > 2)
        ):  # prose needs a file name or a trailing slash:
            out += _as_path(token)  # "and/or" or "client/server" is not a path
    seen: set[tuple[str, str, str]] = set()
    unique = []
    for c in out:
        if (c.kind, c.path, c.name) not in seen:
            seen.add((c.kind, c.path, c.name))
            unique.append(c)
    return unique[:MAX_CITATIONS]


def _from_code(span: str) -> list[Citation]:
    words = span.split()
    if not words:
        return []
    if words[0] == "make" and len(words) > 1 and re.fullmatch(r"[\w.-]+", words[1]) and "=" not in words[1]:
        return [Citation("make", span, "Makefile", words[1])]
    runner = _SCRIPT_RUNNERS.get(words[0], "")
    if runner != "" and len(words) > 1:
        rest = words[1:]
        if runner and rest[0] == runner:
            rest = rest[1:]
        elif rest[0] == "run":
            rest = rest[1:]
        if rest and re.fullmatch(r"[\w:.-]+", rest[0]) and rest[0] not in ("install", "add", "i", "ci", "test", "exec"):
            return [Citation("script", span, "package.json", rest[0])]
    out: list[Citation] = []
    for word in words if len(words) > 1 else [span]:
        word = word.strip("'\"(),;")
        if "/" in word or _SYMBOL.match(word):
            out += _as_path(word)
    return out


def _as_path(token: str) -> list[Citation]:
    """The token as a path beneath a root, or [] when it is not one reme can check safely."""
    if not token or len(token) > MAX_PATH_CHARS or "://" in token or token.startswith(("~", "/", "-", "$")):
        return []
    if any(c in token for c in "*?{}[]<>|$=\\"):
        return []
    m = _SYMBOL.match(token)
    name = ""
    if m and "/" not in m.group(2):
        token, name = m.group(1), m.group(2).split(".")[-1]
    token = _LINE_SUFFIX.sub("", token)
    rel = token.removeprefix("./").rstrip("/")
    parts = rel.split("/")
    if not rel or any(p in ("", ".", "..") for p in parts) or rel.startswith(_MEMORY_LAYERS):
        return []
    if name:
        return [Citation("symbol", token, rel, name)]
    return [Citation("path", token, rel)]


def _exists(root: Path, rel: str) -> bool | None:
    """True / False (it is gone), or None: cannot tell without following a symlink."""
    parent, _, name = rel.rpartition("/")
    try:
        fd = nofollow.open_dir(root, parent)
    except NotFoundError:
        return False
    except ReMeError:  # a symlink (or a file) on the way: never followed, so unknown
        return None
    try:
        os.stat(name, dir_fd=fd, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False
    except OSError:
        return None
    finally:
        os.close(fd)


def _read(root: Path, rel: str) -> str | None:
    try:
        fd = nofollow.open_file(root, rel)
    except ReMeError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read(READ_BYTES).decode("utf-8", errors="replace")


def _check_one(root: Path, c: Citation) -> str | None:
    """Why ``c`` is gone, or None (present, or cannot tell)."""
    if c.kind == "make":
        for makefile in ("GNUmakefile", "makefile", "Makefile"):
            text = _read(root, makefile)
            if text is not None:
                found = re.search(rf"^{re.escape(c.name)}\s*:(?!=)", text, re.M) or "include " in text
                return None if found else f"`{c.text}`: {makefile} has no target {c.name}"
        return f"`{c.text}`: there is no Makefile" if _exists(root, "Makefile") is False else None
    if c.kind == "script":
        text = _read(root, "package.json")
        if text is None:
            return f"`{c.text}`: there is no package.json" if _exists(root, "package.json") is False else None
        try:
            scripts = json.loads(text).get("scripts") or {}
        except (ValueError, AttributeError):
            return None
        return (
            None
            if isinstance(scripts, dict) and c.name in scripts
            else f"`{c.text}`: package.json has no script {c.name}"
        )
    there = _exists(root, c.path)
    if there is False:
        return f"{c.path} no longer exists"
    if c.kind == "symbol" and there:
        text = _read(root, c.path)
        if text is not None and not re.search(rf"\b{re.escape(c.name)}\b", text):
            return f"{c.path} no longer mentions {c.name}"
    return None


def check(root: str | Path, cites: list[Citation], *, deadline: float | None = None) -> list[Missing]:
    """What of ``cites`` the working tree at ``root`` no longer has; [] when ``root`` is not a folder
    (a project moved or unmounted tells nothing about its files). Stops at ``deadline`` (monotonic)."""
    root = Path(root)
    try:
        if not root.is_dir():
            return []
    except OSError:
        return []
    out = []
    for c in cites:
        if deadline is not None and time.monotonic() > deadline:
            break
        why = _check_one(root, c)
        if why:
            out.append(Missing(c, why))
    return out


def kept(text: str, missing: list[Missing]) -> list[Missing]:
    """``missing`` without what a review kept on purpose (its path named in ``stale_kept``)."""
    reason = flat_meta(text).get(STALE_KEPT, "")
    return [m for m in missing if m.citation.path not in reason and m.citation.text not in reason]


def reason(missing: list[Missing]) -> str:
    """The ``stale`` value: what is gone, in one line."""
    whys = list(dict.fromkeys(m.why for m in missing))  # a gone file cited as a path and a symbol: once
    return "; ".join(whys[:3]) + (f"; and {len(whys) - 3} more" if len(whys) > 3 else "")


def stale_now(text: str, root: str | Path, *, deadline: float | None = None) -> list[Missing]:
    """What ``text`` cites that ``root`` no longer has, less what a review kept: the one check the
    dream and the brief make."""
    return kept(text, check(root, citations(text), deadline=deadline))


# ---- the dream's check (memory pipelines; the imports below are the plugin env's) -------------------
MAX_NODES = 500  # digest nodes checked per dream
CHECK_SECONDS = 5.0  # and at most this long
MAX_LISTED = 30  # names per folder shown to a review


def project_roots(ctx: Any, value: Any, known: dict[str, str] | None = None) -> dict[str, str]:
    """{name: root} of a note's ``project`` value whose root folder exists on this machine (``known``:
    the workspace's projects, read from the index when not given)."""
    from ..index import readonly
    from .project import names_of

    names = names_of(value)
    if not names:
        return {}
    if known is None:
        known = ctx.index.read(readonly.known_projects)
    return {n: known[n] for n in names if known.get(n) and os.path.isdir(known[n])}


def refresh(
    ctx: Any, node: str, roots: dict[str, str], day: str, deadline: float | None = None
) -> list[Missing] | None:
    """Check one node against its projects' working trees and set or clear its ``stale`` mark through
    the note service. Returns what is missing in every root ([]: nothing), None when the check ran
    out of time (the mark is left as it was)."""
    text = ctx.workspace.read_bytes(node).decode("utf-8", errors="replace")
    cites = citations(text)
    missing: list[Missing] | None = None
    for root in roots.values():
        found = kept(text, check(root, cites, deadline=deadline))
        if deadline is not None and time.monotonic() > deadline:
            return None
        gone = {m.citation for m in found}  # a node of several projects is stale only where all lack it
        missing = found if missing is None else [m for m in missing if m.citation in gone]
    missing = missing or []
    meta = flat_meta(text)
    if missing:
        why = reason(missing)
        if meta.get(STALE) != why:
            ctx.notes.update_frontmatter(node, {STALE: why, STALE_SINCE: meta.get(STALE_SINCE) or day})
    elif meta.get(STALE) or meta.get(STALE_SINCE):
        clear_mark(ctx, node)
    return missing


def clear_mark(ctx: Any, node: str) -> None:
    ctx.notes.update_frontmatter(node, {}, delete=[STALE, STALE_SINCE])


def mark_stale(ctx: Any, day: str) -> list[str]:
    """Check the project digest nodes (at most ``MAX_NODES``, ``CHECK_SECONDS``) and return the ones
    stale now, oldest mark first."""
    import json as _json

    from ..index import readonly

    deadline = time.monotonic() + CHECK_SECONDS
    rows = ctx.index.read(readonly.catalog_rows)
    known = ctx.index.read(readonly.known_projects)  # once: it reads every file's frontmatter
    out: list[tuple[str, str]] = []
    checked = 0
    for path, _name, _description, extra, _date in rows:
        if not (path.startswith("digest/") and path.endswith(".md")) or checked >= MAX_NODES:
            continue
        try:
            project = (_json.loads(extra or "{}") or {}).get("project")
        except (ValueError, AttributeError):
            continue
        roots = project_roots(ctx, project, known) if project else {}
        if not roots:
            continue
        checked += 1
        try:
            text = ctx.workspace.read_bytes(path).decode("utf-8", errors="replace")
        except ReMeError:
            continue
        if note_status(text, today=day).state == "superseded":
            continue
        missing = refresh(ctx, path, roots, day, deadline)
        if missing is None:
            break  # out of time: the rest wait for the next dream
        if missing:
            out.append(
                (flat_meta(ctx.workspace.read_bytes(path).decode("utf-8", "replace")).get(STALE_SINCE, day), path)
            )
    return [p for _since, p in sorted(out)]


def nearby_entries(root: str | Path, cites: list[Citation]) -> list[tuple[str, list[str]]]:
    """(folder, its entries' names) for the nearest existing folder of each missing path: what a review
    can offer instead. One level, ``MAX_LISTED`` names, no symlink followed."""
    out: list[tuple[str, list[str]]] = []
    for m in check(root, cites, deadline=time.monotonic() + 1.0):
        folder = m.citation.path.rpartition("/")[0]
        while folder and _exists(Path(root), folder) is not True:
            folder = folder.rpartition("/")[0]
        if any(f == folder for f, _ in out):
            continue
        try:
            entries = nofollow.walk(Path(root), folder, recursive=False)
        except (OSError, ReMeError):
            continue
        names = [p.rpartition("/")[2] + ("/" if stat.S_ISDIR(info.st_mode) else "") for p, info in entries]
        out.append((folder, names[:MAX_LISTED]))
    return out
