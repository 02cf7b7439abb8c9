"""Failures of the background memory work, kept until it works again: never silent.

The recorder, the dream and the resource cards run detached, where nobody reads their output. A run
that fails (not logged in, the API refusing or rate limiting, a daily cap reached, a broken plugin
environment) is counted here, in ``metadata/failures.json``, per agent: how many times in a row, since
when, the last error and what to do about it. A run that works clears its agent's streak. ``status``
lists the streaks, ``doctor`` fails on them with the fix, and every SessionStart brief carries one line
per streak ("memory recording has failed 3 times since 10:42: not logged in — run /login in Claude
Code") until it clears.

Standard library only (the SessionStart hook reads it with the system python3).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass
from typing import Any

from ..base.workspace import Workspace

FILE = "metadata/failures.json"
WHAT = {"recorder": "memory recording", "dream": "the dream", "resource": "resource cards"}

# (pattern in the error text, the cause in a few words, the fix); the first that matches wins
CAUSES: tuple[tuple[str, str, str], ...] = (
    (
        r"not logged in|please run /login|oauth token|no api key",
        "not logged in",
        "run /login in Claude Code (or set ANTHROPIC_API_KEY)",
    ),
    (
        r"invalid x-api-key|invalid api key|authentication_error|\b401\b",
        "the API key was refused",
        "check ANTHROPIC_API_KEY, or run /login in Claude Code",
    ),
    (r"credit balance|billing", "the API account has no credit left", "add credit to the Anthropic account"),
    (
        r"daily recorder cap reached",
        "today's cap is reached",
        "raise daily_recorder_runs / daily_recorder_tokens in config.json, or wait for tomorrow",
    ),
    (r"rate.?limit|\b429\b", "the API is rate limiting", "nothing: it retries at the next session"),
    (
        r"overloaded|\b529\b|\b5\d\d\b|api error|internal server error",
        "the API failed",
        "nothing: it retries at the next session",
    ),
    (
        r"python environment|could not prepare|no module named|importerror|launch\.py --rebuild",
        "the plugin's environment is broken",
        "run `python3 <plugin>/scripts/launch.py --rebuild` (path in `reme-cc doctor`)",
    ),
    (r"timed? ?out|timeout", "the agent timed out", "nothing: it retries at the next session"),
)


@dataclass
class Failure:
    agent: str  # recorder | dream | resource
    count: int  # failed runs in a row
    since: str  # local time of the first failure of the streak, "YYYY-MM-DDTHH:MM:SS"
    last: str  # local time of the latest one
    error: str  # the latest error, as the agent reported it (first 300 characters)

    @property
    def cause(self) -> str:  # the cause in a few words (read from the error, not stored: CAUSES may improve)
        return explain(self.error)[0]

    @property
    def fix(self) -> str:  # what the user can do
        return explain(self.error)[1]

    def line(self) -> str:
        """One line for the brief, status and doctor."""
        day, clock = self.since.split("T") if "T" in self.since else ("", self.since)
        when = clock[:5] if day == time.strftime("%Y-%m-%d") else f"{day} {clock[:5]}".strip()
        times = "once" if self.count == 1 else f"{self.count} times"
        return f"{WHAT.get(self.agent, self.agent)} has failed {times} since {when}: {self.cause} — {self.fix}"


def explain(error: str) -> tuple[str, str]:
    """(cause, fix) of an error message."""
    low = error.lower()
    for pattern, cause, fix in CAUSES:
        if re.search(pattern, low):
            return cause, fix
    first = error.strip().splitlines()[0][:160] if error.strip() else "an unknown error"
    return first, "see metadata/logs/auto-memory.log (or dream-auto.log) in the memory workspace"


def _read(ws: Workspace) -> dict[str, Any]:
    try:
        data = json.loads(ws.read_bytes(FILE))
    except Exception:  # missing or damaged: no streaks (advisory, never fatal)
        return {}
    return data if isinstance(data, dict) else {}


def _write(ws: Workspace, data: dict[str, Any]) -> None:
    ws.write_text(FILE, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def record_failure(ws: Workspace, agent: str, error: str) -> Failure:
    now = time.strftime("%Y-%m-%dT%H:%M:%S")
    with ws.lock("failures", timeout=10):
        data = _read(ws)
        old = data.get(agent) if isinstance(data.get(agent), dict) else {}
        failure = Failure(agent, int(old.get("count", 0)) + 1, str(old.get("since") or now), now, error.strip()[:300])
        data[agent] = asdict(failure)
        _write(ws, data)
    return failure


def record_success(ws: Workspace, agent: str) -> None:
    if agent not in _read(ws):  # the common case: one read, no lock, no write
        return
    with ws.lock("failures", timeout=10):
        data = _read(ws)
        if data.pop(agent, None) is not None:
            _write(ws, data)


def alerts(ws: Workspace) -> list[str]:
    """The lines the SessionStart brief carries while background work fails: one per streak, and the
    plugin environment's build error when there is one (the recorder cannot even start then)."""
    from ..base.bootstrap import last_error

    lines = [f"ReMe: {f.line()}" for f in current(ws)]
    env_error = last_error()
    if env_error:
        lines.append(f"ReMe: memory recording cannot start: {env_error}")
    return lines


def current(ws: Workspace) -> list[Failure]:
    """The streaks that have not cleared yet, oldest first."""
    out = []
    for agent, row in _read(ws).items():
        try:
            out.append(Failure(agent, int(row["count"]), str(row["since"]), str(row["last"]), str(row["error"])))
        except (KeyError, TypeError, ValueError):
            continue
    return sorted(out, key=lambda f: f.since)
