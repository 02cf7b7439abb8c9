"""Proactive interest topics: ``daily/<date>/interests.yaml``.

Standard library only: the SessionStart brief reads these files with the system python3.

The file is YAML in a deliberately plain shape (every string JSON-quoted, which YAML accepts), so
that it stays readable by hand and parseable without PyYAML::

    date: "2026-06-20"
    topic_count: 3
    diversity_days: 7
    topics:
      - title: "Rotating API keys"
        reason: "came up in two sessions"
        evidence: "..."
        keywords: ["api key", "rotation"]
        paths: ["daily/2026-06-20/key-rotation.md"]
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

from ..base.errors import InvalidInputError
from ..base.workspace import Workspace

INTERESTS_FILE = "interests.yaml"


@dataclass
class Topic:
    title: str
    reason: str = ""
    evidence: str = ""
    keywords: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    @classmethod
    def from_obj(cls, obj: Any) -> Topic | None:
        """Build from loosely shaped model/YAML output; None when there is no usable title."""
        if isinstance(obj, str):
            obj = {"title": obj}
        if not isinstance(obj, dict):
            return None
        title = _text(obj.get("title"))
        if not title:
            return None
        evidence = obj.get("evidence")
        if isinstance(evidence, list):
            evidence = "; ".join(_text(e) for e in evidence if _text(e))
        return cls(
            title=title,
            reason=_text(obj.get("reason")),
            evidence=_text(evidence),
            keywords=_str_list(obj.get("keywords")),
            paths=_str_list(obj.get("paths")),
        )


def _text(value: Any) -> str:
    if value is None:
        return ""
    return " ".join(str(value).split())


def _str_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [v for v in re.split(r"[,，;；]", value)]
    if not isinstance(value, (list, tuple)):
        return []
    out: list[str] = []
    for v in value:
        t = _text(v)
        if t and t not in out:
            out.append(t)
    return out


# ---- similarity (the local normalize-and-dedup fallback) --------------------------------------
def normalize_title(text: str) -> str:
    """Case-, width- and punctuation-insensitive form of a title."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in text if ch.isalnum())


def _bigrams(text: str) -> set[str]:
    norm = normalize_title(text)
    if len(norm) < 2:
        return {norm} if norm else set()
    return {norm[i : i + 2] for i in range(len(norm) - 1)}


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def similar(a: Topic, b: Topic) -> bool:
    """Two topics are the same interest when their titles normalize alike, one title contains the
    other, their title bigrams overlap strongly (works for Chinese too), or their keywords do."""
    na, nb = normalize_title(a.title), normalize_title(b.title)
    if not na or not nb:
        return False
    if na == nb:
        return True
    if min(len(na), len(nb)) >= 4 and (na in nb or nb in na):
        return True
    if _jaccard(_bigrams(a.title), _bigrams(b.title)) >= 0.6:
        return True
    ka = {normalize_title(k) for k in a.keywords if normalize_title(k)}
    kb = {normalize_title(k) for k in b.keywords if normalize_title(k)}
    return len(ka) >= 2 and len(kb) >= 2 and _jaccard(ka, kb) >= 0.5


def merge_topics(
    same_day: list[Topic], candidates: Iterable[Topic], previous: list[Topic], topic_count: int
) -> list[Topic]:
    """Keep today's topics; add new candidates (up to ``topic_count`` in total) that are neither
    near-duplicates of each other nor of the previous days' topics."""
    merged: list[Topic] = []
    for t in same_day:
        if not any(similar(t, m) for m in merged):
            merged.append(t)
    for cand in candidates:
        if len(merged) >= topic_count:
            break
        if any(similar(cand, m) for m in merged):
            # same interest seen again today: widen its paths instead of adding a twin
            for m in merged:
                if similar(cand, m):
                    m.paths.extend(p for p in cand.paths if p not in m.paths)
                    break
            continue
        if any(similar(cand, p) for p in previous):
            continue
        merged.append(cand)
    return merged


# ---- files ------------------------------------------------------------------------------------
def interests_path(date: str) -> str:
    return f"daily/{date}/{INTERESTS_FILE}"


def render_interests(date: str, topics: list[Topic], topic_count: int, diversity_days: int) -> str:
    q = lambda s: json.dumps(s, ensure_ascii=False)  # noqa: E731  (JSON strings are valid YAML)
    lines = [f"date: {q(date)}", f"topic_count: {int(topic_count)}", f"diversity_days: {int(diversity_days)}"]
    if not topics:
        lines.append("topics: []")
    else:
        lines.append("topics:")
        for t in topics:
            lines.append(f"  - title: {q(t.title)}")
            lines.append(f"    reason: {q(t.reason)}")
            lines.append(f"    evidence: {q(t.evidence)}")
            lines.append(f"    keywords: {q(list(t.keywords))}")
            lines.append(f"    paths: {q(list(t.paths))}")
    return "\n".join(lines) + "\n"


def parse_interests(text: str) -> dict[str, Any]:
    """Parse an interests.yaml with the one reader of this module (stdlib): the shape we write and the
    usual hand edits of it (unquoted values, trailing comments, block lists). The same reader serves
    the brief under the system python3 and the dream in the plugin env, so both see the same topics."""
    data = _parse_plain(text)
    topics = data.get("topics") or []
    if not isinstance(topics, list):
        raise InvalidInputError("interests.yaml: `topics` must be a list")
    data["topics"] = [t for t in (Topic.from_obj(x) for x in topics) if t is not None]
    return data


def _scalar(raw: str) -> Any:
    raw = raw.strip()
    if raw[:1] not in ('"', "'", "[", "{"):
        raw = re.sub(r"\s+#.*$", "", raw)  # a trailing comment (not inside quotes)
    if not raw:
        return ""
    if raw[0] in '"[{' or raw in ("true", "false", "null") or re.fullmatch(r"-?\d+(\.\d+)?", raw):
        try:
            return json.loads(raw)
        except ValueError:
            pass
    if raw[0] == "'" and raw.endswith("'") and len(raw) >= 2:
        return raw[1:-1].replace("''", "'")
    return raw


def _parse_plain(text: str) -> dict[str, Any]:
    data: dict[str, Any] = {}
    topics: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    last_key: str | None = None  # a key whose value is a block list ("keywords:" then "- a" lines)
    for line in text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^(\s*)(-\s+)?([A-Za-z_]+):\s*(.*)$", line)
        if not m:
            item = re.match(r"^\s*-\s+(.*)$", line)
            if item and current is not None and last_key:
                value = current.get(last_key)
                current[last_key] = (value if isinstance(value, list) else []) + [_scalar(item.group(1))]
            continue
        indent, dash, key, value = m.groups()
        if not indent and not dash:
            data[key] = _scalar(value) if value.strip() else []
            current, last_key = None, None
            continue
        if dash:
            current = {}
            topics.append(current)
        if current is not None:
            current[key] = _scalar(value)
            last_key = key if not value.strip() else None
    if topics:
        data["topics"] = topics
    return data


def read_interests(ws: Workspace, date: str) -> list[Topic]:
    """Topics of one day; [] when the file is missing or unreadable (a broken hand edit must not
    stop a dream or a session start)."""
    path = ws.resolve(interests_path(date))
    if not path.is_file():
        return []
    try:
        return parse_interests(path.read_text(encoding="utf-8", errors="replace"))["topics"]
    except (InvalidInputError, OSError):
        return []


def previous_topics(ws: Workspace, date: str, days: int) -> list[Topic]:
    """Topics of the ``days`` days before ``date`` (not including it)."""
    day = _dt.date.fromisoformat(date)
    out: list[Topic] = []
    for i in range(1, days + 1):
        out.extend(read_interests(ws, (day - _dt.timedelta(days=i)).isoformat()))
    return out


def latest_interests(ws: Workspace, on_or_before: str, max_days: int = 30) -> tuple[str | None, list[Topic]]:
    """The most recent day (≤ ``on_or_before``, within ``max_days``) that has topics."""
    day = _dt.date.fromisoformat(on_or_before)
    for i in range(max_days + 1):
        d = (day - _dt.timedelta(days=i)).isoformat()
        topics = read_interests(ws, d)
        if topics:
            return d, topics
    return None, []
