"""`reme-cc demo`: a small, realistic workspace to try reme-cc without Claude Code.

Writes a few daily cards (two days) and digest nodes whose Sources link back to them, through the
same tools an agent uses (so evidence rules and the index update apply), builds the day index pages,
indexes everything and prints a sample search.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import ConflictError, ReMeError

MARKER = ".reme-demo"  # a demo folder can be re-created; any other non-empty folder is refused
DEFAULT_QUERY = "how does the user like technical docs written?"

CARDS: list[dict[str, Any]] = [
    {
        "path": "daily/2026-06-20/docs-style-review.md",
        "name": "Docs style review",
        "description": "User asked for direct, engineering-style Chinese technical docs with context and examples.",
        "metadata": {"session_id": "demo-session-1", "tags": ["docs", "preference"]},
        "content": "# What happened\n\nReviewed the README draft together. The user asked three times to add the\n"
        "*motivation*, the *boundaries* and a concrete *example* to each section, and to drop marketing\n"
        "language. 用户希望技术文档直接、工程化，有上下文但不冗长。\n\n# Follow-ups\n\n"
        "- Rewrite the install section with a runnable example.\n",
    },
    {
        "path": "daily/2026-06-20/pv-supply-chain.md",
        "name": "光伏产业链调研",
        "description": "从硅料到组件的光伏产业链梳理，以及主要厂商。",
        "metadata": {"session_id": "demo-session-2", "tags": ["新能源", "光伏"]},
        "content": "# 结论\n\n光伏产业链可以拆成硅料、硅片、电池片和组件四个环节。\n"
        "隆基绿能在硅片环节领先；组件价格在 2026 年上半年继续下降。\n\n# 来源\n\n"
        "调研报告保存在 resource/2026-06-20/report.md。\n",
    },
    {
        "path": "daily/2026-06-21/deploy-rollback.md",
        "name": "Deploy rollback drill",
        "description": "Rolled back a bad deploy: pin the previous image tag, then run the smoke tests before reopening traffic.",
        "metadata": {"session_id": "demo-session-3", "tags": ["ops"]},
        "content": "# Steps that worked\n\n1. Pin the previous image tag in the release config.\n"
        "2. Redeploy and run the smoke tests.\n3. Reopen traffic only after the health check is green.\n\n"
        "# Lesson\n\nKeep the previous tag written down before every release.\n",
    },
]

DIGESTS: list[dict[str, Any]] = [
    {
        "path": "digest/personal/docs-style.md",
        "name": "User preference: technical docs style",
        "description": "The user prefers direct, engineering-style technical writing with motivation, boundaries and examples.",
        "metadata": {"kind": "preference", "confidence": "observed"},
        "content": "The user repeatedly asks documents to state the motivation, the boundaries and a concrete\n"
        "example, and to avoid marketing language. Apply this when following\n"
        "[[digest/procedure/release-rollback.md]] write-ups too.\n\n"
        "## Sources\n\n- Observed in [[daily/2026-06-20/docs-style-review.md]].\n",
    },
    {
        "path": "digest/wiki/光伏产业链.md",
        "name": "光伏产业链",
        "description": "光伏产业链的四个环节（硅料、硅片、电池片、组件）与主要厂商。",
        "metadata": {"kind": "concept"},
        "content": "光伏产业链可以拆成硅料、硅片、电池片和组件。主要厂商包括隆基绿能。\n\n"
        "## Sources\n\n- 调研记录 [[daily/2026-06-20/pv-supply-chain.md]]\n",
    },
    {
        "path": "digest/procedure/release-rollback.md",
        "name": "Release rollback procedure",
        "description": "How to roll back a bad deploy safely: pin the previous tag, redeploy, smoke-test, then reopen traffic.",
        "metadata": {"kind": "procedure"},
        "content": "1. Pin the previous image tag.\n2. Redeploy and run the smoke tests.\n"
        "3. Reopen traffic after the health check is green.\n\n"
        "Write the runbook in the style of [[digest/personal/docs-style.md]].\n\n"
        "## Sources\n\n- Drill on [[daily/2026-06-21/deploy-rollback.md]]\n",
    },
]


def _prepare(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise ConflictError(f"{root} is a file; choose a folder for the demo workspace")
    if root.is_dir() and any(root.iterdir()) and not (root / MARKER).exists():
        raise ConflictError(f"{root} is not empty and is not a reme-cc demo; choose a new folder (e.g. reme-demo)")
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("created by `reme-cc demo`; safe to delete this folder\n", encoding="utf-8")


def _search(ctx: Any, query: str) -> Any:
    from .tools import all_tools

    tools = all_tools()
    if "search" not in tools:
        raise ReMeError("the search tool is not available in this build")
    return tools["search"].run(ctx, {"query": query, "limit": 3})


def run_demo(root: Path, *, query: str | None = None, as_json: bool = False) -> int:
    from .config import Config
    from .tools import Context, all_tools

    _prepare(root)
    from .workspace import Workspace

    from .index import Index

    ws = Workspace(root)
    config = Config.load(ws.root)
    # embed in the foreground so the sample search already uses the vectors
    ctx = Context(ws, config, _index=Index(ws, config, background_embedding=False))
    try:
        tools = all_tools()
        written = []
        for note in CARDS + DIGESTS:
            tools["write"].run(ctx, note)
            written.append(note["path"])
        for date in ("2026-06-20", "2026-06-21"):
            written.append(tools["daily_reindex"].run(ctx, {"date": date}).path)
        ctx.index.sync()
        ctx.index.embed_pending()
        q = query or DEFAULT_QUERY
        result = _search(ctx, q)
        if as_json:
            print(json.dumps({"workspace": str(ws.root), "files": written, "query": q,
                              "search": result.model_dump(mode="json")}, ensure_ascii=False, indent=2))
            return 0
        print(f"Demo workspace: {ws.root}")
        print(f"Wrote {len(written)} files:")
        for p in written:
            print(f"  {p}")
        print(f"\nSearch: {q}\n")
        print(result.text())
        print(
            "\nTry next:\n"
            f"  reme-cc --workspace {ws.root} search \"光伏 厂商\"\n"
            f"  reme-cc --workspace {ws.root} read digest/personal/docs-style.md\n"
            f"  reme-cc --workspace {ws.root} daily-list 2026-06-20\n"
        )
        return 0
    finally:
        ctx.close()
