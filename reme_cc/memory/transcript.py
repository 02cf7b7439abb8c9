"""Incremental, filtered, redacted copies of Claude Code transcripts.

Standard library only (run by the hooks with the system python3).

``~/.claude/projects/<slug>/<session_id>.jsonl`` (and ``<session_id>/subagents/agent-*.jsonl``) are
copied to ``session/claude_code/<session_id>.jsonl`` (and ``session/claude_code/<session_id>/
subagents/agent-*.jsonl``). Each call appends only the conversational entries written since the
previous call; per-source progress lives in ``metadata/transcripts/<session_id>.json``:

* ``offset``: bytes of the source consumed so far (always just after a ``\\n``: a line still being
  written by Claude Code is never consumed);
* ``dev``/``ino`` and ``tail`` (the 64 bytes before ``offset``): if the source was replaced,
  truncated or rewritten, the copy re-scans it from the start and skips every uuid the copy already
  holds, so nothing is duplicated or lost;
* ``dest_size``: the copy's size after our last append. A different size means an earlier run died
  between appending and saving state (or someone edited the copy); we then de-duplicate by uuid too.

Why a copy can never hold a half line: all writes happen under a per-session flock, new lines are
appended with one ``write`` of complete ``\\n``-terminated lines followed by ``fsync``, and a torn
tail (power loss in the middle of that write) is cut back to the last ``\\n`` before the next append.
Readers that race an append use :func:`read_copy`, which ignores an unterminated last line.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterator

from ..base.errors import InvalidInputError
from ..base.workspace import Workspace, atomic_write
from ..notes.redact import redact, scrub

COPY_DIR = "session/claude_code"
STATE_DIR = "transcripts"  # under metadata/

TOOL_EXCERPT_CHARS = 500  # tool results are evidence of nothing the user said: keep a short excerpt
TOOL_INPUT_CHARS = 2000  # per string inside a tool_use input (e.g. a Write tool's file content)
TEXT_CHARS = 100_000  # a pasted 10 MB log is cut here
TOOL_OUTPUT_MARK = "[tool output] "

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")  # \Z: `$` would let "abc\n" through
_KEEP_FIELDS = (
    "type", "uuid", "parentUuid", "timestamp", "sessionId", "cwd", "gitBranch", "isSidechain",
    "agentId", "promptSource", "origin", "isMeta", "isCompactSummary",
)  # fmt: skip
_TAIL_BYTES = 64


def check_session_id(session_id: Any) -> str:
    if not isinstance(session_id, str) or not _SESSION_ID.match(session_id) or session_id.endswith("."):
        raise InvalidInputError(f"invalid session id {session_id!r}: expected letters, digits, '-', '_' or '.'")
    return session_id


def copy_path(session_id: str) -> str:
    """Workspace-relative path of a session's main transcript copy."""
    return f"{COPY_DIR}/{check_session_id(session_id)}.jsonl"


def state_path(ws: Workspace, session_id: str) -> Path:
    return ws.metadata / STATE_DIR / f"{check_session_id(session_id)}.json"


# ---- filtering ----------------------------------------------------------------------------------


def _cut(text: str, limit: int) -> tuple[str, int]:
    """At most ``limit`` chars, cut at whitespace so no secret token is split (a split token could
    escape the redaction patterns). Returns (text, chars dropped)."""
    if len(text) <= limit:
        return text, 0
    cut = max(text.rfind(" ", 0, limit), text.rfind("\n", 0, limit))
    if cut < limit // 2:
        cut = limit  # one giant token: it is dropped from `limit` on, and redacted below if it is a key
    return text[:cut], len(text) - cut


def _clean_text(text: str, limit: int) -> str:
    # Pre-cut a generous window first (redacting 10 MB would blow the hook's time budget), scrub
    # it, then cut to the final size: the window ends at whitespace so no secret is split by it.
    window, dropped = _cut(text, limit * 2 + 1000)
    out, more = _cut(scrub(window), limit)
    dropped += more
    return f"{out}… [{dropped} more chars]" if dropped else out


def clean_value(value: Any, limit: int, depth: int = 0) -> Any:
    """Scrub a decoded JSON value (tool inputs, unknown blocks, content-block lists): every string and
    every key, a value judged with its key as context. Never scrub serialised JSON text instead: its
    escapes (a newline becomes ``\\n``) glue words together and hide secrets from the patterns."""
    if isinstance(value, str):
        return _clean_text(value, limit)
    if depth > 20:
        return "[nested data omitted]"
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key = _clean_text(str(k), 500)
            if k in ("data", "signature") and isinstance(v, str) and len(v) > 200:
                out[key] = "[binary data omitted]"
            else:
                out[key] = _keyed(key, clean_value(v, limit, depth + 1))
        return out
    if isinstance(value, list):
        return [clean_value(v, limit, depth + 1) for v in value]
    return value


def _keyed(key: str, value: Any) -> Any:
    """A string value judged with its key as context: ``{"DB_PASSWORD": <value>}`` is as secret as
    ``DB_PASSWORD="<value>"``, whatever the value's characters (an env mapping, a password parameter)."""
    if not isinstance(value, str) or not value or "[REDACTED:" in value or "\n" in key:
        return value
    quote = '"' if '"' not in value and "\n" not in value and len(value) <= 200 else ""
    head = f"{key}={quote}"
    joined = redact(f"{head}{value}{quote}")
    if joined.startswith(head) and joined.endswith(quote):
        return joined[len(head) : len(joined) - len(quote)]
    return value


def _media(block: dict[str, Any]) -> dict[str, Any]:
    src = block.get("source") if isinstance(block.get("source"), dict) else {}
    data = src.get("data")
    return {
        "type": block.get("type"),
        "omitted": True,
        "media_type": str(src.get("media_type") or "")[:100],
        "bytes": (len(data) * 3 // 4) if isinstance(data, str) else None,
    }


def _tool_output_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
                parts.append(b["text"])
            elif isinstance(b, dict) and b.get("type") in ("image", "document"):
                parts.append(f"[{b.get('type')} omitted]")
            elif isinstance(b, str):
                parts.append(b)
    return "\n".join(parts)


def _clean_block(block: Any) -> dict[str, Any] | None:
    if isinstance(block, str):
        return {"type": "text", "text": _clean_text(block, TEXT_CHARS)}
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind in ("thinking", "redacted_thinking"):
        return None
    if kind == "text":
        return {"type": "text", "text": _clean_text(str(block.get("text") or ""), TEXT_CHARS)}
    if kind in ("image", "document"):
        return _media(block)
    if kind == "tool_use" or kind == "server_tool_use":
        return {
            "type": kind,
            "id": str(block.get("id") or "")[:200],
            "name": str(block.get("name") or "")[:200],
            "input": clean_value(block.get("input"), TOOL_INPUT_CHARS),
        }
    if kind == "tool_result" or (isinstance(kind, str) and kind.endswith("_tool_result")):
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": str(block.get("tool_use_id") or "")[:200]}
        if block.get("is_error"):
            out["is_error"] = True
        out["content"] = TOOL_OUTPUT_MARK + _clean_text(_tool_output_text(block.get("content")), TOOL_EXCERPT_CHARS)
        return out
    return clean_value(block, TOOL_INPUT_CHARS)  # unknown block type: keep it, scrubbed


def filter_entry(obj: Any) -> dict[str, Any] | None:
    """The stored form of one transcript line, or None when it is not a conversational entry."""
    if not isinstance(obj, dict) or obj.get("type") not in ("user", "assistant"):
        return None
    msg = obj.get("message")
    if not isinstance(msg, dict) or not isinstance(obj.get("uuid"), str) or not obj["uuid"]:
        return None
    out: dict[str, Any] = {}
    for key in _KEEP_FIELDS:
        if key in obj and obj[key] is not None:
            out[key] = clean_value(obj[key], 500)
    content = msg.get("content")
    if isinstance(content, str):
        new_content: Any = _clean_text(content, TEXT_CHARS)
    elif isinstance(content, list):
        new_content = [b for b in (_clean_block(b) for b in content) if b is not None]
        if not new_content:
            return None  # e.g. an assistant line holding only a thinking block
    else:
        return None
    out["message"] = {"role": str(msg.get("role") or obj["type"]), "content": new_content}
    return out


def is_conversational(entry: dict[str, Any]) -> bool:
    """A message a person wrote or the assistant said (not tool plumbing, not injected meta text)."""
    if entry.get("isMeta") or entry.get("isCompactSummary"):
        return False
    content = entry.get("message", {}).get("content")
    if isinstance(content, str):
        return bool(content.strip()) and not content.lstrip().startswith(("<local-command", "<command-"))
    return any(isinstance(b, dict) and b.get("type") == "text" for b in content or ())


# ---- reading ------------------------------------------------------------------------------------


def read_copy(ws: Workspace, session_id: str) -> list[dict[str, Any]]:
    """Entries of a session's copy, in order (an unterminated last line, i.e. an append in flight,
    is ignored)."""
    return list(_iter_copy(ws.resolve(copy_path(session_id))))


def _iter_copy(path: Path) -> Iterator[dict[str, Any]]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    end = data.rfind(b"\n")
    for line in data[: end + 1].splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield obj


# ---- copying ------------------------------------------------------------------------------------


@dataclass
class CopyResult:
    entries: int = 0  # new entries written (main + subagents)
    messages: int = 0  # of which conversational, main thread only
    files: list[str] = field(default_factory=list)  # copies that grew
    rescanned: list[str] = field(default_factory=list)  # sources re-read from the start
    pending_bytes: int = 0  # unread source bytes left because of max_bytes


def load_state(ws: Workspace, session_id: str) -> dict[str, Any]:
    try:
        data = json.loads(state_path(ws, session_id).read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("sources"), dict):
            return data
    except (OSError, ValueError):
        pass
    return {"session_id": session_id, "sources": {}}


def save_state(ws: Workspace, session_id: str, state: dict[str, Any]) -> None:
    atomic_write(state_path(ws, session_id), json.dumps(state, indent=1, sort_keys=True).encode())


def _tail_hash(fd: int, offset: int) -> str:
    """The bytes just before ``offset`` (hex): if they change, the source was rewritten."""
    start = max(0, offset - _TAIL_BYTES)
    return os.pread(fd, offset - start, start).hex()


def subagent_sources(transcript: Path) -> list[Path]:
    folder = transcript.with_suffix("") / "subagents"
    try:
        return sorted(Path(e.path) for e in os.scandir(folder) if e.name.endswith(".jsonl") and e.is_file())
    except OSError:
        return []


def pending_bytes(ws: Workspace, session_id: str, transcript: str | os.PathLike[str]) -> int:
    """Source bytes not yet consumed (cheap: a few stats), to decide whether to copy inline."""
    state = load_state(ws, session_id)
    src = Path(transcript)
    total = 0
    for path, dest in [(src, copy_path(session_id))] + [
        (p, f"{COPY_DIR}/{session_id}/subagents/{p.name}") for p in subagent_sources(src)
    ]:
        try:
            st = os.stat(path)
        except OSError:
            continue
        prev = state["sources"].get(dest) or {}
        same = prev.get("ino") == st.st_ino and prev.get("dev") == st.st_dev and st.st_size >= prev.get("offset", 0)
        total += st.st_size - (prev.get("offset", 0) if same else 0)
    return total


def copy_session(
    ws: Workspace,
    session_id: str,
    transcript: str | os.PathLike[str],
    *,
    max_bytes: int | None = None,
    lock_timeout: float = 10.0,
) -> CopyResult:
    """Append the new conversational entries of a session (and its subagents) to the copies.

    Caller-independent exactly-once: safe to call any number of times, concurrently, after a
    crash, after the source was truncated or replaced. ``max_bytes`` caps how much source is read
    per file in this call (the rest is left for the next call and reported as ``pending_bytes``).
    """
    check_session_id(session_id)
    src = Path(transcript)
    result = CopyResult()
    with ws.lock(f"transcript-{session_id}", timeout=lock_timeout):
        state = load_state(ws, session_id)
        state["session_id"] = session_id
        state["transcript_path"] = str(src)
        jobs = [(src, copy_path(session_id), True)]
        jobs += [(p, f"{COPY_DIR}/{session_id}/subagents/{p.name}", False) for p in subagent_sources(src)]
        changed = False
        for path, dest, main in jobs:
            changed |= _copy_one(ws, state, path, dest, main, max_bytes, result)
        if result.messages:
            # Tally for the recording trigger (see hooks.py): conversational messages not yet
            # handed to the recorder, and since when they have been waiting.
            if not state.get("pending_messages"):
                state["pending_since"] = time.time()
            state["pending_messages"] = int(state.get("pending_messages", 0)) + result.messages
            state["total_messages"] = int(state.get("total_messages", 0)) + result.messages
        if changed:
            save_state(ws, session_id, state)
    return result


def _copy_one(
    ws: Workspace,
    state: dict[str, Any],
    src: Path,
    dest_rel: str,
    main: bool,
    max_bytes: int | None,
    result: CopyResult,
) -> bool:
    """Copy one source; True when the state changed."""
    try:
        fd = os.open(src, os.O_RDONLY)
    except OSError:
        return False  # not written yet (SessionStart) or gone: nothing to copy
    try:
        st = os.fstat(fd)
        prev = state["sources"].get(dest_rel) or {}
        offset = int(prev.get("offset", 0))
        dest = ws.resolve(dest_rel)
        _own_file(dest)
        dest_size = _repair_tail(dest)
        rescan = bool(prev) and (
            prev.get("ino") != st.st_ino
            or prev.get("dev") != st.st_dev
            or st.st_size < offset
            or prev.get("tail") != _tail_hash(fd, offset)
            # the copy lost bytes we had appended (a torn tail cut back above, or truncated by hand):
            # their entries are behind `offset` now, so only a re-scan (deduplicated by uuid) restores them
            or dest_size < int(prev.get("dest_size", 0))
        )
        if rescan:
            offset = 0
            result.rescanned.append(dest_rel)
        # De-duplicate by uuid whenever our bookkeeping and the copy disagree.
        seen: set[str] | None = None
        if rescan or dest_size != int(prev.get("dest_size", 0)):
            seen = {e["uuid"] for e in _iter_copy(dest) if isinstance(e.get("uuid"), str)}
        end = st.st_size if max_bytes is None else min(st.st_size, offset + max_bytes)
        data = os.pread(fd, end - offset, offset) if end > offset else b""
        last_nl = data.rfind(b"\n")
        if last_nl < 0 and max_bytes is not None and end < st.st_size and data:
            # A single line longer than the cap: this call can make no progress; read it whole.
            rest = os.pread(fd, st.st_size - offset, offset)
            data, last_nl = rest, rest.rfind(b"\n")
        complete = data[: last_nl + 1]
        result.pending_bytes += st.st_size - offset - len(complete)
        out: list[bytes] = []
        last_uuid = prev.get("last_uuid")
        for line in complete.split(b"\n"):
            entry = _parse(line)
            if entry is None:
                continue
            uuid = entry["uuid"]
            if seen is not None:
                if uuid in seen:
                    continue
                seen.add(uuid)
            out.append(json.dumps(entry, ensure_ascii=False).encode("utf-8", "replace") + b"\n")
            last_uuid = uuid
            result.entries += 1
            if main and is_conversational(entry):
                result.messages += 1
        if out:
            dest_size = _append(dest, b"".join(without_forgotten(out)))
            result.files.append(dest_rel)
        new = {
            "path": str(src),
            "dev": st.st_dev,
            "ino": st.st_ino,
            "offset": offset + len(complete),
            "tail": _tail_hash(fd, offset + len(complete)),
            "last_uuid": last_uuid,
            "dest_size": dest_size,
        }
        state["sources"][dest_rel] = new
        return new != prev
    finally:
        os.close(fd)


# the /reme-forget command as the transcript records it: its argument is what the user makes memory forget
_FORGET_ARGS = re.compile(rb"<command-name>/(?:reme:)?reme-forget</command-name>.*?<command-args>(.*?)</command-args>")
FORGOTTEN = b"[FORGOTTEN]"


def without_forgotten(lines: list[bytes]) -> list[bytes]:
    """Copied lines of a turn that ran /reme-forget, its argument replaced in all of them (the prompt,
    the skill's text, the commands and their output): the copy must not bring back what the command
    removes. The turn is copied at its Stop; a turn split over two copies keeps the text in the first."""
    found = {m.group(1).strip() for line in lines for m in _FORGET_ARGS.finditer(line)}
    for text in sorted(found, key=len, reverse=True):
        for form in (text, text.strip(b"'"), text.removeprefix(b'\\"').removesuffix(b'\\"')):
            if len(form) >= 4:  # as forget itself: a shorter text would match everywhere
                pat = re.compile(re.escape(form), re.IGNORECASE)
                lines = [pat.sub(FORGOTTEN, line) for line in lines]
    return lines


def _parse(line: bytes) -> dict[str, Any] | None:
    # Cheap gates: most transcript bytes are api-request blobs, attachments and bookkeeping lines;
    # skip them without decoding JSON. Lines that start with their top-level "type" say it at once;
    # user/assistant lines start with parentUuid and always contain "user"/"assistant" somewhere.
    if line.startswith(b'{"type":"') and not line.startswith((b'{"type":"user"', b'{"type":"assistant"')):
        return None
    if b'"user"' not in line and b'"assistant"' not in line:
        return None
    try:
        obj = json.loads(line)
    except UnicodeDecodeError:
        try:
            obj = json.loads(line.decode("utf-8", "replace"))
        except ValueError:
            return None
    except (ValueError, RecursionError):
        return None
    try:
        return filter_entry(obj)
    except RecursionError:
        return None


def _own_file(dest: Path) -> None:
    """The copy is appended and truncated in place, so it must be a file of its own: a hard link
    (planted, or left by a backup tool) would carry those writes to the linked file elsewhere. Such a
    copy is first replaced by an unshared one (atomic rename: the other name keeps its content)."""
    try:
        st = os.lstat(dest)
    except FileNotFoundError:
        return
    if st.st_nlink > 1:
        atomic_write(dest, dest.read_bytes())


def _repair_tail(dest: Path) -> int:
    """Size of the copy after cutting a torn last line (left by a crash mid-append); 0 if absent."""
    try:
        size = dest.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with open(dest, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return size
        # Walk back to the last newline (the torn line is at most one append long).
        pos, chunk = size, 65536
        while pos > 0:
            start = max(0, pos - chunk)
            fh.seek(start)
            block = fh.read(pos - start)
            nl = block.rfind(b"\n")
            if nl >= 0:
                size = start + nl + 1
                break
            pos = start
        else:
            size = 0
        fh.truncate(size)
        fh.flush()
        os.fsync(fh.fileno())
    return size


def _append(dest: Path, data: bytes) -> int:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(dest, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        view = memoryview(data)
        while view:  # one write() in practice; loop only on a short write
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)
