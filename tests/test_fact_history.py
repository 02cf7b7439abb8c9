"""Facts that change keep their history (issue 26, 2): a corrected statement is kept, dated, in the
node's History by the dream's note service; search shows the current statement first, labels the
superseded ones and answers ``as_of``; the dream records contradictions it cannot resolve instead of
picking one and ``status`` lists them. The last test is the lifecycle through the real Claude CLI
and the scripted model: supersession, abstention, persistence across restarts and re-indexing,
provenance."""

from __future__ import annotations

import asyncio
import json

import pytest

from reme_cc.base.config import Config
from reme_cc.base.errors import InvalidInputError
from reme_cc.memory import contradictions, dream, gitlog
from reme_cc.notes import history
from reme_cc.notes.frontmatter import parse_note
from reme_cc.tools import Context, all_tools

NODE = "digest/wiki/event-store.md"
OLD = (
    "---\nname: Event store\ndescription: where events are kept\n---\n"
    "The event store runs on Postgres 15.\n\nBackups run nightly.\n\n"
    "## Sources\n- Chosen in [[daily/2026-06-02/db.md]].\n"
)


def card(ws, rel: str, body: str) -> None:
    ws.write_text(rel, f"---\nname: {rel}\ndescription: card\n---\n{body}\n")


def dream_context(ctx, day: str = "2026-06-25") -> dream.DreamContext:
    """A dream's Context on this workspace: its note service (DreamContext.new_notes) is what the
    integrator's tools write through."""
    dctx = dream.DreamContext(ctx.workspace, ctx.config, recorder=gitlog.ChangeRecorder(ctx.workspace), day=day)
    dctx._index = ctx.index
    assert isinstance(dctx.notes, dream.HistoryKeepingNotes)
    return dctx


MOVE = "daily/2026-06-21/move.md"
UNIT = dream.Unit(1, "Event store", "wiki", "moved to SQLite", [MOVE])


def test_history_text_round_trip():
    new = OLD.replace("Postgres 15", "SQLite in WAL mode").replace(
        "[[daily/2026-06-02/db.md]].", "[[daily/2026-06-02/db.md]].\n- Moved in [[daily/2026-06-21/move.md]]."
    )
    kept = history.keep_history(OLD, new, until="2026-06-21", evidence=["daily/2026-06-21/move.md"])
    assert "SQLite in WAL mode" in history.statement(kept) and "Postgres" not in history.statement(kept)
    (past,) = history.history(kept)
    assert (past.since, past.until, past.statement) == (
        "2026-06-02",
        "2026-06-21",
        "The event store runs on Postgres 15.",
    )
    assert "[[daily/2026-06-21/move.md]]" in kept.split("## History")[1]  # what replaced it, linked
    assert history.statement_as_of(kept, "2026-06-10") == "The event store runs on Postgres 15."
    assert "SQLite" in history.statement_as_of(kept, "2026-06-21")
    assert history.statement_as_of(kept, "2026-05-01") is None  # nothing known yet
    # an addition or a new source replaces nothing: no History entry
    assert history.keep_history(OLD, OLD.replace("nightly.", "nightly, kept 30 days."), until="x", evidence=[]) == (
        OLD.replace("nightly.", "nightly, kept 30 days.")
    )
    assert history.note_status(kept).state == "current"
    gone = "---\nname: a\nsuperseded_by: \"[[digest/wiki/b.md]]\"\nvalid_until: '2026-06-21'\n---\nx\n"
    st = history.note_status(gone, today="2026-06-22")
    assert (st.state, st.superseded_by, st.date) == ("superseded", "digest/wiki/b.md", "2026-06-21")
    assert history.statement_as_of(gone, "2026-06-20") == "x" and history.statement_as_of(gone, "2026-06-21") is None
    stale = "---\nname: a\nstale: src/x.py no longer exists\nstale_since: 2026-06-20\n---\nx\n"
    assert history.note_status(stale).label() == "stale since 2026-06-20: src/x.py no longer exists"


def test_dream_write_path_keeps_the_replaced_statement(ctx):
    ws = ctx.workspace
    ws.write_text(NODE, OLD)
    card(ws, MOVE, "We moved the event store from Postgres to SQLite today.")
    dctx = dream_context(ctx)
    notes = dctx.notes
    # the integrator's edits: the claim first (no new source yet), then the source
    notes.replace_text(NODE, "runs on Postgres 15.", "runs on SQLite in WAL mode (moved from Postgres).")
    assert history.history(ws.read_bytes(NODE).decode())[0].until == "2026-06-25"  # the dream's day, for now
    notes.replace_text(
        NODE,
        "- Chosen in [[daily/2026-06-02/db.md]].\n",
        f"- Chosen in [[daily/2026-06-02/db.md]].\n- Moved in [[{MOVE}]].\n",
    )
    dream.settle_history(dctx, UNIT, NODE)  # the unit verified: its entries dated by its evidence
    text = ws.read_bytes(NODE).decode()
    meta = parse_note(text).meta
    assert str(meta["valid_from"]) == "2026-06-21"  # from the new evidence's day, not the dream's
    (past,) = history.history(text)
    assert past.statement == "The event store runs on Postgres 15." and (past.since, past.until) == (
        "2026-06-02",
        "2026-06-21",
    )
    assert f"evidence [[{MOVE}]]" in text.split("## History")[1]
    # a whole-file rewrite that drops the statement is kept the same way; History is never lost
    rewritten = text.split("## History")[0].replace("SQLite in WAL mode (moved from Postgres)", "DuckDB")
    notes.write_note(NODE, rewritten, {})
    after = ws.read_bytes(NODE).decode()
    assert [p.statement for p in history.history(after)] == [
        "The event store runs on Postgres 15.",
        "The event store runs on SQLite in WAL mode (moved from Postgres).",
    ]
    # a frontmatter change or a new source alone adds no entry
    notes.update_frontmatter(NODE, {"project": "app"})
    assert len(history.history(ws.read_bytes(NODE).decode())) == 2
    # outside digest/ (cards) and outside the dream (the user's own tools) nothing is added
    ctx.notes.replace_text(NODE, "DuckDB", "DuckDB 1.1")
    assert len(history.history(ws.read_bytes(NODE).decode())) == 2


def corrected_workspace(ctx) -> None:
    ws = ctx.workspace
    long = " ".join(f"Backup step {i} copies the WAL segment to the archive bucket." for i in range(30))
    ws.write_text(NODE, OLD.replace("Backups run nightly.", long))  # long enough for History to be its own chunk
    card(ws, "daily/2026-06-02/db.md", "Picked Postgres 15 for the event store.")
    card(ws, "daily/2026-06-21/move.md", "Moved the event store to SQLite.")
    card(ws, "daily/2026-06-24/later.md", "SQLite event store is fine.")
    dctx = dream_context(ctx)
    dctx.notes.replace_text(NODE, "runs on Postgres 15.", "runs on SQLite in WAL mode.")
    dctx.notes.replace_text(NODE, "[[daily/2026-06-02/db.md]].", f"[[daily/2026-06-02/db.md]], moved: [[{MOVE}]].")
    dream.settle_history(dctx, UNIT, NODE)
    ws.write_text(
        "digest/wiki/event-store-postgres-tuning.md",
        "---\nname: Postgres tuning for the event store\ndescription: old\nsuperseded_by: digest/wiki/event-store.md\n"
        "valid_until: '2026-06-21'\n---\nTune Postgres shared_buffers for the event store.\n\n"
        "## Sources\n- [[daily/2026-06-02/db.md]]\n",
    )
    ctx.index.sync()


def search(ctx, query: str, **kw):
    return all_tools()["search"].run(ctx, {"query": query, "limit": 10, "project": "all", **kw})


def test_search_labels_superseded_and_answers_as_of(ctx):
    corrected_workspace(ctx)
    res = search(ctx, "event store Postgres")
    digest = [h for h in res.results if h.path.startswith("digest/")]
    states = [(h.path, h.status) for h in digest]
    assert ("digest/wiki/event-store-postgres-tuning.md", "superseded") in states
    assert any(p == NODE and s == "superseded" for p, s in states)  # its History chunk
    first_superseded = next(i for i, h in enumerate(res.results) if h.status == "superseded")
    assert all(h.status != "superseded" for h in res.results[:first_superseded])
    assert all(h.status == "superseded" for h in res.results[first_superseded:])  # current first
    text = res.text()
    assert "status: superseded since 2026-06-21: replaced by digest/wiki/event-store.md" in text
    assert "status: an earlier statement, kept in the note's History" in text

    then = search(ctx, "event store", as_of="2026-06-10")
    by_path = {h.path: h for h in then.results}
    assert "Postgres 15" in by_path[NODE].text and by_path[NODE].status == "superseded"
    assert by_path[NODE].status_note == "superseded since 2026-06-21: what this note said on 2026-06-10"
    assert "digest/wiki/event-store-postgres-tuning.md" in by_path  # it held then
    assert by_path["digest/wiki/event-store-postgres-tuning.md"].status == "current"
    assert not any(p.startswith(("daily/2026-06-21", "daily/2026-06-24")) for p in by_path)  # written later
    now = search(ctx, "event store", as_of="2026-06-24")
    paths = [h.path for h in now.results]
    assert "digest/wiki/event-store-postgres-tuning.md" not in paths
    assert "SQLite" in next(h for h in now.results if h.path == NODE).text
    assert all(h.path not in {NODE} for h in search(ctx, "event store", as_of="2026-05-01").results)
    with pytest.raises(InvalidInputError, match="YYYY-MM-DD"):
        search(ctx, "event store", as_of="June 10")


def test_history_survives_restart_and_reindex(ctx, ws):
    corrected_workspace(ctx)
    before = ws.read_bytes(NODE)
    ctx.close()
    again = Context(ws, Config.load(ws.root))  # a new process's view
    try:
        all_tools()["reindex"].run(again, {})
        assert ws.read_bytes(NODE) == before
        res = search(again, "event store Postgres")
        assert any(h.path == NODE and h.status == "superseded" for h in res.results)
        then = search(again, "event store", as_of="2026-06-10")
        assert "Postgres 15" in next(h for h in then.results if h.path == NODE).text
    finally:
        again.close()


def test_conflict_is_recorded_not_picked_and_status_lists_it(ctx):
    ws = ctx.workspace
    ws.write_text(NODE, OLD)
    card(ws, "daily/2026-06-21/a.md", "Deploy with make ship.")
    unit = dream.Unit(1, "Deploy command", "procedure", "s", ["daily/2026-06-21/a.md"], "project", {"app": "/x"})
    dctx = dream.DreamContext(ws, ctx.config, recorder=gitlog.ChangeRecorder(ws), day="2026-06-21")
    bad = dream.verify_unit(
        dctx, unit, {"action": "CONFLICT", "path": NODE, "subject": "x", "values": ["a"]}, [], set()
    )
    assert not bad.ok and "two or more different values" in bad.error
    report = {"action": "CONFLICT", "path": NODE, "subject": "event store engine", "values": ["Postgres", "SQLite"]}
    out = dream.verify_unit(dctx, unit, report, [], set())
    assert out.ok and out.action == "CONFLICT" and out.conflict["values"] == ["Postgres", "SQLite"]
    assert ws.read_bytes(NODE).decode() == OLD  # nothing picked
    contradictions.save(ws, [dict(out.conflict, run="r1")])
    st = all_tools()["status"].run(ctx, {})
    assert st.status["contradictions"][0]["subject"] == "event store engine"
    assert (
        "contradiction (2026-06-21): event store engine = Postgres | SQLite — in digest/wiki/event-store.md"
        in st.text()
    )
    # the user settles it in the node: resolved, no longer listed
    ctx.notes.replace_text(NODE, "Postgres 15", "SQLite")
    assert all_tools()["status"].run(ctx, {}).status["contradictions"] == []
    assert json.loads(ws.read_bytes(contradictions.FILE))["contradictions"]  # the next dream prunes the file


# ---- the lifecycle: a real dream, the real CLI, the scripted model ------------------------------------
DEPLOY = "digest/procedure/deploy.md"
CARDS = {
    "daily/2026-06-02/db.md": "Picked Postgres 15 for the event store.",
    "daily/2026-06-02/deploy.md": "Deployed with make release.",
    MOVE: "Moved the event store from Postgres to SQLite (WAL) today; Postgres is gone.",
    "daily/2026-06-21/ship.md": "Deployed with make ship.",
    "daily/2026-06-21/release.md": "Deployed with make release, as always.",
}


def recorded(ws) -> None:
    """Cards as the recorder writes them: each leads back to its session copy."""
    for i, (rel, body) in enumerate(CARDS.items()):
        session = f"session/claude_code/s{i}.jsonl"
        ws.write_bytes(session, json.dumps({"type": "user", "message": {"content": body}}).encode() + b"\n")
        ws.write_text(rel, f"---\nname: {rel}\ndescription: card\nsource_conversation: '[[{session}]]'\n---\n{body}\n")
    ws.write_text(NODE, OLD)
    ws.write_text(
        DEPLOY,
        "---\nname: Deploy\ndescription: how to deploy\n---\nDeploy with `make release`.\n\n"
        "## Sources\n- [[daily/2026-06-02/deploy.md]]\n",
    )


def provenance(ws) -> list[str]:
    """Every digest statement, current or past, must lead to daily cards that lead to a session copy:
    the problems found."""
    from reme_cc.notes.evidence import link_targets, sources_section

    problems = []
    for p in sorted((ws.root / "digest").rglob("*.md")):
        rel = p.relative_to(ws.root).as_posix()
        text = p.read_text()
        cited = link_targets(sources_section(text) or "") | link_targets(text.partition("## History")[2])
        cards = [t for t in cited if t.startswith("daily/")]
        if not cards:
            problems.append(f"{rel}: no daily card")
        for c in cards:
            if not (ws.root / c).is_file():
                problems.append(f"{rel}: {c} missing")
                continue
            session = str(parse_note((ws.root / c).read_text()).meta.get("source_conversation", "")).strip("[]")
            if not session or not (ws.root / session).is_file():
                problems.append(f"{c}: no session copy")
    return problems


@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_lifecycle_supersession_abstention_restart_provenance(ctx, tmp_path, monkeypatch):
    from support.claude_cli import sdk_env
    from support.dream_script import T, extractor_turn, final, script_dream
    from support.fake_api import FakeAPI, text as say, tool_use

    ws = ctx.workspace
    recorded(ws)
    units = [
        {"name": "Event store", "bucket": "wiki", "summary": "now SQLite, was Postgres", "paths": [MOVE]},
        {
            "name": "Deploy command",
            "bucket": "procedure",
            "summary": "make ship or make release?",
            "paths": ["daily/2026-06-21/ship.md", "daily/2026-06-21/release.md"],
        },
    ]
    conflict = {
        "action": "CONFLICT",
        "path": DEPLOY,
        "subject": "the deploy command",
        "values": ["make ship", "make release"],
    }
    plans = {
        "Event store": [
            tool_use(T + "search", {"query": "event store", "folder": "digest"}),
            tool_use(
                T + "edit", {"path": NODE, "old_text": "runs on Postgres 15.", "new_text": "runs on SQLite (WAL)."}
            ),
            tool_use(
                T + "edit",
                {
                    "path": NODE,
                    "old_text": "[[daily/2026-06-02/db.md]].",
                    "new_text": f"[[daily/2026-06-02/db.md]].\n- Moved in [[{MOVE}]].",
                },
            ),
            final("CORRECT", NODE),
        ],
        "Deploy command": [
            tool_use(T + "read", {"path": DEPLOY}),
            say("Same day, two commands, nothing says which holds.\n" + json.dumps(conflict)),
        ],
    }
    with FakeAPI() as api:
        for k, v in sdk_env(api, tmp_path / "home").items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("REME_AGENT_RETRIES", "0")
        script_dream(api, extractions=[extractor_turn(units)], plans=plans)
        summary = asyncio.run(
            dream.run_dream(ctx, dream.DreamOptions(date="2026-06-21", resources=False, concurrency=2))
        )
    assert summary.error is None and (summary.corrected, summary.failed) == (1, 0), summary.text()

    # supersession: the old fact kept, dated, linked to what replaced it; the new one is the statement
    text = ws.read_bytes(NODE).decode()
    assert "SQLite (WAL)" in history.statement(text) and "Postgres 15" not in history.statement(text)
    (past,) = history.history(text)
    assert (past.since, past.until, past.statement) == (
        "2026-06-02",
        "2026-06-21",
        "The event store runs on Postgres 15.",
    )
    assert str(parse_note(text).meta["valid_from"]) == "2026-06-21"
    # abstention: the deploy node untouched, the contradiction recorded and listed, its cards checkpointed
    assert (
        "Deploy with `make release`." in ws.read_bytes(DEPLOY).decode()
        and "History" not in ws.read_bytes(DEPLOY).decode()
    )
    (c,) = summary.conflicts
    assert (c["subject"], c["values"], c["node"]) == ("the deploy command", ["make ship", "make release"], DEPLOY)
    assert "CONFLICT    the deploy command: make ship | make release" in summary.text()
    assert {"daily/2026-06-21/ship.md", "daily/2026-06-21/release.md"} <= set(dream.load_catalog(ws))
    assert "the deploy command = make ship | make release" in all_tools()["status"].run(ctx, {}).text()
    # provenance: every statement, current or past, leads to a daily card and its session
    assert provenance(ws) == []

    # persistence: a new process, the index rebuilt from the files
    ctx.close()
    again = Context(ws, Config.load(ws.root))
    try:
        all_tools()["reindex"].run(again, {})
        res = search(again, "event store Postgres")
        node_hits = [h for h in res.results if h.path == NODE]
        assert node_hits and node_hits[0].status == "current" and "SQLite" in node_hits[0].text
        then = search(again, "event store", as_of="2026-06-10")
        assert "Postgres 15" in next(h for h in then.results if h.path == NODE).text
        assert [x["subject"] for x in all_tools()["status"].run(again, {}).status["contradictions"]] == [
            "the deploy command"
        ]
    finally:
        again.close()
