"""Dates in the query (issue 25, 2): a period the query names ranks the notes dated in it first — a soft
boost, not a filter — and the response says how the query was read; a query without a date ranks
exactly as with the rule off."""

from __future__ import annotations

import os
import re
import sys
from datetime import date, timedelta

from reme_cc.index.search import run_search
from reme_cc.tools import Context
from support.files_helpers import run
from support.mcp_stdio import McpProcess

TODAY = date.today()
LAST_WEEK = TODAY - timedelta(days=TODAY.weekday() + 5)  # Wednesday of last week


def deploy_notes(ws) -> dict[str, str]:
    """Four deploy-script changes at different dates, worded alike; the oldest matches the words best."""
    days = {
        "old": TODAY - timedelta(days=120),
        "last_week": LAST_WEEK,
        "month": TODAY - timedelta(days=45),
        "older": TODAY - timedelta(days=300),
    }
    texts = {
        "old": "Deploy script change: the deploy script now runs the database migrations before the deploy.",
        "last_week": "Deploy script change: added a canary step that sends 5% of traffic first.",
        "month": "Deploy script change: the deploy script posts to Slack on rollback.",
        "older": "Deploy script change: we changed the deploy script to pin the base image digest.",
    }
    paths = {}
    for key, day in days.items():
        paths[key] = f"daily/{day.isoformat()}/deploy-{key}.md"
        ws.write_text(paths[key], f"# Deploy script\n\n{texts[key]}\n")
    ws.write_text(
        "digest/wiki/cache-decision.md",  # dated by its frontmatter
        f"---\nname: 缓存决定\ndate: {LAST_WEEK.isoformat()}\n---\n# 缓存决定\n\n我们决定把购物车缓存去掉。\n",
    )
    ws.write_text(
        "digest/wiki/cache-older.md",
        "---\nname: 缓存决定（旧）\ndate: 2024-01-10\n---\n# 缓存决定\n\n我们决定缓存的 TTL 改成两分钟，缓存键加版本号。\n",
    )
    paths["cache"] = "digest/wiki/cache-decision.md"
    return paths


def test_last_week_brings_last_weeks_note_first(ws, idx):
    paths = deploy_notes(ws)
    idx.sync()
    query = "what did we change in the deploy script last week"
    before = run_search(idx, query, 4, dates=False)
    assert before.results[0].path != paths["last_week"]  # without the rule another change wins on words
    after = run_search(idx, query, 4)
    assert after.results[0].path == paths["last_week"]
    assert len(after.results) == 4  # a boost, not a filter: the other changes are still listed
    assert any(w.startswith("query dated ") and "from 'last week'" in w for w in after.warnings)


def test_chinese_period_and_a_frontmatter_date(ws, idx):
    paths = deploy_notes(ws)
    idx.sync()
    hits = run_search(idx, "上周我们决定了什么关于缓存的事", 3).results
    assert hits[0].path == paths["cache"]


def test_explicit_dates_or_the_setting_turn_it_off(ws, idx):
    paths = deploy_notes(ws)
    idx.sync()
    query = "what did we change in the deploy script last week"
    # an explicit range is the caller's reading: no period is read from the words
    explicit = run_search(idx, query, 4, start_date="2000-01-01", end_date=TODAY.isoformat())
    assert not any(w.startswith("query dated") for w in explicit.warnings)
    idx.config = idx.config.replace(search_dates=False)
    off = run_search(idx, query, 4)
    assert off.results[0].path != paths["last_week"]
    assert not any(w.startswith("query dated") for w in off.warnings)


def test_a_query_without_a_date_ranks_exactly_as_before(ws, idx):
    deploy_notes(ws)
    idx.sync()
    for query in ["deploy script canary", "python 3.11 deploy", "May I see the deploy script", "缓存决定"]:
        on = run_search(idx, query, 5)
        off = run_search(idx, query, 5, dates=False)
        assert [(h.path, h.score) for h in on.results] == [(h.path, h.score) for h in off.results]
        assert on.warnings == off.warnings


def test_a_period_with_no_matching_words_lists_its_notes(ws, idx):
    paths = deploy_notes(ws)
    idx.sync()
    yesterday = LAST_WEEK + timedelta(days=1)
    hits = run_search(idx, "what did I do yesterday", 3, today=yesterday).results
    assert {h.path for h in hits[:2]} == {paths["last_week"], paths["cache"]}  # both notes of that day


def test_through_the_search_tool_and_the_mcp_server(ws, idx):
    paths = deploy_notes(ws)
    idx.sync()
    res = run(Context(ws, idx.config, idx), "search", query="what did we change in the deploy script last week")
    assert res.results[0].path == paths["last_week"]
    assert re.search(r"^note: query dated \S+ from 'last week'", res.text(), re.M)
    env = {**os.environ, "REME_EMBEDDING": "none", "REME_WORKSPACE": str(ws.root)}
    with McpProcess([sys.executable, "-m", "reme_cc.surfaces.server"], env=env) as srv:
        srv.initialize()
        text = srv.text(srv.call_tool("search", {"query": "what did we change in the deploy script last week"}))
    assert re.findall(r"^========== (.+?):\d+-\d+ \[", text, re.M)[0] == paths["last_week"]
    assert "note: query dated " in text and "from 'last week'" in text


def test_a_period_keeps_the_searchs_filters(ws, idx):
    """The period's notes are boosted, and listed even when no word matches, only among the notes the
    search's filters let through: a tag filter keeps last week's untagged notes out."""
    ws.write_text(f"daily/{LAST_WEEK.isoformat()}/tagged.md", "---\ntags: [ops]\n---\n# Pager\n\nRotated the pager.\n")
    ws.write_text(f"daily/{LAST_WEEK.isoformat()}/untagged.md", "# Lunch\n\nTried the new noodle place.\n")
    ws.write_text("daily/2024-03-01/old-ops.md", "---\ntags: [ops]\n---\n# Old\n\nRenewed the certificates.\n")
    idx.sync()
    everything = [h.path for h in run_search(idx, "what did I do last week", 5).results]
    assert f"daily/{LAST_WEEK.isoformat()}/untagged.md" in everything  # listed though no word matches
    tagged = [h.path for h in run_search(idx, "what did I do last week", 5, tags=["ops"]).results]
    assert tagged and tagged[0] == f"daily/{LAST_WEEK.isoformat()}/tagged.md"
    assert f"daily/{LAST_WEEK.isoformat()}/untagged.md" not in tagged
