"""Time one dream over a generated 2-week workspace, with the real Claude CLI (Agent SDK) against the
scripted fake API. Prints agent sessions, model requests, distinct subagents, wall time and the
measured concurrency of the integrator subagents.

    .venv/bin/python bench/bench_dream.py [--days 14] [--cards 3] [--units 5] [--concurrency 3]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.claude_cli import sdk_env  # noqa: E402
from support.dream_script import create_plan, extractor_turn, script_dream  # noqa: E402
from support.fake_api import FakeAPI  # noqa: E402

TOPICS = [
    "sqlite locking",
    "key rotation",
    "pnpm workspaces",
    "faiss index rebuild",
    "jieba tokenising",
    "release checklist",
    "wikilink rewriting",
    "hook timeouts",
    "embedding cache",
    "daily index pages",
]


def generate(root: Path, days: int, cards: int, end: dt.date) -> list[str]:
    from reme_cc.base.workspace import Workspace

    ws = Workspace(root)
    paths = []
    for d in range(days):
        day = (end - dt.timedelta(days=days - 1 - d)).isoformat()
        for c in range(cards):
            topic = TOPICS[(d * cards + c) % len(TOPICS)]
            rel = f"daily/{day}/{topic.replace(' ', '-')}-{c}.md"
            body = "\n".join(f"- {topic}: observation {i} on {day}, with the fix that worked." for i in range(12))
            ws.write_text(
                rel, f"---\nname: {topic} ({day})\ndescription: session about {topic}\n---\n# {topic}\n\n{body}\n"
            )
            paths.append(rel)
    for t in TOPICS[:4]:
        ws.write_text(
            f"digest/wiki/{t.replace(' ', '-')}.md",
            f"---\nname: {t}\ndescription: what we know about {t}\n---\nNotes on {t}.\n\n"
            f"## Sources\n- [[{paths[0]}]]\n",
        )
    return paths


def max_overlap(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    best = cur = 0
    for _, delta in events:
        cur += delta
        best = max(best, cur)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=14)
    ap.add_argument("--cards", type=int, default=3)
    ap.add_argument("--units", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=3)
    args = ap.parse_args()
    end = dt.date.today()
    with tempfile.TemporaryDirectory() as tmp, FakeAPI() as api:
        root = Path(tmp) / "ws"
        os.environ.update(sdk_env(api, Path(tmp) / "home"))
        os.environ.update({"REME_WORKSPACE": str(root), "REME_EMBEDDING": "none", "REME_AGENT_RETRIES": "0"})
        paths = generate(root, args.days, args.cards, end)
        units = [
            {
                "name": f"Lesson {i} - {TOPICS[i % len(TOPICS)]}",
                "bucket": ["procedure", "wiki", "personal"][i % 3],
                "summary": f"What {TOPICS[i % len(TOPICS)]} taught us.",
                "paths": paths[i :: args.units][:4],
            }
            for i in range(args.units)
        ]
        plans = {
            u["name"]: create_plan(f"digest/{u['bucket']}/lesson-{i}.md", u["name"], u["summary"], u["paths"])
            for i, u in enumerate(units)
        }
        topics = [
            {"title": t, "reason": "recurring", "evidence": "cards", "keywords": t.split(), "paths": paths[:2]}
            for t in TOPICS[:3]
        ]
        script_dream(api, extractions=[extractor_turn(units, topics)], plans=plans)

        from reme_cc.base.config import Config
        from reme_cc.memory import dream
        from reme_cc.surfaces.agent import with_agents
        from reme_cc.tools import Context

        ctx = with_agents(Context.open(str(root), Config.load(root).replace(dream_concurrency=args.concurrency)))
        t0 = time.monotonic()
        summary = asyncio.run(
            dream.run_dream(ctx, dream.DreamOptions(date=end.isoformat(), scan_days=args.days, max_units=args.units))
        )
        wall = time.monotonic() - t0
        ctx.close()
        reqs = api.messages_requests()
        by_agent: dict[str, list[float]] = {}
        for r in reqs:
            if r.agent_id:
                by_agent.setdefault(r.agent_id, []).append(r.time)
        figures = {
            "workspace": f"{args.days} days x {args.cards} cards = {len(paths)} daily files",
            "changed": summary.changed,
            "units": summary.units,
            "created": summary.created,
            "failed": summary.failed,
            "agent_sessions": summary.agent_sessions,
            "model_requests": len(reqs),
            "subagents": len(by_agent),
            "max_concurrent_subagents": max_overlap([(min(t), max(t)) for t in by_agent.values()]),
            "concurrency_limit": args.concurrency,
            "wall_seconds": round(wall, 2),
            "error": summary.error,
            "failures": [f["error"] for f in summary.failures],
        }
        print(json.dumps(figures, indent=2))
        return 0 if summary.error is None and summary.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
