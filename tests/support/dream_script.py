"""Scripting the fake API for dream runs: the extractor's answer, the coordinator that launches one
``dream-integrator`` subagent per unit (parallel ``Agent`` calls), and per-unit integrator plans.

    plans = {"Use pnpm": create_plan("digest/personal/pnpm.md", "Use pnpm", "...", ["daily/…"])}
    script_dream(api, units=[...], topics=[...], plans=plans)

A plan is a list of replies for that unit's subagent, one per turn (the turn = how many assistant
messages its conversation already holds). The Agent SDK serves our tools as ``mcp__reme__<name>``.
"""

from __future__ import annotations

import json
import re
from typing import Any
from collections.abc import Callable

from support.fake_api import FakeAPI, Reply, Request, all_of, is_main, is_subagent, system_contains, text, tool_use

T = "mcp__reme__"


def extractor_turn(units: list[dict[str, Any]], topics: list[dict[str, Any]] | None = None) -> Reply:
    return text("```json\n" + json.dumps({"units": units, "topics": topics or []}, ensure_ascii=False) + "\n```")


def coordinator(req: Request) -> Reply:
    results = req.tool_results(last_only=True)
    if results:  # every subagent came back: relay their JSON lines
        lines = []
        for r in results:
            m = re.search(r"integrate unit (\d+)", json.dumps(r.input or {}))
            found = re.findall(r'\{"action".*?\}', r.text)
            if m and found:
                obj = json.loads(found[-1])
                lines.append(json.dumps({"unit": int(m.group(1)), **obj, "error": None}))
            elif m:
                lines.append(json.dumps({"unit": int(m.group(1)), "action": None, "error": r.text[:200]}))
        return text("\n".join(lines))
    units = re.findall(r'<unit id="(\d+)">\n(.*?)\n</unit>', req.last_user_text, re.S)
    reply = Reply([])
    for uid, prompt in units:
        reply = reply + tool_use(
            "Agent",
            {
                "subagent_type": "dream-integrator",
                "description": f"integrate unit {uid}",
                "prompt": prompt,
                "run_in_background": False,
            },
        )
    return reply


def first_user_text(req: Request) -> str:
    from support.fake_api import content_text

    for m in req.messages:
        if m.get("role") == "user":
            return content_text(m.get("content"))
    return ""


def integrator(plans: dict[str, list[Reply]]) -> Callable[[Request], Reply]:
    def reply(req: Request) -> Reply:
        first = first_user_text(req)
        m = re.search(r"^Name: (.*)$", first, re.M)
        name = m.group(1).strip() if m else ""
        plan = plans.get(name)
        if plan is None:
            return text('{"action": null, "error": "no plan for unit"}')
        turn = sum(1 for msg in req.messages if msg.get("role") == "assistant")
        return plan[min(turn, len(plan) - 1)]

    return reply


def node_md(name: str, description: str, body: str, sources: list[str]) -> str:
    src = "\n".join(f"- Seen in [[{p}]], where this came up." for p in sources)
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n\n## Sources\n{src}\n"


def final(action: str, path: str, related: list[str] | None = None) -> Reply:
    return text("Done.\n" + json.dumps({"action": action, "path": path, "related": related or []}))


def create_plan(path: str, name: str, body: str, sources: list[str], related: list[str] | None = None) -> list[Reply]:
    return [
        tool_use(T + "search", {"query": name, "limit": 20, "folder": "digest"}),
        tool_use(T + "write", {"path": path, "content": node_md(name, f"{name} (from the dream)", body, sources)}),
        final("CREATE", path, related),
    ]


def corroborate_plan(path: str, name: str, old_text: str, new_text: str) -> list[Reply]:
    return [
        tool_use(T + "search", {"query": name, "limit": 20, "folder": "digest"}),
        tool_use(T + "read", {"path": path}),
        tool_use(T + "edit", {"path": path, "old_text": old_text, "new_text": new_text}),
        final("CORROBORATE", path),
    ]


def script_dream(api: FakeAPI, *, extractions: list[Reply], plans: dict[str, list[Reply]]) -> None:
    api.rule(all_of(is_main, system_contains("**Extract** phase")), extractions)
    api.rule(all_of(is_main, system_contains("You coordinate ReMe's dream")), coordinator)
    api.rule(all_of(is_subagent, system_contains("**Integrate** phase")), integrator(plans))


def extractor_requests(api: FakeAPI) -> list[Request]:
    return [r for r in api.messages_requests() if is_main(r) and "**Extract** phase" in r.system_text]


def subagent_ids(api: FakeAPI) -> set[str]:
    return {r.agent_id for r in api.messages_requests() if r.agent_id and "**Integrate** phase" in r.system_text}
