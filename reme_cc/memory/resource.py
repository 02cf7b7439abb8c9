"""Auto-resource: every file in ``resource/`` gets one daily resource card.

* Dating: a file directly in ``resource/`` counts as today; ``resource/YYYY-MM-DD/…`` as that date.
* Change detection stats first: a file whose (mtime, size) equals the catalog's is not opened; only
  the others are read and hashed, and only a changed hash makes a new card.
* Text files (md, txt, json, jsonl, csv, yaml, html) and documents (PDF, .docx: their extracted text
  view, notes/documents.py) are read by the ``resource`` agent, which answers with the card (frontmatter
  ``name`` names the file). It sees the text with secrets redacted, whole when it fits PROMPT_CHARS,
  else an outline made from the structure (headings/pages, first paragraphs, tables) within that
  budget, plus the names of recent daily cards so it can say why the resource matters to the user.
* Everything else gets a card written by code that only lists it, never sent to a model: images with
  their format, size and dimensions; documents without text with the reason (no text layer,
  encrypted, damaged, too big); other binary or oversized files with their size.
* Cards carry ``source_resource: "[[resource/…]]"`` and the resource's sha256, so a changed resource
  updates its card in place, a deleted one removes it, and the mapping can always be rebuilt from the
  cards themselves (``metadata/resource/catalog.json`` is only a cache; it also keeps each file's stat).
* The day index pages of affected days are regenerated so they link the cards.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Awaitable, Callable

from ..base.errors import ReMeError
from ..index.sync import refused_name
from ..notes import documents
from ..notes.formats import RESOURCE_TEXT_EXTS
from ..notes.frontmatter import parse_note, render_note
from ..notes.text import looks_binary
from ..notes.wikilinks import parse_links
from ..base.workspace import DATE_RE, own_stat, validate_component
from . import daily
from .context import Context
from .untrusted import neutralise

PROMPT_TAGS = ("resource", "recent_daily_cards")  # resource_prompt's wrappers: the texts cannot close them
MAX_TEXT_BYTES = 2_000_000  # larger files are listed, not interpreted
PROMPT_CHARS = 30_000  # budget of resource text in the agent's prompt (~10k tokens); longer: an outline
RECENT_DAYS = 7  # daily cards of this many days before the resource's date tell the agent what the user does
RECENT_CARDS = 30
CATALOG = "metadata/resource/catalog.json"


@dataclass(frozen=True)
class Resource:
    path: str  # resource/…
    date: str
    size: int
    mtime_ns: int
    sha256: str
    kind: str  # text | document | image | binary | oversized
    why: str = ""  # for a listed resource: what it is and why it is not interpreted


@dataclass
class ResourceReport:
    created: list[str] = field(default_factory=list)  # card paths
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    listed: dict[str, str] = field(default_factory=dict)  # resource path -> why it is listed, not interpreted
    failed: dict[str, str] = field(default_factory=dict)  # resource path -> error
    unchanged: int = 0
    tokens: int = 0

    @property
    def changed_paths(self) -> list[str]:
        return self.created + self.updated + self.removed

    def text(self) -> str:
        parts = [
            f"{len(self.created)} created",
            f"{len(self.updated)} updated",
            f"{len(self.removed)} removed",
            f"{self.unchanged} unchanged",
        ]
        if self.listed:
            parts.append(f"{len(self.listed)} listed only")
        if self.failed:
            parts.append(f"{len(self.failed)} failed")
        lines = ["resource cards: " + ", ".join(parts)]
        lines += [f"  + {p}" for p in self.created] + [f"  ~ {p}" for p in self.updated]
        lines += [f"  - {p}" for p in self.removed]
        lines += [f"  = {p}: {why}" for p, why in self.listed.items()]
        lines += [f"  ! {p}: {e}" for p, e in self.failed.items()]
        return "\n".join(lines)


# ---- discovery ----------------------------------------------------------------------------------
def resource_date(rel: str, today: str) -> str:
    parts = rel.split("/")
    if len(parts) >= 3 and DATE_RE.match(parts[1]):
        return parts[1]
    return today


@dataclass(frozen=True)
class Found:
    path: str
    date: str
    size: int
    mtime_ns: int


def scan(ctx: Context, today: str) -> list[Found]:
    """Every resource file with its stat; nothing is opened."""
    ws = ctx.workspace
    base = ws.root / "resource"
    out: list[Found] = []
    if not base.is_dir() or own_stat(ws.root, "resource") is None:  # linked elsewhere: doctor says so
        return out
    for p in sorted(base.rglob("*")):
        rel_parts = p.relative_to(base).parts
        if any(part.startswith(".") for part in rel_parts) or p.is_symlink() or not p.is_file():
            continue
        rel = ws.relpath(p)
        if refused_name(rel):  # as the index: a name with control characters or not UTF-8 (status lists it)
            continue
        st = p.stat()
        out.append(Found(rel, resource_date(rel, today), st.st_size, st.st_mtime_ns))
    return out


def classify(ctx: Context, f: Found) -> Resource:
    """Read and hash one resource and tell what kind it is (an image or a too-big file is hashed in
    1 MB blocks, never held whole)."""
    path = ctx.workspace.resolve(f.path)
    ext = path.suffix.lower()
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        head = fh.read(8192)
        digest.update(head)
        while block := fh.read(1 << 20):
            digest.update(block)
    sha = digest.hexdigest()
    if documents.is_document(f.path):
        if f.size > documents.MAX_DOCUMENT_BYTES:
            return Resource(
                f.path,
                f.date,
                f.size,
                f.mtime_ns,
                sha,
                "oversized",
                f"larger than {documents.MAX_DOCUMENT_BYTES // (1024 * 1024)} MB",
            )
        return Resource(f.path, f.date, f.size, f.mtime_ns, sha, "document")
    if documents.is_image(f.path):
        info = documents.image_info(path)
        why = f"a {info[0]} image, {info[1]}×{info[2]} pixels" if info else "an image file that could not be decoded"
        return Resource(f.path, f.date, f.size, f.mtime_ns, sha, "image", why)
    if ext not in RESOURCE_TEXT_EXTS or looks_binary(head):
        return Resource(f.path, f.date, f.size, f.mtime_ns, sha, "binary", "a binary file")
    if f.size > MAX_TEXT_BYTES:
        return Resource(
            f.path, f.date, f.size, f.mtime_ns, sha, "oversized", f"larger than {MAX_TEXT_BYTES // 1_000_000} MB"
        )
    return Resource(f.path, f.date, f.size, f.mtime_ns, sha, "text")


def discover(ctx: Context, today: str) -> list[Resource]:
    return [classify(ctx, f) for f in scan(ctx, today)]


# ---- cards --------------------------------------------------------------------------------------
def card_filename(name: str, fallback: str = "resource") -> str:
    """A safe ``<name>.md`` from a frontmatter name (keeps Unicode letters, drops path characters)."""
    text = unicodedata.normalize("NFKC", name or "").strip()
    text = re.sub(r'[\\/:*?"<>|\[\]#^\x00-\x1f]+', " ", text)
    text = re.sub(r"\s+", "-", text).strip("-. ")[:80].rstrip("-. ")
    if not text:
        text = fallback
    try:
        return validate_component(text + ".md")
    except ReMeError:
        return fallback + ".md"


def link_of(rel: str) -> str:
    return f"[[{rel}]]"


def _target_of(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    links = parse_links(value)
    return links[0].target.strip() if links else None


def cards_by_resource(ctx: Context) -> dict[str, dict[str, Any]]:
    """resource path -> {card, sha256} read from the cards' frontmatter (the source of truth)."""
    ws = ctx.workspace
    root = ws.root / "daily"
    out: dict[str, dict[str, Any]] = {}
    if not root.is_dir():
        return out
    for day in sorted(d.name for d in root.iterdir() if d.is_dir() and DATE_RE.match(d.name)):
        for card in daily.list_cards(ws, day):
            target = _target_of(card.meta.get("source_resource"))
            if target and target.startswith("resource/"):
                out[target] = {"card": card.path, "sha256": str(card.meta.get("resource_sha256", ""))}
    return out


def load_catalog(ctx: Context) -> dict[str, dict[str, Any]]:
    path = ctx.workspace.root / CATALOG
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("resources"), dict):
            # trust the cache only while every card it names still exists
            if all((ctx.workspace.root / v.get("card", "")).is_file() for v in data["resources"].values()):
                return data["resources"]
    except (OSError, ValueError):
        pass
    return cards_by_resource(ctx)


def save_catalog(ctx: Context, entries: dict[str, dict[str, Any]]) -> None:
    ctx.workspace.write_text(CATALOG, json.dumps({"resources": entries}, ensure_ascii=False, indent=1))


def listed_card(res: Resource, why: str | None = None) -> tuple[str, str]:
    """(name, card) for a resource we do not interpret: what it is, never what it says."""
    name = res.path.rsplit("/", 1)[-1]
    why = why or res.why or "a binary file"
    meta = {
        "name": name,
        "description": f"Resource {name} ({res.size:,} bytes; {why}; listed, not interpreted)",
        "source_resource": link_of(res.path),
        "resource_sha256": res.sha256,
    }
    hint = "`read_image` shows it." if res.kind == "image" else "Open it directly to see its contents."
    body = (
        f"# {name}\n\nThe resource {link_of(res.path)} is {why} ({res.size:,} bytes), so it is listed "
        f"here without being read. {hint}\n"
    )
    return name, render_note(meta, body)


def _finish_card(card_md: str, res: Resource, fallback_name: str) -> tuple[str, str]:
    """Validate the agent's card and stamp it with the resource link; returns (name, text).
    The card goes to daily/: secrets are redacted even if the model wrote one from memory."""
    from ..notes.redact import redact

    card_md = redact(card_md)
    note = parse_note(card_md.strip() + "\n")
    if note.error or not note.meta:
        # a card without frontmatter is still useful: wrap it
        note = parse_note(render_note({"name": fallback_name}, card_md.strip() + "\n"))
    meta = dict(note.meta)
    name = (note.name or "").strip() or fallback_name
    body = note.body.lstrip("\n")
    if not body.strip():
        raise ReMeError(f"the resource agent returned an empty card for {res.path}")
    meta["name"] = name
    meta.setdefault("description", f"Reading note of {res.path}")
    meta["source_resource"] = link_of(res.path)
    meta["resource_sha256"] = res.sha256
    if link_of(res.path) not in body:
        body = body.rstrip("\n") + f"\n\nSource: {link_of(res.path)}\n"
    return name, render_note(meta, body)


def _unique_card_path(ctx: Context, date: str, filename: str, taken: set[str]) -> str:
    stem = filename[:-3]
    for i in range(1, 1000):
        cand = f"daily/{date}/{stem if i == 1 else f'{stem}-{i}'}.md"
        if cand not in taken and not ctx.workspace.resolve(cand).exists():
            return cand
    raise ReMeError(f"cannot find a free card name for {filename} in daily/{date}/")


# ---- what the agent sees -------------------------------------------------------------------------
def resource_text(ctx: Context, res: Resource) -> tuple[str, str | None]:
    """(text with secrets redacted, None), or ("", why it is only listed) for a document without text."""
    from ..notes.redact import redact

    data = ctx.workspace.read_bytes(res.path)
    if res.kind == "document":
        view = documents.text_view(ctx.workspace.metadata, res.path, data, res.sha256)
        if view.error:
            return "", view.error
        return view.text, None
    return redact(data.decode("utf-8", errors="replace")), None


_HEADING = re.compile(r"^#{1,6} \S")
_FIGURE = re.compile(r"\d[\d,.]*\s*(?:%|[A-Za-z\u4e00-\u9fff]{1,4})?")


def outline(text: str, budget: int) -> str:
    """A long text within ``budget`` characters, from its structure: every section's heading (PDF
    pages are sections), its opening lines, and the lines that carry figures (tables, numbers).
    Sections are kept evenly spaced when even their headings do not fit."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    fence = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if not fence and _HEADING.match(line):
            sections.append((line, []))
        else:
            sections[-1][1].append(line)
    sections = [(h, b) for h, b in sections if h or any(x.strip() for x in b)]
    keep = max(1, min(len(sections), budget // 160))
    # evenly spaced, first and last included (a report's conclusion is often on its last pages)
    chosen = sorted({round(k * (len(sections) - 1) / (keep - 1)) for k in range(keep)}) if keep > 1 else [0]
    per = budget // len(chosen)
    out: list[str] = []
    last = -1
    for k in chosen:
        if k > last + 1:
            out.append(f"[… {k - last - 1} section(s) left out]")
        last = k
        heading, body = sections[k]
        lines = [x for x in body if x.strip()]
        piece = [heading] if heading else []
        used = len(heading)
        opening = 0
        for x in lines:  # opening lines: about half of the section's share
            if used + len(x) > per // 2 and opening:
                break
            piece.append(x[: per // 2])
            used += len(x) + 1
            opening += 1
        figures = [x for x in lines[opening:] if x.lstrip().startswith("|") or len(_FIGURE.findall(x)) >= 2]
        for x in figures:
            if used + len(x) > per:
                break
            piece.append(x)
            used += len(x) + 1
        out.append("\n".join(piece))
    if last < len(sections) - 1:
        out.append(f"[… {len(sections) - 1 - last} section(s) left out]")
    return "\n\n".join(out)


def recent_cards(ctx: Context, date: str) -> list[str]:
    """'name: description' of the user's own daily cards in the RECENT_DAYS up to ``date``, newest first
    (resource cards left out): what the user is working on, so the card can say why this matters."""
    import datetime as dt

    end = dt.date.fromisoformat(date)
    out: list[str] = []
    for back in range(RECENT_DAYS + 1):
        day = (end - dt.timedelta(days=back)).isoformat()
        for card in daily.list_cards(ctx.workspace, day):
            if card.meta.get("source_resource"):
                continue
            out.append(f"- {day} {card.name}: {' '.join(str(card.description or '').split())[:200]}")
            if len(out) >= RECENT_CARDS:
                return out
    return out


def resource_prompt(ctx: Context, res: Resource, text: str) -> str:
    what = f"{res.size:,} bytes"
    if res.kind == "document":
        pages = documents.page_lines(text)
        what += f", {'a PDF of ' + str(len(pages)) + ' pages' if pages else 'a Word document'}, as extracted text"
    body = text
    attrs = f'path="{res.path}"'
    if len(text) > PROMPT_CHARS:
        body = outline(text, PROMPT_CHARS)
        attrs += f' outline="true" full_chars="{len(text)}"'
    recent = recent_cards(ctx, res.date)
    context = "\n".join(recent) if recent else "(none)"
    return (
        f"Resource: {res.path} (date {res.date}, {what})\n\n"
        f"<resource {attrs}>\n{neutralise(body, PROMPT_TAGS)}\n</resource>\n\n"
        f"<recent_daily_cards>\n{neutralise(context, PROMPT_TAGS)}\n</recent_daily_cards>\n\n"
        "Answer with the card only."
    )


async def agent_summarize(ctx: Context, res: Resource, text: str) -> tuple[str, int]:
    """Ask the ``resource`` agent for the card; returns (card markdown, tokens used). The agent gets no
    tools: what it may see is exactly the prompt (redacted, within the budget)."""
    run = await ctx.runner.run(ctx, "resource", resource_prompt(ctx, res, text), tools=[])
    tokens = int(run.usage.get("input_tokens", 0)) + int(run.usage.get("output_tokens", 0))
    if run.error:
        raise ReMeError(f"resource agent failed: {run.error}")
    if not run.text.strip():
        raise ReMeError("resource agent gave no answer")
    return run.text, tokens


async def sync_resources(
    ctx: Context,
    *,
    today: str | None = None,
    summarize: Callable[[Context, Resource, str], Awaitable[tuple[str, int]]] | None = None,
    concurrency: int | None = None,
) -> ResourceReport:
    """Bring the resource cards in line with ``resource/``. Idempotent; cheap when nothing changed
    (one stat per file)."""
    ws = ctx.workspace
    today = daily.validate_date(today)
    summarize = summarize or agent_summarize
    report = ResourceReport()
    with ws.lock("resource", timeout=120):
        entries = load_catalog(ctx)
        found = scan(ctx, today)
        present = {f.path for f in found}
        todo: list[Resource] = []
        for f in found:
            entry = entries.get(f.path)
            has_card = bool(entry) and ws.resolve(entry["card"]).is_file()
            if has_card and (entry.get("mtime_ns"), entry.get("size")) == (f.mtime_ns, f.size):
                report.unchanged += 1  # stat first: not opened
                continue
            try:
                res = classify(ctx, f)
            except OSError as exc:
                report.failed[f.path] = f"cannot read it ({exc.strerror or exc})"
                continue
            if has_card and entry.get("sha256") == res.sha256:
                entry.update(mtime_ns=f.mtime_ns, size=f.size)  # touched, same bytes
                report.unchanged += 1
            else:
                todo.append(res)
        days: set[str] = set()
        taken: set[str] = set()

        async def make(res: Resource) -> tuple[Resource, str, str, int, str | None] | None:
            fallback = res.path.rsplit("/", 1)[-1].rsplit(".", 1)[0] or "resource"
            if res.kind not in ("text", "document"):  # listed by code, never sent to a model
                name, card = listed_card(res)
                return res, name, card, 0, res.why
            try:
                # extraction blocks (a bounded child process): off the event loop
                text, why = await asyncio.to_thread(resource_text, ctx, res)
            except OSError as exc:
                report.failed[res.path] = f"cannot read it ({exc.strerror or exc})"
                return None
            if why:
                name, card = listed_card(res, why)
                return res, name, card, 0, why
            async with sem:
                try:
                    card_md, tokens = await summarize(ctx, res, text)
                    name, card = _finish_card(card_md, res, fallback)
                except ReMeError as exc:
                    report.failed[res.path] = str(exc)
                    return None
            return res, name, card, tokens, None

        sem = asyncio.Semaphore(max(1, concurrency or ctx.config.dream_concurrency))
        results = await asyncio.gather(*(make(r) for r in todo))
        for item in results:
            if item is None:
                continue
            res, name, card, tokens, why = item
            report.tokens += tokens
            old = entries.get(res.path)
            if old and ws.resolve(old["card"]).is_file():
                path = old["card"]
                report.updated.append(path)
            else:
                path = _unique_card_path(ctx, res.date, card_filename(name), taken)
                report.created.append(path)
            taken.add(path)
            ctx.notes.put(path, card)
            if why:
                report.listed[res.path] = why
            entries[res.path] = {"card": path, "sha256": res.sha256, "mtime_ns": res.mtime_ns, "size": res.size}
            days.add(daily.date_of(path) or res.date)
        for rel in sorted(set(entries) - present):
            card = entries.pop(rel)["card"]
            target = ws.resolve(card)
            if target.is_file():
                meta = parse_note(target.read_text(encoding="utf-8", errors="replace")).meta
                if _target_of(meta.get("source_resource")) == rel:  # never delete a card the user repurposed
                    ctx.notes.delete(card)
                    report.removed.append(card)
                    days.add(daily.date_of(card) or today)
        save_catalog(ctx, entries)
        for day in sorted(days):
            daily.reindex(ctx.notes, day)
    return report
