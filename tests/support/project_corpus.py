"""A workspace of conflicting project facts plus general preferences (issue 14 item 3).

Two git repositories, ``alpha`` and ``beta``, each with one daily card per topic whose fact contradicts
the other's ("tests: `make check`" vs "tests: `pytest -x`"), and general preferences (digest nodes with
no project). ``measure`` asks every topic question from alpha's folder, beta's folder and an unrelated
folder and reports where each side's note lands. Used by tests/test_projects.py, the end-to-end test
and bench/projects.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# (question, alpha's fact, beta's fact): the question's words are in both cards, the facts differ
PAIRS = [
    ("run the unit tests", "run the unit tests with `make check`", "run the unit tests with `pytest -x`"),
    (
        "package manager for dependencies",
        "the package manager for dependencies is pnpm",
        "the package manager for dependencies is npm",
    ),
    ("code formatter", "the code formatter is black", "the code formatter is ruff format"),
    (
        "deploy to production",
        "deploy to production with `fly deploy`",
        "deploy to production with `kubectl apply -k prod`",
    ),
    ("database engine", "the database engine is PostgreSQL 16", "the database engine is SQLite"),
    ("default git branch", "the default git branch is main", "the default git branch is trunk"),
    (
        "continuous integration service",
        "continuous integration service: GitHub Actions",
        "continuous integration service: GitLab CI",
    ),
    ("python interpreter version", "python interpreter version 3.12", "python interpreter version 3.10"),
    (
        "linter configuration",
        "linter configuration: flake8 with max-line-length 100",
        "linter configuration: pylint with the google style",
    ),
    ("documentation generator", "documentation generator: mkdocs material", "documentation generator: sphinx"),
    ("local containers", "local containers run with docker compose", "local containers run with podman"),
    ("logging library", "the logging library is structlog", "the logging library is loguru"),
    ("web framework", "the web framework is FastAPI", "the web framework is Flask"),
    ("cut a release", "cut a release by pushing a vX.Y.Z tag", "cut a release with bump2version then twine upload"),
    (
        "commit message convention",
        "commit message convention: conventional commits",
        "commit message convention: gitmoji",
    ),
    ("cache server", "the cache server is Redis", "the cache server is memcached"),
    ("frontend bundler", "the frontend bundler is vite", "the frontend bundler is webpack"),
    ("static type checker", "the static type checker is mypy --strict", "the static type checker is pyright"),
    ("development server port", "the development server port is 8080", "the development server port is 3000"),
    ("secrets storage", "secrets storage: the 1Password CLI", "secrets storage: HashiCorp Vault"),
    ("schema migrations tool", "schema migrations tool: alembic", "schema migrations tool: django migrations"),
    ("source licence", "the source licence is MIT", "the source licence is Apache-2.0"),
]

# (question, the general preference that answers it)
GENERAL = [
    ("answer formatting preference", "answer formatting preference: short bullet points, no preamble"),
    ("favourite text editor", "favourite text editor: neovim with vim keybindings"),
    ("terminal colour theme", "terminal colour theme: solarized dark"),
    ("spoken language for replies", "spoken language for replies: English, even when asked in German"),
    ("working hours for meetings", "working hours for meetings: mornings only, never after 4 pm"),
]


@dataclass
class Layout:
    ws: Path
    alpha: Path
    beta: Path
    elsewhere: Path
    cards: dict[tuple[int, str], str] = field(default_factory=dict)  # (pair index, project) -> card path
    general: list[str] = field(default_factory=list)


def git_init(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def build(base: Path) -> Layout:
    """The workspace at ``base/ws`` and the three folders; cards carry project frontmatter as the
    recorder writes it."""
    lay = Layout(base / "ws", base / "code" / "alpha", base / "code" / "beta", base / "scratch" / "elsewhere")
    git_init(lay.alpha)
    git_init(lay.beta)
    lay.elsewhere.mkdir(parents=True, exist_ok=True)
    for i, (question, fact_a, fact_b) in enumerate(PAIRS):
        for root, fact in ((lay.alpha, fact_a), (lay.beta, fact_b)):
            rel = f"daily/2026-11-{10 + i % 18:02d}/{root.name}-topic-{i:02d}.md"
            meta = {
                "name": f"{root.name}: {question}",
                "description": fact,
                "session_id": f"{root.name}-{i}",
                "project": root.name,
                "project_root": str(root),
                "cwd": str(root),
            }
            _write(lay.ws / rel, meta, f"In this repository {fact}.")
            lay.cards[(i, root.name)] = rel
    for j, (question, fact) in enumerate(GENERAL):
        rel = f"digest/personal/preference-{j:02d}.md"
        _write(
            lay.ws / rel,
            {"name": question, "description": fact},
            f"The user's {fact}.\n\n## Sources\n\n- [[daily/2026-11-01/x.md]]",
        )
        lay.general.append(rel)
    return lay


def _write(path: Path, meta: dict[str, Any], body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    head = "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in meta.items())
    path.write_text(f"---\n{head}\n---\n{body}\n", encoding="utf-8")


@dataclass
class Figures:
    pairs: int
    own_first: dict[str, int]  # folder -> pairs where that folder's own note ranked first
    both_top2: int  # pairs where, from the unrelated folder, both notes are the top two
    general_found: dict[str, int]  # folder -> general preferences found in the top 3
    general_total: int
    failures: list[str] = field(default_factory=list)


def measure(ctx: Any, lay: Layout, *, project: str | None = None, limit: int = 5) -> Figures:
    """Ask every question from each folder through the search tool (as the MCP server does, whose
    working directory is the session's project)."""
    from reme_cc.tools import all_tools

    search = all_tools()["search"]
    fig = Figures(len(PAIRS), {"alpha": 0, "beta": 0}, 0, {"alpha": 0, "beta": 0, "elsewhere": 0}, len(GENERAL))
    here = os.getcwd()
    try:
        for folder in (lay.alpha, lay.beta, lay.elsewhere):
            os.chdir(folder)
            for i, (question, _a, _b) in enumerate(PAIRS):
                paths = [
                    h.path for h in search.run(ctx, {"query": question, "limit": limit, "project": project}).results
                ]
                mine, a, b = lay.cards.get((i, folder.name)), lay.cards[(i, "alpha")], lay.cards[(i, "beta")]
                if mine is not None:
                    if paths[:1] == [mine]:
                        fig.own_first[folder.name] += 1
                    else:
                        fig.failures.append(f"{folder.name}: {question!r} -> {paths[:2]}")
                elif set(paths[:2]) == {a, b}:
                    fig.both_top2 += 1
                else:
                    fig.failures.append(f"{folder.name}: {question!r} -> {paths[:2]} (want both)")
            for j, (question, _fact) in enumerate(GENERAL):
                paths = [
                    h.path for h in search.run(ctx, {"query": question, "limit": limit, "project": project}).results
                ]
                if lay.general[j] in paths[:3]:
                    fig.general_found[folder.name] += 1
                else:
                    fig.failures.append(f"{folder.name}: general {question!r} -> {paths[:3]}")
    finally:
        os.chdir(here)
    return fig
