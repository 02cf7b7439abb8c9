"""The viewer's pages and actions. Every string that comes from a note, a log or git goes through ``e``
(html.escape) or the safe Markdown renderer; every change is one call of the note service
(``ctx.notes``) or of the dream's undo, so the viewer follows the same rules as the tools and the CLI."""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import quote, urlencode

from ...base.errors import ConflictError, InvalidInputError, NotFoundError
from ...memory.context import Context
from ...memory.daily import validate_date
from ...memory.untrusted import one_line
from ...notes.evidence import sources_section
from ...notes.frontmatter import parse_note
from ...notes.wikilinks import parse_links
from . import data
from .markdown import note_href, render_markdown

ViewApp = Any  # app.ViewApp (imported there, not here: app.py imports this module)

TEAM_LABEL = "team memory (written by others)"
NAV = (
    ("/timeline", "Timeline"),
    ("/graph", "Graph"),
    ("/search", "Search"),
    ("/dreams", "Dreams"),
    ("/recall-log", "Recall log"),
    ("/health", "Health"),
)
SEARCH_LIMIT = 10  # hits on the page; "more" asks again for twice as many, up to the tool's 100
DREAMS_PER_PAGE = 10


def e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def t(value: Any, limit: int = 300) -> str:
    """A note's name, description or path for one line of the page: escaped, and its control and
    format characters (a right-to-left override posing as another name) written visibly."""
    return e(one_line(value, limit))


@dataclass
class Page:
    body: str
    status: int = HTTPStatus.OK
    content_type: str = "text/html; charset=utf-8"


def layout(app: ViewApp, title: str, content: str, active: str = "", notice: str = "") -> Page:
    nav = "".join(f'<a href="{href}"{" class=active" if href == active else ""}>{e(label)}</a>' for href, label in NAV)
    mode = '<span class="badge ro">read-only</span>' if app.read_only else ""
    flash = f'<p class="notice">{e(notice)}</p>' if notice else ""
    return Page(
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f'<title>{e(title)} · reme memory</title><link rel=stylesheet href="/static/app.css">'
        '<script src="/static/app.js" defer></script></head><body>'
        f'<header><a class=brand href="/timeline">reme memory</a><nav>{nav}</nav>{mode}'
        f'<span class=ws title="workspace">{e(app.ctx.workspace.root)}</span></header>'
        f"<main>{flash}{content}</main></body></html>"
    )


def error_page(app: ViewApp, message: str) -> Page:
    return layout(
        app, "Refused", f'<h1>Not done</h1><p class="error">{e(message)}</p><p><a href="/timeline">timeline</a></p>'
    )


def csrf_field(app: ViewApp) -> str:
    return f'<input type=hidden name=csrf value="{e(app.csrf)}">'


def action_form(app: ViewApp, action: str, fields: dict[str, str], label: str, confirm: str = "") -> str:
    """A POST button (hidden in --read-only mode); ``confirm``: the question app.js asks first."""
    if app.read_only:
        return ""
    hidden = "".join(f'<input type=hidden name="{e(k)}" value="{e(v)}">' for k, v in fields.items())
    ask = f' data-confirm="{e(confirm)}"' if confirm else ""
    return f'<form method=post action="{e(action)}" class=inline{ask}>{csrf_field(app)}{hidden}<button>{e(label)}</button></form>'


def indexing_note(app: ViewApp) -> str:
    """While the index takes in a burst of files in the background, the listings show what it has so far."""
    progress = app.ctx.index.indexing()
    if not progress:
        return ""
    return f"<p class=warn>the index is taking in files ({progress[0]:,} of {progress[1]:,}): reload for the rest</p>"


def link_to(snap: data.Snapshot, path: str) -> str:
    row = snap.files.get(path)
    name = (row.name if row and row.name else path.rsplit("/", 1)[-1]) if row else path
    return f'<a href="{e(note_href(path))}" title="{t(path)}">{t(name)}</a>'


# ---- routing -----------------------------------------------------------------------------------------------
def get(app: ViewApp, path: str, query: dict[str, str]) -> Page:
    if path in ("/", "/timeline"):
        return timeline(app, query)
    if path.startswith("/day/"):
        return day_page(app, path[len("/day/") :], query)
    routes = {
        "/note": note_page,
        "/raw": raw_page,
        "/edit": edit_page,
        "/graph": graph_page,
        "/graph.json": graph_json,
        "/search": search_page,
        "/dreams": dreams_page,
        "/recall-log": recall_log_page,
        "/health": health_page,
        "/forget": forget_page,
    }
    handler = routes.get(path)
    if handler is None:
        return dataclasses.replace(layout(app, "Not found", "<h1>Not found</h1>"), status=HTTPStatus.NOT_FOUND)
    return handler(app, query)


def post(app: ViewApp, path: str, form: dict[str, str]) -> str:
    """Do the change; the address to show next."""
    actions = {"/edit": save_edit, "/pin": pin, "/dreams/undo": undo_dream, "/forget": forget}
    action = actions.get(path)
    if action is None:
        raise NotFoundError(f"no action {path}")
    return action(app, form)


# ---- timeline ----------------------------------------------------------------------------------------------
def timeline(app: ViewApp, query: dict[str, str]) -> Page:
    snap = app.catalog()
    project = query.get("project") or None
    all_days = data.days(snap, project)
    page = max(0, _int(query.get("page"), 0))
    shown = all_days[page * data.DAYS_PER_PAGE : (page + 1) * data.DAYS_PER_PAGE]
    options = "".join(
        f'<option value="{e(p)}"{" selected" if p == project else ""}>{e(p)}</option>' for p in data.projects(snap)
    )
    parts = [
        "<h1>Timeline</h1>",
        indexing_note(app),
        '<form class=filters method=get action="/timeline"><label>project <select name=project>'
        f'<option value="">all</option>{options}</select></label><button>show</button></form>',
    ]
    if not shown:
        parts.append("<p>No daily cards yet: they are written after each Claude Code session.</p>")
    for day in shown:
        count = sum(len(c) for c in day.cards.values())
        parts.append(
            f'<section class=day><h2><a href="/day/{e(day.date)}">{e(day.date)}</a> '
            f"<small>{count} card{'s' if count != 1 else ''}</small></h2>"
        )
        for name in sorted(day.cards, key=lambda n: (n == "", n)):
            parts.append(f"<h3 class=project>{e(name or 'general (no project)')}</h3><ul class=cards>")
            parts += [_card_item(snap, row) for row in sorted(day.cards[name], key=lambda r: r.path)]
            parts.append("</ul>")
        parts.append("</section>")
    nav = []
    keep = {"project": project} if project else {}
    if page > 0:
        nav.append(f'<a href="/timeline?{urlencode({**keep, "page": page - 1})}">newer</a>')
    if (page + 1) * data.DAYS_PER_PAGE < len(all_days):
        nav.append(f'<a href="/timeline?{urlencode({**keep, "page": page + 1})}">older</a>')
    parts.append(f"<p class=pager>{' · '.join(nav)}</p>")
    return layout(app, "Timeline", "".join(parts), "/timeline")


def _card_item(snap: data.Snapshot, row: data.FileRow) -> str:
    session = data.session_of(row)
    src = ""
    if session:
        target = snap.resolve(session) if "/" in session or session.endswith(".jsonl") else None
        label = "session " + session.rsplit("/", 1)[-1].removesuffix(".jsonl")
        src = (
            f' <span class=session>from <a href="{e(note_href(target))}">{t(label)}</a></span>'
            if target
            else f" <span class=session>from {t(label)}</span>"
        )
    return f"<li>{link_to(snap, row.path)}{_labels(row.meta)} <span class=desc>{t(row.description)}</span>{src}</li>"


def day_page(app: ViewApp, date: str, query: dict[str, str]) -> Page:
    date = validate_date(date)
    snap = app.catalog()
    day = next((d for d in data.days(snap) if d.date == date), None)
    parts = [f"<h1>{e(date)}</h1>"]
    if day is None:
        parts.append("<p>No cards on this day.</p>")
    else:
        if day.page:
            parts.append(f"<p>day page: {link_to(snap, day.page.path)}</p>")
        for name in sorted(day.cards, key=lambda n: (n == "", n)):
            parts.append(f"<h2 class=project>{e(name or 'general (no project)')}</h2><ul class=cards>")
            parts += [_card_item(snap, row) for row in sorted(day.cards[name], key=lambda r: r.path)]
            parts.append("</ul>")
    return layout(app, date, "".join(parts), "/timeline")


# ---- a note ------------------------------------------------------------------------------------------------
def _team_prefix() -> str:
    from ...tools.recall_scope import TEAM_PREFIX

    return TEAM_PREFIX


def note_context(app: ViewApp, path: str) -> tuple[Context, str, bool]:
    """(the Context the note lives in, its path there, whether it is team memory). A ``.reme/`` path is
    the team memory of the repository the viewer was started in."""
    prefix = _team_prefix()
    if not path.startswith(prefix):
        return app.ctx, path, False
    from ...tools.recall_scope import team_context

    team, warning = team_context(app.ctx)
    if team is None:
        raise NotFoundError(warning or "no team memory (.reme/) in the repository the viewer was started in")
    return team, path[len(prefix) :], True


def read_note(app: ViewApp, path: str) -> tuple[Context, str, str, bool]:
    """(Context, normalized path, text, team?) of a note the read policy allows."""
    if not path:
        raise InvalidInputError("which note? give ?path=daily/... or digest/...")
    ctx, rel, team = note_context(app, path)
    rel = ctx.notes.readable_path(rel)
    raw = ctx.workspace.read_bytes(rel)
    return ctx, rel, raw.decode("utf-8", "replace"), team


def _labels(meta: dict[str, Any], team: bool = False) -> str:
    out = []
    if meta.get("pinned") is True:
        out.append('<span class="badge pinned">pinned</span>')
    if meta.get("stale"):
        why = meta.get("stale") if isinstance(meta.get("stale"), str) else ""
        out.append(f'<span class="badge stale" title="{e(why)}">stale</span>')
    if meta.get("superseded_by") or meta.get("superseded"):
        out.append(f'<span class="badge superseded" title="{e(meta.get("superseded_by") or "")}">superseded</span>')
    if team:
        out.append(f'<span class="badge team">{e(TEAM_LABEL)}</span>')
    return (" " + "".join(out)) if out else ""


def note_page(app: ViewApp, query: dict[str, str]) -> Page:
    path = query.get("path", "")
    ctx, rel, text, team = read_note(app, path)
    shown_path = (_team_prefix() + rel) if team else rel
    note = parse_note(text)
    snap = app.catalog()
    if team:
        team_snap = data.read_snapshot(ctx)

        def resolve(target: str) -> str | None:
            found = team_snap.resolve(target)
            return _team_prefix() + found if found else None

        describe = lambda p: team_snap.describe(p[len(_team_prefix()) :])  # noqa: E731
    else:
        resolve, describe = snap.resolve, snap.describe
    body_html = render_markdown(note.body, resolve, describe)
    q = quote(shown_path, safe="/")
    actions = [f'<a class=button href="/raw?path={e(q)}">raw file</a>']
    if not team and not app.read_only:
        actions.append(f'<a class=button href="/edit?path={e(q)}">edit</a>')
        pinned = note.meta.get("pinned") is True
        actions.append(
            action_form(app, "/pin", {"path": rel, "pinned": "0" if pinned else "1"}, "unpin" if pinned else "pin")
        )
        actions.append(f'<a class=button href="/forget?{e(urlencode({"what": rel}))}">forget…</a>')
    fm = ""
    if note.meta:
        rows = "".join(f"<tr><th>{e(k)}</th><td>{e(_plain(v))}</td></tr>" for k, v in note.meta.items())
        fm = f'<table class=frontmatter aria-label="frontmatter">{rows}</table>'
    elif note.error:
        fm = f'<p class="warn">frontmatter not read: {e(note.error)}</p>'
    sources = _sources_box(text, resolve, describe)
    backlinks = "" if team else _backlinks_box(ctx, snap, rel)
    return layout(
        app,
        note.name or rel,
        f"<h1>{t(note.name or rel)}{_labels(note.meta, team)}</h1>"
        f"<p class=path>{e(shown_path)}</p><div class=actions>{''.join(actions)}</div>"
        f"{fm}<div class=columns><article class=markdown>{body_html}</article>"
        f"<aside>{sources}{backlinks}</aside></div>",
        notice=query.get("done", ""),
    )


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _sources_box(text: str, resolve: Any, describe: Any) -> str:
    section = sources_section(text)
    if section is None:
        return ""
    items = []
    for link in parse_links(section):
        path = resolve(link.target)
        items.append(
            f'<li><a href="{e(note_href(path))}">{t(describe(path))}</a></li>'
            if path
            else f"<li class=missing>{e(link.target)} (not found)</li>"
        )
    return f"<section class=box><h2>Sources</h2><ul>{''.join(items) or '<li>none linked</li>'}</ul></section>"


def _backlinks_box(ctx: Context, snap: data.Snapshot, rel: str) -> str:
    links = ctx.index.inbound_links(rel)
    seen: dict[str, list[int]] = {}
    for link in links:
        seen.setdefault(link.source, []).append(link.line)
    items = "".join(
        f"<li>{link_to(snap, src)} <small>line {', '.join(map(str, lines[:3]))}</small></li>"
        for src, lines in sorted(seen.items())
    )
    return (
        f'<section class="box backlinks"><h2>Backlinks ({len(seen)})</h2><ul>{items or "<li>none</li>"}</ul></section>'
    )


def raw_page(app: ViewApp, query: dict[str, str]) -> Page:
    _ctx, _rel, text, _team = read_note(app, query.get("path", ""))
    return Page(text, content_type="text/plain; charset=utf-8")


# ---- edit and pin (the note service) ------------------------------------------------------------------
def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def edit_page(app: ViewApp, query: dict[str, str]) -> Page:
    ctx, rel, text, team = read_note(app, query.get("path", ""))
    if team or app.read_only:
        raise ConflictError("this note cannot be edited here (team memory, or --read-only)")
    ctx.notes.content_path(rel)  # the write policy says why not before the user types
    return layout(
        app,
        f"edit {rel}",
        f"<h1>Edit {e(rel)}</h1><form method=post action=/edit class=editor>{csrf_field(app)}"
        f'<input type=hidden name=path value="{e(rel)}"><input type=hidden name=base value="{text_sha(text)}">'
        f'<textarea name=text spellcheck=false aria-label="note text">{e(text)}</textarea>'
        f'<p><button>save</button> <a href="{e(note_href(rel))}">cancel</a></p></form>',
    )


def save_edit(app: ViewApp, form: dict[str, str]) -> str:
    rel, base, new = form.get("path", ""), form.get("base", ""), form.get("text", "")

    def change(old: str | None) -> str:
        if old is None:
            raise NotFoundError(f"{rel} no longer exists")
        if text_sha(old) != base:
            raise ConflictError(f"{rel} changed since you opened it; nothing saved: reopen the editor and edit again")
        return new if "\r\n" in old else new.replace("\r\n", "\n")  # a browser sends CRLF

    app.ctx.notes.update(rel, change, full_write=True)
    return note_href(rel) + "&" + urlencode({"done": "saved"})


def pin(app: ViewApp, form: dict[str, str]) -> str:
    rel = form.get("path", "")
    if form.get("pinned") == "1":
        app.ctx.notes.update_frontmatter(rel, {"pinned": True})
    else:
        app.ctx.notes.update_frontmatter(rel, {}, delete=["pinned"])
    return note_href(rel) + "&" + urlencode({"done": "pinned" if form.get("pinned") == "1" else "unpinned"})


# ---- forget (memory/forget.py: the plan first, as the CLI shows it, then the change on confirmation) ----
def forget_page(app: ViewApp, query: dict[str, str]) -> Page:
    from ...memory.forget import plan_forget

    what = query.get("what", "").strip()
    parts = [
        "<h1>Forget</h1><p>A text, a digest node's name or a note path, removed from every place the workspace "
        "keeps it (notes, session copies, logs, the index). What would change is shown first.</p>"
        f'<form method=get action=/forget class=filters><input name=what value="{e(what)}" '
        'placeholder="a text, a node name or a note path"><button>show what it would change</button></form>'
    ]
    if what:
        plan = plan_forget(app.ctx, what)
        parts.append(f"<pre class=plan>{e(plan.preview())}</pre>")
        if plan.places or plan.commits:
            parts.append(
                action_form(
                    app,
                    "/forget",
                    {"what": what},
                    "forget it in every place above",
                    "Forget it everywhere? This cannot be undone.",
                )
            )
    return layout(app, "Forget", "".join(parts), notice=query.get("done", ""))


def forget(app: ViewApp, form: dict[str, str]) -> str:
    from ...memory.forget import forget as run_forget
    from ...memory.forget import plan_forget

    what = form.get("what", "").strip()
    plan = plan_forget(app.ctx, what)  # again: what the page showed may have changed since
    if not (plan.places or plan.commits):
        raise NotFoundError(f"{what}: found nowhere in the workspace (nothing written)")
    result = run_forget(app.ctx, plan)
    return "/forget?" + urlencode({"done": result.text()})


# ---- graph ---------------------------------------------------------------------------------------------------
GRAPH_LAYERS = ("personal", "procedure", "wiki", "daily")


def graph_page(app: ViewApp, query: dict[str, str]) -> Page:
    snap = app.catalog()
    chosen = set(query.get("layers", "personal,procedure,wiki").split(",")) & set(GRAPH_LAYERS)
    boxes = "".join(
        f'<label><input type=checkbox name=layer value="{n}"{" checked" if n in chosen else ""}> {n if n != "daily" else "daily cards"}</label>'
        for n in GRAPH_LAYERS
    )
    options = "".join(
        f'<option value="{e(p)}"{" selected" if p == query.get("project") else ""}>{e(p)}</option>'
        for p in data.projects(snap)
    )
    return layout(
        app,
        "Graph",
        "<h1>Graph</h1>"
        + indexing_note(app)
        + f'<form id=graph-filters class=filters>{boxes}<label>project <select name=project><option value="">all</option>{options}</select></label>'
        f'<label>from <input type=date name=start value="{e(query.get("start", ""))}"></label>'
        f'<label>to <input type=date name=end value="{e(query.get("end", ""))}"></label><button>show</button></form>'
        "<p id=graph-info class=info>drawing…</p>"
        "<div id=graph-wrap><canvas id=graph data-state=loading></canvas><div id=graph-tip hidden></div></div>"
        "<p class=hint>drag to pan, wheel to zoom, click a node to open it</p>"
        '<script src="/static/graph.js" defer></script>',
        "/graph",
    )


def graph_json(app: ViewApp, query: dict[str, str]) -> Page:
    snap = app.catalog()
    layers = set(query.get("layers", "personal,procedure,wiki").split(",")) & set(GRAPH_LAYERS)
    project, start, end = query.get("project") or None, query.get("start") or None, query.get("end") or None
    body = snap.memo(
        ("graph", tuple(sorted(layers)), project, start, end),
        lambda: json.dumps(data.graph(snap, layers=layers, project=project, start=start, end=end), ensure_ascii=False),
    )
    return Page(body, content_type="application/json; charset=utf-8")


# ---- search ------------------------------------------------------------------------------------------------
def search_page(app: ViewApp, query: dict[str, str]) -> Page:
    q = query.get("q", "").strip()
    prompt = query.get("prompt", "").strip()
    snap = app.catalog()
    options = "".join(
        f'<option value="{e(p)}"{" selected" if p == query.get("project") else ""}>{e(p)}</option>'
        for p in ["all", *data.projects(snap)]
    )
    parts = [
        "<h1>Search</h1>",
        f'<form method=get action=/search class=filters><input type=search name=q value="{e(q)}" placeholder="words, a name, a question" autofocus>'
        f'<label>project <select name=project><option value="">current first</option>{options}</select></label>'
        f'<label>from <input type=date name=start value="{e(query.get("start", ""))}"></label>'
        f'<label>to <input type=date name=end value="{e(query.get("end", ""))}"></label>'
        f'<label>folder <input name=folder value="{e(query.get("folder", ""))}" placeholder="digest"></label>'
        "<button>search</button></form>",
    ]
    if q:
        parts.append(_search_results(app, snap, q, query))
    parts.append(
        "<h2>What would be recalled for this prompt</h2><form method=get action=/search class=filters>"
        f'<input name=prompt value="{e(prompt)}" placeholder="a prompt as you would type it"><button>show</button></form>'
    )
    if prompt:
        parts.append(_prompt_recall(app, prompt))
    return layout(app, "Search", "".join(parts), "/search")


def _search_results(app: ViewApp, snap: data.Snapshot, q: str, query: dict[str, str]) -> str:
    from ...tools import all_tools

    limit = min(100, max(1, _int(query.get("limit"), SEARCH_LIMIT)))
    arguments = {"query": q, "limit": limit}
    for key, name in (("project", "project"), ("start", "start_date"), ("end", "end_date"), ("folder", "folder")):
        if query.get(key):
            arguments[name] = query[key]
    result = all_tools()["search"].run(app.ctx, arguments)
    counts = ", ".join(f"{k} {v}" for k, v in result.counts.items())
    out = [f"<p class=info>{len(result.results)} hits ({e(counts)})</p>"]
    out += [f"<p class=warn>{e(w)}</p>" for w in result.warnings]
    out.append("<ol class=hits>")
    for h in result.results:
        team = h.workspace != "personal"
        path = (_team_prefix() + h.path) if team else h.path
        row = None if team else snap.files.get(h.path)
        name = row.name if row and row.name else h.path
        date = row.date if row else None
        why = (
            f'<span class=why title="fused score: keyword and vector ranks, plus the note\'s own rank">'
            f"score {h.score:.4f}</span> <span class=why>keyword {h.keyword:.4f}</span> "
            f"<span class=why>vector {h.vector:.4f}</span> "
            f"<span class=why>project {e(', '.join(h.project) or 'general')}</span>"
            + (f" <span class=why>date {e(date)}</span>" if date else "")
        )
        out.append(
            f'<li class=hit><a href="{e(note_href(path))}">{t(name)}</a>'
            f"{_labels(row.meta if row else {}, team)} <small class=path>{e(path)}:{h.start_line}-{h.end_line}</small>"
            f"<div class=whyline>why: {why}</div><pre class=snippet>{e(h.text.strip()[:600])}</pre></li>"
        )
    out.append("</ol>")
    if len(result.results) == limit and limit < 100:
        more = {k: v for k, v in query.items() if k in ("q", "project", "start", "end", "folder")}
        out.append(
            f'<p class=pager><a href="/search?{e(urlencode({**more, "limit": min(100, 2 * limit)}))}">more</a></p>'
        )
    return "".join(out)


def _prompt_recall(app: ViewApp, prompt: str) -> str:
    """What the UserPromptSubmit hook would inject for ``prompt`` (surfaces/recall.py, computed in this
    process, nothing recorded), with each candidate's evidence against the bar."""
    import os

    from ..recall import recall_for_prompt

    d = recall_for_prompt(app.ctx.workspace, app.ctx.config, prompt, os.getcwd(), None, record=False, ctx=app.ctx)
    shown = d.as_json()
    bar = shown.get("bar") or {}
    rows = "".join(
        f"<tr><td>{'injected' if c in d.injected else ''}</td><td>{c.relevance:.2f}</td><td>{c.keyword:.2f}</td>"
        f'<td>{c.vector:.2f}</td><td>{c.tier:g}</td><td><a href="{e(note_href(c.shown))}">{e(c.shown)}</a></td></tr>'
        for c in d.considered[:8]
    )
    out = [
        f"<p class=info>bar: keyword share ≥ {e(bar.get('keyword'))} or vector cosine ≥ {e(bar.get('vector'))}; "
        f"evidence from {e(d.source or 'nothing')} in {d.ms:.0f} ms</p>"
    ]
    out += [f"<p class=warn>{e(n)}</p>" for n in d.notes]
    if rows:
        out.append(
            "<table class=recall><tr><th></th><th>relevance</th><th>keyword</th><th>vector</th><th>tier</th>"
            f"<th>note</th></tr>{rows}</table>"
        )
    if d.injected:
        out.append(f"<p>would inject {len(d.text)} characters:</p><pre class=snippet>{e(d.text)}</pre>")
    else:
        out.append(f"<p class=abstain>would inject nothing: {e(d.reason)}</p>")
    return "<section class=box id=prompt-recall>" + "".join(out) + "</section>"


# ---- dreams ---------------------------------------------------------------------------------------------------
def dreams_page(app: ViewApp, query: dict[str, str]) -> Page:
    from ...memory.gitlog import list_runs

    runs = list_runs(app.ctx.workspace)
    undoable = [r for r in runs if r.get("changes") and not r.get("undone")]
    last = undoable[-1]["run"] if undoable else None
    parts = ["<h1>Dreams</h1>"]
    if not runs:
        parts.append("<p>No dream has run yet (<code>reme-cc dream</code>, or the automatic one once a day).</p>")
    page = max(0, _int(query.get("page"), 0))
    newest_first = list(reversed(runs))
    for run in newest_first[page * DREAMS_PER_PAGE : (page + 1) * DREAMS_PER_PAGE]:  # a diff is a git call
        summary = run.get("summary") or {}
        head = (
            f"{summary.get('created', 0)} created, {summary.get('corroborated', 0)} corroborated, "
            f"{summary.get('refined', 0)} refined, {summary.get('corrected', 0)} corrected, {summary.get('failed', 0)} failed"
        )
        state = f' <span class="badge undone">undone {e(run["undone"])}</span>' if run.get("undone") else ""
        parts.append(
            f'<section class=dream id="run-{e(run["run"])}"><h2>{e(run.get("date", ""))} · run {e(run["run"])}{state}</h2>'
            f"<p>{e(head)}; finished {e(run.get('finished', ''))}"
            + (f"; commit <code>{e(str(run['commit'])[:10])}</code>" if run.get("commit") else "")
            + "</p><ul>"
        )
        nodes = {n.get("path"): n.get("action", "") for n in summary.get("nodes") or [] if isinstance(n, dict)}
        for ch in run.get("changes") or []:
            action = nodes.get(ch["path"]) or ("created" if ch.get("before_sha") is None else "changed")
            parts.append(f"<li><span class=action>{e(action)}</span> {link_to(app.catalog(), ch['path'])}</li>")
        parts.append("</ul>")
        if run["run"] == last:
            parts.append(
                action_form(
                    app,
                    "/dreams/undo",
                    {"run": run["run"]},
                    "undo this dream",
                    "Undo the last dream? Its files go back to what they were before it.",
                )
            )
        if run.get("changes"):
            parts.append(f"<details><summary>diff</summary>{_diff_html(data.dream_diff(app.ctx, run))}</details>")
        parts.append("</section>")
    nav = [f'<a href="/dreams?page={page - 1}">newer</a>'] if page > 0 else []
    if (page + 1) * DREAMS_PER_PAGE < len(runs):
        nav.append(f'<a href="/dreams?page={page + 1}">older</a>')
    parts.append(f"<p class=pager>{' · '.join(nav)}</p>")
    return layout(app, "Dreams", "".join(parts), "/dreams", notice=query.get("done", ""))


def _diff_html(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        kind = (
            "add"
            if line.startswith("+") and not line.startswith("+++")
            else "del"
            if line.startswith("-") and not line.startswith("---")
            else "ctx"
        )
        lines.append(f'<span class="{kind}">{e(line)}</span>')
    return f"<pre class=diff>{''.join(lines)}</pre>"  # each line a block: no newline between them


def undo_dream(app: ViewApp, form: dict[str, str]) -> str:
    from ...memory.dream import undo
    from ...memory.gitlog import list_runs

    undoable = [r for r in list_runs(app.ctx.workspace) if r.get("changes") and not r.get("undone")]
    if not undoable or undoable[-1]["run"] != form.get("run"):
        raise ConflictError("that dream is no longer the last one to undo; reload the Dreams page")
    run = undo(app.ctx)
    return "/dreams?" + urlencode({"done": f"undid dream {run['run']}: {len(run.get('changes') or [])} files restored"})


# ---- recall log and health --------------------------------------------------------------------------------
def recall_log_page(app: ViewApp, query: dict[str, str]) -> Page:
    entries = data.recall_entries(app.ctx)
    parts = ["<h1>Recall log</h1>"]
    if entries is None:
        parts.append(f"<p>No recall log yet ({e(data.RECALL_LOG)}): it is written when a prompt's recall runs.</p>")
    else:
        parts.append(f"<p class=info>newest first, {len(entries)} entries</p><ol class=log>")
        parts += [_recall_entry(entry) for entry in entries]
        parts.append("</ol>")
    return layout(app, "Recall log", "".join(parts), "/recall-log")


def _recall_entry(entry: dict[str, Any]) -> str:
    """One prompt's line of the log (memory/prompt_recall.log): what was injected and why, or why nothing
    was, with the best candidates' evidence against the bar."""
    head = " · ".join(t(entry[k], 200) for k in ("t", "session", "prompt") if entry.get(k))
    injected = [c for c in entry.get("injected") or [] if isinstance(c, dict)]
    considered = [c for c in entry.get("considered") or [] if isinstance(c, dict)][:3]
    outcome = (
        f"<p>injected:</p><ul class=injected>{''.join(_evidence(c) for c in injected)}</ul>"
        if injected
        else f"<p class=abstain>nothing injected: {e(entry.get('abstained') or entry.get('text') or '')}</p>"
        + (f"<ul class=considered>{''.join(_evidence(c) for c in considered)}</ul>" if considered else "")
    )
    return (
        f"<li><div class=loghead>{head or t(entry.get('text', ''))}</div>{outcome}"
        f"<details><summary>details</summary><pre class=json>{e(json.dumps(entry, ensure_ascii=False, indent=1))}</pre>"
        "</details></li>"
    )


def _evidence(c: dict[str, Any]) -> str:
    path = str(c.get("path", ""))
    return (
        f'<li><a href="{e(note_href(path))}">{t(path)}</a> '
        + " ".join(
            f"<span class=why>{k} {e(c.get(k))}</span>" for k in ("relevance", "keyword", "vector", "tier") if k in c
        )
        + "</li>"
    )


def health_page(app: ViewApp, query: dict[str, str]) -> Page:
    from ...tools import all_tools

    result = all_tools()["status"].run(app.ctx, {})
    st = result.status
    usage = st.get("usage") or {}
    rows = "".join(
        f"<tr><th>{e(agent)}</th><td>{e(u.get('runs'))} / {e(u.get('max_runs'))} runs</td>"
        f"<td>{e(u.get('tokens'))} / {e(u.get('max_tokens'))} tokens</td><td>{'capped' if u.get('capped') else ''}</td></tr>"
        for agent, u in usage.items()
        if isinstance(u, dict)
    )
    failures = "".join(
        f"<li class=error>{e(f.get('line') or f.get('agent'))}<br><b>fix:</b> {e(f.get('fix', ''))}</li>"
        for f in st.get("failures") or []
    )
    project = st.get("project") or {}
    trusted = "".join(f"<li>{e(r)}</li>" for r in project.get("trusted_repositories") or [])
    embedding = st.get("embedding") or {}
    worker = embedding.get("worker") or {}
    content = (
        "<h1>Health</h1>"
        f"<section class=box><h2>Vectors</h2><p>{e(st.get('embedding_summary') or _no_vectors(st))}</p>"
        f'<meter min=0 max=100 value="{e(embedding.get("percent") or 0)}"></meter></section>'
        f"<section class=box><h2>Background work</h2><p>embedding worker: {'running (pid ' + e(worker.get('pid')) + ')' if worker.get('running') else 'not running'}; "
        f"freshness: {e((st.get('freshness') or {}).get('mode', ''))}; last sync {e(st.get('last_sync', ''))}</p></section>"
        f"<section class=box><h2>Usage today ({e(usage.get('date', ''))})</h2><table>{rows}</table></section>"
        f"<section class=box><h2>Failures</h2><ul>{failures or '<li>none: the recorder and the dream work</li>'}</ul></section>"
        f"<section class=box><h2>Trusted team repositories</h2><ul>{trusted or '<li>none</li>'}</ul></section>"
        f"<details><summary>full status</summary><pre>{e(result.text())}</pre></details>"
    )
    return layout(app, "Health", content, "/health")


def _no_vectors(st: dict[str, Any]) -> str:
    if st.get("embedding_error"):
        return f"no vectors: {st['embedding_error']}"
    return f"embedding backend {st.get('embedding_backend') or 'none'}: keyword search only"


def _int(value: str | None, default: int) -> int:
    try:
        return int(value or default)
    except ValueError:
        return default
