"""The dream: daily notes → long-term digest nodes, in four stages.

1. **Extract** — refresh the day index pages of the scan window, find the daily files that changed
   since the last dream (``metadata/dream/catalog.json``: mtime+size, then sha256), send them to the
   ``dream-extractor`` agent, which returns ``units`` and ``topics``. Nothing changed → no agent call.
2. **Integrate** — one ``dream-integrator`` subagent per unit. Units go out in batches of
   ``config.dream_concurrency``; each batch is one Agent-SDK session whose main agent launches the
   batch's subagents as parallel ``Agent`` calls (so they run concurrently, each with its own
   ``x-claude-code-agent-id``). Each subagent may only use search (hybrid, restricted to digest/ with
   ``folder``)/traverse/read/frontmatter_read/write/edit/frontmatter_update; the file tools enforce the evidence rules. Every unit's outcome is then
   VERIFIED on disk: the node it names must be a digest node this run changed whose ``## Sources``
   links the unit's source files — a report alone never counts.
3. **Topics** — merge the topic candidates into ``daily/<date>/interests.yaml``.
4. **Finish** — checkpoint only the files whose units all succeeded (failed ones are retried by the
   next dream), write the change list (and a git commit when the workspace is a repo), return a summary.

A workspace-wide lock (``metadata/locks/dream.lock``) lets only one dream run at a time.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from ..base.errors import ConflictError, InvalidInputError, LockedError, ReMeError
from ..notes.frontmatter import parse_note
from ..notes.pinned import dropped_lines, is_pinned
from ..notes.evidence import SOURCE_LAYERS, link_targets, sources_section
from ..notes.store import Change, NoteStore, Written
from ..base.workspace import DIGEST_BUCKETS, Workspace
from . import contradictions, daily, gitlog, interests, stale
from .context import Context
from .dream_trigger import DREAM_LOCK, STAMP, touch
from .untrusted import neutralise

CATALOG = "metadata/dream/catalog.json"
FILE_CHARS = 12_000  # per changed file, inlined in the extractor prompt
PROMPT_CHARS = 80_000  # all changed files together; the rest are listed for the agent to `read`
EXCERPT_CHARS = 1_500  # per source file, in an integrator's prompt
INTEGRATOR = "dream-integrator"
ACTIONS = ("CREATE", "CORROBORATE", "REFINE", "CORRECT")
CONFLICT = "CONFLICT"  # the evidence disagrees and nothing says which holds: recorded, not picked
REVIEWS = ("FIX", "SUPERSEDE", "KEEP")  # what a review of a stale node may decide
MAX_REVIEWS = 3  # stale nodes reviewed per dream (one agent session); the rest wait for the next


# ---- data ---------------------------------------------------------------------------------------
@dataclass
class DreamOptions:
    date: str | None = None
    hint: str = ""
    scan_days: int = 2
    max_units: int = 5
    topic_count: int = 3
    topic_diversity_days: int = 7
    concurrency: int | None = None  # default: config.dream_concurrency
    resources: bool = True  # run auto-resource first


@dataclass
class Unit:
    id: int
    name: str
    bucket: str
    summary: str
    paths: list[str]
    scope: str = "general"  # "project": belongs to the projects of its sources; "general": to every project
    projects: dict[str, str] = field(default_factory=dict)  # project name -> root, from the sources' frontmatter
    review: str = ""  # a stale node to review (fix, supersede or keep) instead of new evidence to fold in


@dataclass
class UnitOutcome:
    unit: Unit
    ok: bool
    action: str | None = None
    path: str | None = None
    error: str | None = None
    conflict: dict[str, Any] | None = None  # an unresolved contradiction the integrator reported


@dataclass
class DreamSummary:
    run: str
    date: str
    scanned: int = 0
    changed: int = 0
    units: int = 0
    created: int = 0
    corroborated: int = 0
    refined: int = 0
    corrected: int = 0
    failed: int = 0
    topics: int = 0
    tokens: int = 0
    seconds: float = 0.0
    agent_sessions: int = 0
    resources: dict[str, int] = field(default_factory=dict)
    nodes: list[dict[str, str]] = field(default_factory=list)  # [{path, action, unit}]
    share: list[dict[str, str]] = field(default_factory=list)  # [{path, repo}]: project nodes a team could use
    failures: list[dict[str, Any]] = field(default_factory=list)  # [{unit, paths, error}]
    conflicts: list[dict[str, Any]] = field(default_factory=list)  # contradictions.entry(...) of this run
    stale: list[str] = field(default_factory=list)  # digest nodes citing what their project no longer has
    reviewed: list[dict[str, str]] = field(default_factory=list)  # [{path, action, error}]
    interests: str | None = None
    commit: str | None = None
    error: str | None = None

    def text(self) -> str:
        head = (
            f"dream {self.date}: scanned {self.scanned}, changed {self.changed}, units {self.units} "
            f"(created {self.created}, corroborated {self.corroborated}, refined {self.refined}, "
            f"corrected {self.corrected}, failed {self.failed}), topics {self.topics}, "
            f"tokens {self.tokens:,}, {self.seconds:.1f}s" + (" — FAILED, see ERROR below" if self.error else "")
        )
        lines = [head]
        if self.resources and any(self.resources.values()):
            lines.append("resources: " + ", ".join(f"{k} {v}" for k, v in self.resources.items() if v))
        for n in self.nodes:
            lines.append(f"  {n['action']:<11} {n['path']}")
        for f in self.failures:
            lines.append(f"  FAILED      {f['unit']}: {f['error']} (retried next dream: {', '.join(f['paths'])})")
        for c in self.conflicts:
            lines.append(
                f"  CONFLICT    {c['subject']}: {' | '.join(c['values'])} (not resolved from evidence; "
                f"{c.get('node') or 'no node'}; listed in `reme-cc status`)"
            )
        for r in self.reviewed:
            lines.append(
                f"  stale {r['action'] or 'FAILED':<5} {r['path']}" + (f": {r['error']}" if r.get("error") else "")
            )
        for n in self.share:
            lines.append(
                f"  share?      {n['path']}: to share it with the team, run `reme-cc share {n['path']}` in {n['repo']}"
            )
        if self.interests:
            lines.append(f"  topics      {self.interests}")
        if self.commit:
            lines.append(f"  git commit  {self.commit[:10]} (undo: reme-cc dream --undo)")
        if self.error:
            lines.append(f"  ERROR       {self.error}")
        return "\n".join(lines)


@dataclass
class DreamContext(Context):
    """A Context whose note service records every path changed through it, and its previous content
    (for the change list, git and undo)."""

    recorder: gitlog.ChangeRecorder | None = None
    day: str = ""  # the dream's date: when a corrected statement stopped holding, unless its evidence says

    def __post_init__(self) -> None:
        if self.recorder is not None:
            self.notes.observe(before=self.recorder.before, after=lambda paths: self.recorder.touched(*paths))

    def new_notes(self, *, after: Any) -> NoteStore:
        store = KeepPinned(self.workspace, backlinks=self._backlinks, day=self.day)
        store.observe(after=after)
        return store


class HistoryKeepingNotes(NoteStore):
    """The dream's note service: a change that replaces part of an existing digest node's statement
    keeps the replaced text, dated, in the node's ``## History`` section and sets ``valid_from`` —
    enforced here, whatever the integrator wrote (notes/history.py)."""

    def __init__(self, ws: Workspace, *, backlinks: Any = None, day: str = ""):
        super().__init__(ws, backlinks=backlinks)
        self.day = day or _dt.date.today().isoformat()

    def update(self, rel: str, change: Change, *, full_write: bool = False, evidence: bool = True) -> Written:
        norm = self.content_path(rel)
        if not evidence or not norm.startswith("digest/"):
            return super().update(norm, change, full_write=full_write, evidence=evidence)

        def with_history(old: str | None) -> str | None:
            new = change(old)
            return new if old is None or new is None else kept_history(old, new, self.day)

        return super().update(norm, with_history, full_write=full_write, evidence=evidence)


class KeepPinned(HistoryKeepingNotes):
    """A pinned note (notes/pinned.py) keeps its text through a dream: a change may add to it, never
    drop one of its lines or its pin, and it is never moved or deleted; the agent is told why."""

    def update(self, rel: str, change: Change, **options: Any) -> Written:
        def kept(old: str | None) -> str | None:
            new = change(old)
            if old is not None and new is not None:
                note = parse_note(old)
                if is_pinned(note.meta):
                    dropped = dropped_lines(note.body, new)
                    if dropped or not is_pinned(parse_note(new).meta):
                        what = json.dumps(dropped[0][:80], ensure_ascii=False) if dropped else "its pin"
                        raise ConflictError(
                            f"{rel} is pinned by the user: keep every line of it and its `pinned: true` "
                            f"(this change drops {what}); add what is new or corrected as new lines instead"
                        )
            return new

        return super().update(rel, kept, **options)

    def move(self, src: str, dst: str, **options: Any) -> Any:
        self._refuse_pinned(src, "moves")
        return super().move(src, dst, **options)

    def delete(self, rel: str, **options: Any) -> Any:
        self._refuse_pinned(rel, "deletes")
        return super().delete(rel, **options)

    def _refuse_pinned(self, rel: str, what: str) -> None:
        try:
            text = self.ws.read_bytes(rel).decode("utf-8", errors="replace")
        except ReMeError:
            return  # a folder or no file: the store says what is wrong
        if is_pinned(parse_note(text).meta):
            raise ConflictError(f"{rel} is pinned by the user: a dream never {what} it; add to it instead")


def settle_history(ctx: DreamContext, unit: Unit, node: str) -> None:
    """Date the History entries this run added to ``node`` by the unit's evidence: they held until the
    oldest daily card of the unit, which they cite (the entry was written at the first edit, maybe
    before the integrator added the source)."""
    from ..notes.frontmatter import merge_frontmatter
    from ..notes.history import VALID_FROM, history, redate, source_dates

    assert ctx.recorder is not None
    old = ctx.recorder.befores.get(node)
    first = len(history(old.decode("utf-8", errors="replace"))) if old else 0
    text = ctx.workspace.read_bytes(node).decode("utf-8", errors="replace")
    if len(history(text)) <= first:
        return
    floor = parse_valid_from(old.decode("utf-8", errors="replace")) if old else ""
    until = max(min(source_dates(" ".join(f"[[{p}]]" for p in unit.paths)) or [ctx.day]), floor)
    settled = merge_frontmatter(redate(text, first, until, unit.paths), {VALID_FROM: until})
    if settled != text:
        ctx.notes.put(node, settled, full_write=False)


def parse_valid_from(text: str) -> str:
    from ..notes.history import VALID_FROM, flat_meta

    return flat_meta(text).get(VALID_FROM, "")


def kept_history(old: str, new: str, day: str) -> str:
    """``new`` with the statement it replaced in ``old`` kept in History: it held until the newest
    daily card among the sources this change added (else ``day``)."""
    from ..notes.frontmatter import merge_frontmatter
    from ..notes.history import VALID_FROM, keep_history, source_dates

    added = sorted(
        t for t in link_targets(sources_section(new) or "") - link_targets(old) if t.startswith(SOURCE_LAYERS)
    )
    floor = parse_valid_from(old)
    until = max(min(source_dates(" ".join(f"[[{t}]]" for t in added)) or [day]), floor)
    result = keep_history(old, new, until=until, evidence=added)
    return result if result == new else merge_frontmatter(result, {VALID_FROM: until})


# ---- the dream catalog ----------------------------------------------------------------------------
def load_catalog(ws: Workspace) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads((ws.root / CATALOG).read_text(encoding="utf-8"))
        files = data.get("files") if isinstance(data, dict) else None
        return files if isinstance(files, dict) else {}
    except (OSError, ValueError):
        return {}


def save_catalog(ws: Workspace, files: dict[str, dict[str, Any]]) -> None:
    ws.write_text(CATALOG, json.dumps({"files": files}, ensure_ascii=False, indent=1, sort_keys=True))


def window_dates(date: str, scan_days: int) -> list[str]:
    day = _dt.date.fromisoformat(date)
    return [(day - _dt.timedelta(days=i)).isoformat() for i in range(max(1, scan_days) - 1, -1, -1)]


def scan_daily(ws: Workspace, dates: list[str]) -> list[tuple[str, int, int]]:
    """(path, mtime_ns, size) of the daily cards of these dates (interests.yaml and index pages excluded)."""
    out = []
    for d in dates:
        folder = ws.root / "daily" / d
        if not folder.is_dir():
            continue
        for p in sorted(folder.rglob("*.md")):
            rel = p.relative_to(folder).parts
            if p.is_file() and not any(part.startswith(".") for part in rel):
                st = p.stat()
                out.append((ws.relpath(p), st.st_mtime_ns, st.st_size))
    return out


def find_changed(
    ws: Workspace, scanned: list[tuple[str, int, int]], catalog: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """path -> new catalog entry, for the files whose content differs from the last dream's."""
    changed: dict[str, dict[str, Any]] = {}
    for rel, mtime_ns, size in scanned:
        old = catalog.get(rel)
        if old and old.get("mtime_ns") == mtime_ns and old.get("size") == size:
            continue
        digest = hashlib.sha256(ws.read_bytes(rel)).hexdigest()
        entry = {"mtime_ns": mtime_ns, "size": size, "sha256": digest}
        if old and old.get("sha256") == digest:
            catalog[rel] = dict(old, **entry)  # touched, same content: refresh the fast path only
            continue
        changed[rel] = entry
    return changed


# ---- parsing agent answers --------------------------------------------------------------------------
def _json_objects(text: str) -> list[Any]:
    """Every top-level JSON value embedded in ``text`` (fences and prose around them tolerated)."""
    dec = json.JSONDecoder()
    out, i = [], 0
    while True:
        starts = [j for j in (text.find("{", i), text.find("[", i)) if j != -1]
        if not starts:
            return out
        j = min(starts)
        try:
            obj, end = dec.raw_decode(text, j)
        except ValueError:
            i = j + 1
            continue
        out.append(obj)
        i = end


def parse_extraction(text: str) -> dict[str, Any]:
    for obj in _json_objects(text):
        if isinstance(obj, dict) and ("units" in obj or "topics" in obj):
            return obj
    raise ReMeError("the extractor's answer held no JSON object with `units`/`topics`")


def source_projects(ws: Workspace, paths: list[str]) -> dict[str, str]:
    """{project name: root} recorded in the frontmatter of a unit's source cards (not the model's say)."""
    from ..notes.frontmatter import parse_note
    from .project import names_of

    out: dict[str, str] = {}
    for p in paths:
        if p.endswith(".md"):
            meta = parse_note(ws.read_bytes(p).decode("utf-8", errors="replace")).meta
            for name in names_of(meta.get("project")):
                out.setdefault(name, str(meta.get("project_root") or ""))
    return out


def mark_project(ctx: Context, unit: Unit, node: str, summary: DreamSummary) -> None:
    """Carry a project-specific unit's projects up into its node's frontmatter ``project`` (a name, or a
    list when sources came from several); a general unit leaves the node as it is."""
    from ..notes.frontmatter import parse_note
    from .project import find_root, names_of

    if unit.scope != "project" or not unit.projects:
        return
    meta = parse_note(ctx.workspace.read_bytes(node).decode("utf-8", errors="replace")).meta
    names = names_of(meta.get("project"))
    names += [n for n in unit.projects if n not in names]
    if names != names_of(meta.get("project")):
        ctx.notes.update_frontmatter(node, {"project": names[0] if len(names) == 1 else names})
    for root in unit.projects.values():
        repo, is_git = find_root(root) if root else (None, False)
        if is_git and not any(n["path"] == node for n in summary.share):
            summary.share.append({"path": node, "repo": str(repo)})


def normalize_units(raw: Any, ws: Workspace, changed: list[str], max_units: int) -> list[Unit]:
    units: list[Unit] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        name = " ".join(str(item.get("name") or "").split())
        summary = " ".join(str(item.get("summary") or "").split())
        bucket = str(item.get("bucket") or "").strip().lower()
        bucket = bucket if bucket in DIGEST_BUCKETS else "wiki"  # anything else is general knowledge
        paths: list[str] = []
        for p in item.get("paths") or item.get("sources") or []:
            p = str(p).strip().strip("[]")
            try:
                p = ws.normalize(p)
            except ReMeError:
                continue
            if p.startswith(("daily/", "resource/", "session/")) and ws.resolve(p).is_file() and p not in paths:
                paths.append(p)
        if not name or not paths:
            continue  # a unit without real evidence cannot get a Sources section
        projects = source_projects(ws, paths)
        scope = str(item.get("scope") or "").strip().lower()
        if scope not in ("project", "general"):  # the extractor did not say: a preference is general
            scope = "project" if projects and bucket != "personal" else "general"
        units.append(
            Unit(len(units) + 1, name, bucket, summary or name, paths, scope if projects else "general", projects)
        )
        if len(units) >= max_units:
            break
    return units


# ---- prompts ------------------------------------------------------------------------------------
def extractor_prompt(
    ws: Workspace, opts: DreamOptions, date: str, changed: list[str], recent: list[interests.Topic]
) -> str:
    parts = [f"Dream date: {date}. MAX_UNITS = {opts.max_units}. TOPIC_COUNT = {opts.topic_count}."]
    if opts.hint:
        parts.append(f"Hint from the user (focus on it when choosing units and topics): {opts.hint}")
    if recent:
        parts.append("Recent topics (avoid repeating them):\n" + "\n".join(f"- {t.title}" for t in recent[:30]))
    parts.append(f"Changed daily files ({len(changed)}):")
    budget = PROMPT_CHARS
    for rel in changed:
        text = ws.read_bytes(rel).decode("utf-8", errors="replace")
        if budget <= 0:
            parts.append(f"### {rel}\n(not inlined: read it if needed)")
            continue
        cut = min(FILE_CHARS, budget)
        shown = text[:cut] + ("\n…(cut; read the rest with start_line/end_line)" if len(text) > cut else "")
        budget -= len(shown)
        parts.append(f"### {rel}\n{shown}")
    parts.append("Answer with the JSON object only.")
    return "\n\n".join(parts)


def integrator_prompt(ws: Workspace, unit: Unit, hint: str) -> str:
    if unit.review:
        return review_prompt(ws, unit)
    scope = (
        f"specific to the project {', '.join(unit.projects)} (its node is marked with that project by the "
        "dream; keep the project's name in the text)"
        if unit.scope == "project"
        else "general (true in every project; write it without tying it to one repository)"
    )
    lines = [
        f"Unit {unit.id} — bucket: {unit.bucket}",
        f"Name: {unit.name}",
        f"Summary: {unit.summary}",
        f"Scope: {scope}",
        "Source paths (link every one of them in the node's ## Sources section):",
    ]
    lines += [f"- [[{p}]]" for p in unit.paths]
    if hint:
        lines.append(f"User hint for this dream: {hint}")
    lines.append("\nExcerpts of the sources:")
    for p in unit.paths:
        text = ws.read_bytes(p).decode("utf-8", errors="replace")
        excerpt = neutralise(text[:EXCERPT_CHARS], ("unit",))  # a card cannot end its unit early
        lines.append(f"--- {p}\n{excerpt}{'…' if len(text) > EXCERPT_CHARS else ''}")
    lines.append(
        "\nSearch the digest, decide CREATE/CORROBORATE/REFINE/CORRECT, write exactly one node "
        f"under digest/{unit.bucket}/ (or the existing same node), and end with the JSON line."
    )
    return "\n".join(lines)


COORDINATOR_PROMPT = """You coordinate ReMe's dream. You never read or write memory yourself.
For EACH <unit> in the user's message, launch the `dream-integrator` subagent with the Agent tool:
subagent_type "dream-integrator", description "integrate unit <id>", run_in_background false, and the
unit's text (everything between its <unit> tags) as the prompt, verbatim. Launch ALL of them in ONE
message (parallel Agent calls) and wait for them.
When every subagent has returned, answer with one JSON line per unit and nothing else:
{"unit": <id>, "action": "CREATE|CORROBORATE|REFINE|CORRECT|CONFLICT|FIX|SUPERSEDE|KEEP", "path": "digest/...", "error": null}
copying action and path from that subagent's final JSON line (and, for CONFLICT, its "subject" and
"values" too); if a subagent failed or gave no such line, use "action": null and put the reason in "error".
"""


def coordinator_prompt(prompts: list[tuple[Unit, str]]) -> str:
    blocks = [f'<unit id="{u.id}">\n{p}\n</unit>' for u, p in prompts]
    return f"Integrate these {len(prompts)} units, all in parallel:\n\n" + "\n\n".join(blocks)


def review_prompt(ws: Workspace, unit: Unit) -> str:
    """A stale node's review: what it cites that is gone, and what the project's folder holds now
    (names only, one folder level, shown as data)."""
    from .untrusted import one_line

    lines = [
        f"Unit {unit.id} — STALE REVIEW of {unit.review}",
        f"Name: {unit.name}",
        f"Summary: {unit.summary}",
        f"Project: {', '.join(unit.projects)}",
        "What the project's working tree holds now near what the node cites (names only):",
    ]
    for root in unit.projects.values():
        cited = stale.citations(ws.read_bytes(unit.review).decode("utf-8", "replace"))
        for folder, names in stale.nearby_entries(root, cited):
            shown = ", ".join(one_line(n, 80) for n in names) or "(empty or missing)"
            # a repository's names: no <unit> tag of theirs may end or open a unit of the coordinator's
            lines.append(neutralise(f"- {one_line(folder or '.', 120)}/: {shown}", ("unit",)))
    lines.append(
        f"\nRead {unit.review}, search the memory for what replaced the missing file, command or symbol, then "
        "decide FIX, SUPERSEDE or KEEP as your instructions say, and end with the JSON line."
    )
    return "\n".join(lines)


# ---- verification -----------------------------------------------------------------------------------
def _changed_digest_nodes(ctx: DreamContext) -> list[str]:
    rec = ctx.recorder
    assert rec is not None
    out = []
    base = ctx.workspace.root / "digest"
    for p in sorted(base.rglob("*.md")) if base.is_dir() else []:
        rel = ctx.workspace.relpath(p)
        try:
            now = p.read_bytes()
        except OSError:
            continue
        if rec.befores.get(rel) != now:
            out.append(rel)
    return out


def _cites(ws: Workspace, node: str, paths: list[str], every: bool = False) -> bool:
    try:
        text = ws.read_bytes(node).decode("utf-8", errors="replace")
    except ReMeError:
        return False
    section = sources_section(text)
    if section is None:
        return False
    return set(paths) <= link_targets(section) if every else bool(set(paths) & link_targets(section))


def verify_unit(
    ctx: DreamContext, unit: Unit, report: dict[str, Any] | None, changed_nodes: list[str], claimed: set[str]
) -> UnitOutcome:
    """Decide from the files, not the words, whether the unit landed in the digest."""
    ws, rec = ctx.workspace, ctx.recorder
    assert rec is not None
    path = str((report or {}).get("path") or "").strip().strip("[]") or None
    if report and str(report.get("action") or "").upper() == CONFLICT and path not in changed_nodes:
        return conflict_outcome(ctx, unit, report, path)
    if report and report.get("error") and not path:
        return UnitOutcome(unit, False, error=str(report["error"])[:300])
    candidates = ([path] if path else []) + [n for n in changed_nodes if n != path and n not in claimed]
    for node in candidates:
        if node not in changed_nodes or not _cites(ws, node, unit.paths):
            continue
        action = str((report or {}).get("action") or "").upper() if node == path else ""
        if action not in ACTIONS:
            action = "CREATE" if rec.befores.get(node) is None else "REFINE"
        if rec.befores.get(node) is None:
            action = "CREATE"  # a node that did not exist before cannot have been corroborated
        return UnitOutcome(unit, True, action, node)
    if (
        path
        and path.startswith("digest/")
        and not (report or {}).get("error")
        and _cites(ws, path, unit.paths, every=True)
    ):
        # The named node already cites every source of the unit, unchanged: an earlier dream that was
        # cut short (kill -9, timeout) after writing it did the work. Counting it as a failure would
        # leave these sources un-checkpointed and re-extracted by every dream, forever.
        return UnitOutcome(unit, True, "CORROBORATE", path)
    why = (
        f"{path} was not changed by this dream or does not cite the unit's sources"
        if path
        else "no digest node citing the unit's sources was written"
    )
    if report and report.get("error"):
        why = f"{report['error']}; {why}"
    return UnitOutcome(unit, False, error=why[:300])


def conflict_outcome(ctx: DreamContext, unit: Unit, report: dict[str, Any], path: str | None) -> UnitOutcome:
    """An abstention: the integrator left the digest as it was and named the subject and the values
    that disagree. Counted as done (its sources are checkpointed) once it names a real node or none,
    a subject and at least two different values; the contradiction is recorded for ``status``."""
    subject = " ".join(str(report.get("subject") or "").split())[:200]
    raw = report.get("values") if isinstance(report.get("values"), list) else []
    values = list(dict.fromkeys(" ".join(str(v).split())[:200] for v in raw if str(v).strip()))
    node = path if path and path.startswith("digest/") and ctx.workspace.resolve(path).is_file() else None
    if not subject or len(values) < 2 or (path and node is None):
        why = "a CONFLICT needs a subject, two or more different values and an existing digest node (or none)"
        return UnitOutcome(unit, False, error=why)
    item = contradictions.entry(
        ctx.workspace,
        subject=subject,
        values=values,
        node=node,
        sources=unit.paths,
        projects=list(unit.projects),
        date=ctx.day,
        run="",
    )
    return UnitOutcome(unit, True, CONFLICT, node, conflict=item)


# ---- stages -------------------------------------------------------------------------------------
async def _extract(
    ctx: DreamContext, opts: DreamOptions, date: str, changed: list[str], summary: DreamSummary
) -> tuple[list[Unit], list[interests.Topic]]:
    recent = interests.read_interests(ctx.workspace, date) + interests.previous_topics(
        ctx.workspace, date, opts.topic_diversity_days
    )
    run = await ctx.runner.run(
        ctx, "dream-extractor", extractor_prompt(ctx.workspace, opts, date, changed, recent), tools=["read"]
    )
    summary.agent_sessions += 1
    summary.tokens += run.usage.get("input_tokens", 0) + run.usage.get("output_tokens", 0)
    if run.error:
        raise ReMeError(f"extract failed: {run.error}")
    data = parse_extraction(run.text)
    units = normalize_units(data.get("units"), ctx.workspace, changed, opts.max_units)
    topics = [t for t in (interests.Topic.from_obj(x) for x in data.get("topics") or []) if t is not None]
    return units, topics


async def _integrate_batch(
    ctx: DreamContext, batch: list[Unit], hint: str, summary: DreamSummary
) -> dict[int, dict[str, Any]]:
    """One SDK session whose main agent launches one integrator subagent per unit, in parallel.
    Returns unit id -> the reported {action, path, error}."""
    integrator = ctx.runner.load(INTEGRATOR)
    coordinator = ctx.runner.spec("dream-coordinator", "Launches one dream-integrator per unit", COORDINATOR_PROMPT)
    prompts = [(u, integrator_prompt(ctx.workspace, u, hint)) for u in batch]
    run = await ctx.runner.run(
        ctx, coordinator, coordinator_prompt(prompts), tools=[], subagents={INTEGRATOR: integrator}
    )
    summary.agent_sessions += 1
    summary.tokens += run.usage.get("input_tokens", 0) + run.usage.get("output_tokens", 0)
    reports: dict[int, dict[str, Any]] = {}
    for obj in _json_objects(run.text):
        for item in obj if isinstance(obj, list) else [obj]:
            if isinstance(item, dict) and str(item.get("unit", "")).isdigit():
                reports[int(item["unit"])] = item
    if run.error:
        for u in batch:
            reports.setdefault(u.id, {"error": run.error})
    return reports


async def _integrate(
    ctx: DreamContext, units: list[Unit], opts: DreamOptions, summary: DreamSummary
) -> list[UnitOutcome]:
    size = max(1, opts.concurrency or ctx.config.dream_concurrency or 1)
    reports: dict[int, dict[str, Any]] = {}
    for i in range(0, len(units), size):  # batches run one after the other; a batch runs in parallel
        reports.update(await _integrate_batch(ctx, units[i : i + size], opts.hint, summary))
    changed_nodes = _changed_digest_nodes(ctx)
    outcomes: list[UnitOutcome] = []
    claimed: set[str] = set()
    # reported paths first, so a unit without a report cannot take another unit's node
    claimed |= {str(r.get("path")) for r in reports.values() if r.get("path")}
    for u in units:
        out = verify_unit(
            ctx, u, reports.get(u.id), changed_nodes, claimed - {str((reports.get(u.id) or {}).get("path"))}
        )
        if out.ok and out.path:
            claimed.add(out.path)
        outcomes.append(out)
    return outcomes


async def _keep_true(ctx: DreamContext, date: str, summary: DreamSummary) -> None:
    """Issue 26: mark the project nodes that cite what their working tree no longer has, have the
    integrator review a few of them, and keep the list of unresolved contradictions."""
    summary.stale = stale.mark_stale(ctx, date)
    reviews = [u for u in (review_unit(ctx, i + 1, p) for i, p in enumerate(summary.stale[:MAX_REVIEWS])) if u]
    if reviews:
        reports = await _integrate_batch(ctx, reviews, "", summary)
        for u in reviews:
            summary.reviewed.append(verify_review(ctx, u, reports.get(u.id) or {}, date))
    landed = set()
    for n in summary.nodes:
        try:
            text = ctx.workspace.read_bytes(n["path"]).decode("utf-8", "replace")
            landed |= link_targets(sources_section(text) or "")
        except ReMeError:
            continue
    kept = contradictions.open_ones(ctx.workspace, contradictions.load(ctx.workspace), landed)
    if kept or summary.conflicts:
        contradictions.save(ctx.workspace, kept + summary.conflicts)


def review_unit(ctx: DreamContext, number: int, node: str) -> Unit | None:
    """The review of one stale node, or None when its project's folder is unknown."""
    from ..notes.frontmatter import parse_note
    from ..notes.history import STALE

    meta = parse_note(ctx.workspace.read_bytes(node).decode("utf-8", errors="replace")).meta
    projects = stale.project_roots(ctx, meta.get("project"))
    if not projects:
        return None
    bucket = node.split("/")[1] if node.count("/") >= 2 else "wiki"
    name = str(meta.get("name") or node)
    return Unit(number, name, bucket, f"Stale: {meta.get(STALE)}", [], "project", projects, review=node)


def verify_review(ctx: DreamContext, unit: Unit, report: dict[str, Any], date: str) -> dict[str, str]:
    """From the file, not the words: superseded, or its citations all there again (fixed, or the missing
    ones kept with a reason in ``stale_kept``) — then the stale mark goes."""
    from ..notes.history import STALE_KEPT, flat_meta, note_status

    node = unit.review
    text = ctx.workspace.read_bytes(node).decode("utf-8", errors="replace")
    if note_status(text, today=date).state == "superseded":
        stale.clear_mark(ctx, node)
        return {"path": node, "action": "SUPERSEDE", "error": ""}
    missing = stale.refresh(ctx, node, unit.projects, date)
    if missing == []:
        action = "KEEP" if flat_meta(text).get(STALE_KEPT) else "FIX"
        return {"path": node, "action": action, "error": ""}
    why = str(report.get("error") or "") or f"still stale: {stale.reason(missing or [])}"
    return {"path": node, "action": "", "error": why[:300]}


def _write_topics(ctx: DreamContext, opts: DreamOptions, date: str, candidates: list[interests.Topic]) -> int:
    ws = ctx.workspace
    rel = interests.interests_path(date)
    same_day = interests.read_interests(ws, date)
    previous = interests.previous_topics(ws, date, opts.topic_diversity_days)
    merged = interests.merge_topics(same_day, candidates, previous, opts.topic_count)
    text = interests.render_interests(date, merged, opts.topic_count, opts.topic_diversity_days)
    ctx.notes.put(rel, text)
    return len(merged)


# ---- the run ------------------------------------------------------------------------------------
def _refresh_day_pages(ctx: DreamContext, dates: list[str]) -> None:
    for d in dates:
        if (ctx.workspace.root / "daily" / d).is_dir():
            daily.reindex(ctx.notes, d)


async def run_dream(ctx: Context, opts: DreamOptions | None = None) -> DreamSummary:
    """Run one dream. Raises LockedError when another dream holds the workspace's dream lock."""
    opts = opts or DreamOptions()
    ws = ctx.workspace
    date = daily.validate_date(opts.date)
    for name in ("scan_days", "max_units", "topic_count"):
        if getattr(opts, name) < 1:
            raise InvalidInputError(f"--{name.replace('_', '-')} must be at least 1")
    try:
        lock = ws.lock(DREAM_LOCK, timeout=0)
        lock.__enter__()
    except LockedError:
        raise LockedError(
            f"another dream is already running in {ws.root}; not starting a second one "
            "(wait for it to finish, then retry)"
        ) from None
    try:
        touch(ws, STAMP)
        return await _run_locked(ctx, opts, date)
    finally:
        lock.__exit__(None, None, None)


async def _run_locked(base: Context, opts: DreamOptions, date: str) -> DreamSummary:
    t0 = time.monotonic()
    ws = base.workspace
    run_id = gitlog.new_run_id()
    recorder = gitlog.ChangeRecorder(ws)
    recorder.snapshot(["digest"])
    ctx = DreamContext(ws, base.config, agents=base.agents, recorder=recorder, day=date)
    ctx._index = base._index  # share an already open index
    summary = DreamSummary(run=run_id, date=date)
    catalog = load_catalog(ws)
    catalog_before: dict[str, Any] = {}
    try:
        ctx.index.sync()  # hand edits since the last sync must be visible to node_search
        if opts.resources:
            from .resource import sync_resources

            res = await sync_resources(ctx, today=date)
            summary.tokens += res.tokens
            summary.resources = {
                "created": len(res.created),
                "updated": len(res.updated),
                "removed": len(res.removed),
                "failed": len(res.failed),
            }
        dates = window_dates(date, opts.scan_days)
        _refresh_day_pages(ctx, dates)
        scanned = scan_daily(ws, dates)
        summary.scanned = len(scanned)
        changed = find_changed(ws, scanned, catalog)
        summary.changed = len(changed)
        if changed:  # nothing changed -> no agent call at all
            units, topics = await _extract(ctx, opts, date, sorted(changed), summary)
            summary.units = len(units)
            outcomes = await _integrate(ctx, units, opts, summary) if units else []
            failed_paths: set[str] = set()
            for out in outcomes:
                if out.ok and out.conflict is not None:  # abstained: recorded, its sources checkpointed
                    summary.conflicts.append(dict(out.conflict, run=run_id))
                    continue
                if out.ok:
                    key = {
                        "CREATE": "created",
                        "CORROBORATE": "corroborated",
                        "REFINE": "refined",
                        "CORRECT": "corrected",
                    }[out.action or "REFINE"]
                    setattr(summary, key, getattr(summary, key) + 1)
                    summary.nodes.append({"path": out.path or "", "action": out.action or "", "unit": out.unit.name})
                    if out.path:
                        mark_project(ctx, out.unit, out.path, summary)
                        settle_history(ctx, out.unit, out.path)
                else:
                    summary.failed += 1
                    failed_paths |= set(out.unit.paths)
                    summary.failures.append({"unit": out.unit.name, "paths": out.unit.paths, "error": out.error})
            summary.topics = _write_topics(ctx, opts, date, topics)
            summary.interests = interests.interests_path(date)
            for rel, entry in changed.items():  # checkpoint only what fully succeeded
                if rel not in failed_paths:
                    catalog_before[rel] = catalog.get(rel)
                    catalog[rel] = dict(entry, dreamed=run_id)
        await _keep_true(ctx, date, summary)
        save_catalog(ws, catalog)
    except ReMeError as exc:
        summary.error = str(exc)
    finally:
        summary.seconds = round(time.monotonic() - t0, 2)
        _finish(ctx, recorder, summary, catalog_before)
        base._index = ctx._index  # keep whichever index got opened for the caller to close
    return summary


def _finish(
    ctx: DreamContext, recorder: gitlog.ChangeRecorder, summary: DreamSummary, catalog_before: dict[str, Any]
) -> None:
    ws = ctx.workspace
    changes = recorder.changes()
    if not changes and not catalog_before:
        return
    if changes and gitlog.is_git_repo(ws):
        try:
            summary.commit = gitlog.git_commit(ws, [c["path"] for c in changes], _commit_message(summary), summary.run)
        except ReMeError as exc:
            summary.error = (summary.error + "; " if summary.error else "") + f"git commit skipped: {exc}"
    gitlog.save_run(
        ws,
        summary.run,
        recorder,
        {
            "date": summary.date,
            "summary": asdict(summary),
            "commit": summary.commit,
            "catalog_before": catalog_before,
            "finished": _dt.datetime.now().isoformat(timespec="seconds"),
        },
    )


def _commit_message(s: DreamSummary) -> str:
    lines = [
        f"reme dream {s.date}: {s.created} created, {s.corroborated} corroborated, {s.refined} refined, "
        f"{s.corrected} corrected, {s.failed} failed",
        "",
        f"scanned {s.scanned}, changed {s.changed}, units {s.units}, topics {s.topics}, tokens {s.tokens}",
    ]
    lines += [f"{n['action']} {n['path']}" for n in s.nodes]
    return "\n".join(lines)


def undo(ctx: Context) -> dict[str, Any]:
    """Revert the last dream (under the dream lock) and put its checkpoints back."""
    ws = ctx.workspace
    try:
        with ws.lock(DREAM_LOCK, timeout=0):
            run = gitlog.undo_last_run(ctx.notes)
            catalog = load_catalog(ws)
            for rel, old in (run.get("catalog_before") or {}).items():
                if old is None:
                    catalog.pop(rel, None)
                else:
                    catalog[rel] = old
            save_catalog(ws, catalog)
            return run
    except LockedError:
        raise LockedError("a dream is running; wait for it to finish before --undo") from None
