"""Auto-resource: every file in ``resource/`` gets one daily resource card.

* Dating: a file directly in ``resource/`` counts as today; ``resource/YYYY-MM-DD/…`` as that date.
* Text files (md, txt, json, jsonl, csv, yaml, html) are read by the ``resource`` agent, which answers
  with the card (frontmatter ``name`` names the file); binary or oversized files get a card written by
  code that only lists them (kind, size) — they are never sent to a model.
* Cards carry ``source_resource: "[[resource/…]]"`` and the resource's sha256, so a changed resource
  updates its card in place, a deleted one removes it, and the mapping can always be rebuilt from the
  cards themselves (``metadata/resource/catalog.json`` is only a cache).
* The day index pages of affected days are regenerated so they link the cards.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from ..errors import ReMeError
from ..notes.frontmatter import parse_note, render_note
from ..notes.wikilinks import parse_links
from ..tools import Context
from ..workspace import DATE_RE, validate_component
from . import daily

TEXT_EXTS = {".md", ".markdown", ".txt", ".json", ".jsonl", ".csv", ".yaml", ".yml", ".html", ".htm"}
MAX_TEXT_BYTES = 2_000_000  # larger files are listed, not interpreted
PROMPT_CHARS = 30_000  # the agent sees this much inline and may `read` the rest
CATALOG = "metadata/resource/catalog.json"

# summarize(ctx, resource, text) -> card markdown (frontmatter name/description + body)
Summarizer = Callable[[Context, "Resource", str], Awaitable[str]]


@dataclass(frozen=True)
class Resource:
    path: str  # resource/…
    date: str
    size: int
    mtime_ns: int
    sha256: str
    kind: str  # text | binary | oversized


@dataclass
class ResourceReport:
    created: list[str] = field(default_factory=list)  # card paths
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    listed: list[str] = field(default_factory=list)  # resources not interpreted (binary/oversized)
    failed: dict[str, str] = field(default_factory=dict)  # resource path -> error
    unchanged: int = 0
    tokens: int = 0

    @property
    def changed_paths(self) -> list[str]:
        return self.created + self.updated + self.removed

    def text(self) -> str:
        parts = [f"{len(self.created)} created", f"{len(self.updated)} updated", f"{len(self.removed)} removed",
                 f"{self.unchanged} unchanged"]
        if self.listed:
            parts.append(f"{len(self.listed)} listed only (binary/oversized)")
        if self.failed:
            parts.append(f"{len(self.failed)} failed")
        lines = ["resource cards: " + ", ".join(parts)]
        lines += [f"  + {p}" for p in self.created] + [f"  ~ {p}" for p in self.updated]
        lines += [f"  - {p}" for p in self.removed]
        lines += [f"  ! {p}: {e}" for p, e in self.failed.items()]
        return "\n".join(lines)


# ---- discovery ----------------------------------------------------------------------------------
def resource_date(rel: str, today: str) -> str:
    parts = rel.split("/")
    if len(parts) >= 3 and DATE_RE.match(parts[1]):
        return parts[1]
    return today


def _looks_binary(head: bytes) -> bool:
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a multi-byte char cut at the end is fine
    return False


def discover(ctx: Context, today: str) -> list[Resource]:
    ws = ctx.workspace
    base = ws.root / "resource"
    out: list[Resource] = []
    if not base.is_dir():
        return out
    for p in sorted(base.rglob("*")):
        rel_parts = p.relative_to(base).parts
        if not p.is_file() or p.is_symlink() or any(part.startswith(".") for part in rel_parts):
            continue
        rel = ws.relpath(p)
        st = p.stat()
        data = p.read_bytes()
        ext = p.suffix.lower()
        if ext not in TEXT_EXTS or _looks_binary(data[:8192]):
            kind = "binary"
        elif st.st_size > MAX_TEXT_BYTES:
            kind = "oversized"
        else:
            kind = "text"
        out.append(Resource(rel, resource_date(rel, today), st.st_size, st.st_mtime_ns,
                            hashlib.sha256(data).hexdigest(), kind))
    return out


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


def listed_card(res: Resource) -> tuple[str, str]:
    """(name, card) for a resource we do not interpret: what it is, never what it says."""
    name = res.path.rsplit("/", 1)[-1]
    why = "a binary file" if res.kind == "binary" else f"larger than {MAX_TEXT_BYTES // 1_000_000} MB"
    meta = {"name": name, "description": f"Resource {name} ({res.size:,} bytes; {why}, listed, not interpreted)",
            "source_resource": link_of(res.path), "resource_sha256": res.sha256}
    body = (f"# {name}\n\nThe resource {link_of(res.path)} is {why} ({res.size:,} bytes), so it is listed "
            "here without being read. Open it directly to see its contents.\n")
    return name, render_note(meta, body)


def _finish_card(card_md: str, res: Resource, fallback_name: str) -> tuple[str, str]:
    """Validate the agent's card and stamp it with the resource link; returns (name, text).
    The card goes to daily/: secrets are redacted even if the model wrote one from memory."""
    from .redact import redact

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


async def agent_summarize(ctx: Context, res: Resource, text: str) -> tuple[str, int]:
    """Ask the ``resource`` agent for the card; returns (card markdown, tokens used)."""
    from ..agent import run_agent

    cut = len(text) > PROMPT_CHARS
    attrs = f'path="{res.path}"' + (' truncated="true"' if cut else "")
    prompt = (f"Resource: {res.path} (date {res.date}, {res.size:,} bytes)\n\n"
              f"<resource {attrs}>\n{text[:PROMPT_CHARS]}\n</resource>\n\n"
              "Answer with the card only.")
    run = await run_agent(ctx, "resource", prompt, tools=["read"])
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
    """Bring the resource cards in line with ``resource/``. Idempotent; cheap when nothing changed."""
    ws = ctx.workspace
    today = daily.validate_date(today)
    summarize = summarize or agent_summarize
    report = ResourceReport()
    with ws.lock("resource", timeout=120):
        entries = load_catalog(ctx)
        found = discover(ctx, today)
        present = {r.path for r in found}
        todo: list[Resource] = []
        for res in found:
            entry = entries.get(res.path)
            if entry and entry.get("sha256") == res.sha256 and ws.resolve(entry["card"]).is_file():
                report.unchanged += 1
            else:
                todo.append(res)
        days: set[str] = set()
        taken: set[str] = set()

        async def make(res: Resource) -> tuple[Resource, str, str, int] | None:
            fallback = res.path.rsplit("/", 1)[-1].rsplit(".", 1)[0] or "resource"
            if res.kind != "text":  # listed by code, never sent to a model
                name, card = listed_card(res)
                return res, name, card, 0
            async with sem:
                try:
                    text = ws.read_bytes(res.path).decode("utf-8", errors="replace")
                    card_md, tokens = await summarize(ctx, res, text)
                    name, card = _finish_card(card_md, res, fallback)
                except ReMeError as exc:
                    report.failed[res.path] = str(exc)
                    return None
            return res, name, card, tokens

        sem = asyncio.Semaphore(max(1, concurrency or ctx.config.dream_concurrency))
        results = await asyncio.gather(*(make(r) for r in todo))
        for item in results:
            if item is None:
                continue
            res, name, card, tokens = item
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
            if res.kind != "text":
                report.listed.append(res.path)
            entries[res.path] = {"card": path, "sha256": res.sha256}
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


# ---- CLI ----------------------------------------------------------------------------------------
def register_cli(subparsers: Any) -> None:
    p = subparsers.add_parser("resource", help="turn files in resource/ into daily resource cards",
                              description="Create, update or remove one daily card per file in resource/.")
    p.add_argument("--date", help="the date root files count as (default today)")
    p.set_defaults(func=_cli)


def _cli(args: Any) -> int:
    from .dream import open_context  # one place builds the Context for CLI commands

    ctx = open_context(args)
    try:
        t0 = time.monotonic()
        report = asyncio.run(sync_resources(ctx, today=getattr(args, "date", None)))
        if getattr(args, "json", False):
            print(json.dumps({**report.__dict__, "seconds": round(time.monotonic() - t0, 2)}, ensure_ascii=False))
        else:
            print(report.text())
        return 1 if report.failed else 0
    finally:
        ctx.close()

