"""What the plugin adds to every user session: the first request the real Claude Code CLI sends, with
and without the plugin, against the fake API on 127.0.0.1 (issue 11 item 4).

    .venv/bin/python bench/session_context.py                             # this checkout vs no plugin
    .venv/bin/python bench/session_context.py --plugin before=/tmp/reme-main --plugin after=.

Prints, per variant: the plugin's entries in the Agent listing, the characters they take, the whole
system context (system prompt + system-role messages) and the request body, each also as the
difference to the no-plugin baseline measured in the same run. Token figures are chars/4 estimates
(no tokenizer offline). The MCP server runs with this venv's python; recording and dreams are off.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.claude_cli import run_claude  # noqa: E402
from support.fake_api import FakeAPI, text  # noqa: E402

AGENT_LISTING = re.compile(r"^Available agent types for the Agent tool:\n(.*?)\n\n", re.M | re.S)
AGENT_LINE = re.compile(r"^- (reme:[\w-]+): .*$", re.M)


def measure(plugin: Path | None, work: Path) -> dict[str, object]:
    with FakeAPI(default=text("OK")) as api:
        run = run_claude(
            "hello",
            api=api,
            home=work / "home",
            cwd=work / "project",
            plugin_dir=plugin,
            env={"REME_RECORD": "false", "REME_AUTO_DREAM": "false"},
        )
        if run.rc != 0:
            raise SystemExit(f"claude failed for {plugin}: {run}")
        req = api.messages_requests()[0]
    system = req.system_text
    listing = AGENT_LISTING.search(system)
    ours = list(AGENT_LINE.finditer(listing.group(1) if listing else ""))
    agents = [m.group(1) for m in ours]
    agent_chars = sum(len(m.group(0)) + 1 for m in ours)
    return {
        "agents": agents,
        "agent_chars": agent_chars,
        "system_chars": len(system),
        "body_bytes": len(json.dumps(req.body, ensure_ascii=False).encode()),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--plugin",
        action="append",
        metavar="LABEL=DIR",
        help="a plugin folder to measure (repeatable); default: this checkout",
    )
    args = ap.parse_args()
    variants: list[tuple[str, Path | None]] = [("no plugin", None)]
    for spec in args.plugin or [f"this checkout={Path(__file__).resolve().parents[1]}"]:
        label, _, folder = spec.partition("=")
        variants.append((label, Path(folder).resolve()))
    rows = []
    with tempfile.TemporaryDirectory(prefix="reme-bench-context-") as tmp:
        for i, (label, folder) in enumerate(variants):
            rows.append((label, measure(folder, Path(tmp) / str(i))))
    base = rows[0][1]
    print(
        f"{'variant':<16} {'reme agents':>11} {'agent chars':>11} {'system chars':>12} {'Δ system':>9} "
        f"{'≈Δ tokens':>9} {'body bytes':>10} {'Δ body':>7}"
    )
    for label, r in rows:
        d_sys = int(r["system_chars"]) - int(base["system_chars"])
        d_body = int(r["body_bytes"]) - int(base["body_bytes"])
        print(
            f"{label:<16} {len(r['agents']):>11} {r['agent_chars']:>11} {r['system_chars']:>12} {d_sys:>+9} "
            f"{d_sys // 4:>+9} {r['body_bytes']:>10} {d_body:>+7}"
        )
    for label, r in rows[1:]:
        print(f"{label}: agents listed: {', '.join(r['agents']) or '(none)'}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
