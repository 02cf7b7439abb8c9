"""Daily usage and caps of the memory agents, in ``metadata/usage/<YYYY-MM-DD>.json`` (local date).

``{"date": "2026-11-30", "agents": {"recorder": {"runs": 3, "input_tokens": 9100, "output_tokens": 800}}}``

The recorder checks ``within_caps`` before each run (``daily_recorder_runs``, ``daily_recorder_tokens``)
and adds what the run spent afterwards, failed runs included. ``usage_today`` is what ``reme-cc status``
reports.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from ..base.config import Config
from ..base.workspace import Workspace


def usage_path(date: str) -> str:
    return f"metadata/usage/{date}.json"


def today() -> str:
    return dt.date.today().isoformat()


def read_usage(ws: Workspace, date: str | None = None) -> dict[str, Any]:
    date = date or today()
    try:
        data = json.loads(ws.read_bytes(usage_path(date)))
    except Exception:  # missing or damaged: start from zero (usage is advisory, never fatal)
        data = {}
    agents = data.get("agents") if isinstance(data, dict) and isinstance(data.get("agents"), dict) else {}
    return {"date": date, "agents": agents}


def add_usage(
    ws: Workspace, agent: str, *, runs: int = 1, input_tokens: int = 0, output_tokens: int = 0, date: str | None = None
) -> dict[str, Any]:
    date = date or today()
    with ws.lock("usage", timeout=10):  # read-modify-write shared by concurrent recorders
        data = read_usage(ws, date)
        row = data["agents"].setdefault(agent, {})
        row["runs"] = int(row.get("runs", 0)) + runs
        row["input_tokens"] = int(row.get("input_tokens", 0)) + input_tokens
        row["output_tokens"] = int(row.get("output_tokens", 0)) + output_tokens
        ws.write_text(usage_path(date), json.dumps(data, indent=2, sort_keys=True) + "\n")
    return data


def _row(data: dict[str, Any], agent: str) -> dict[str, int]:
    row = data["agents"].get(agent) or {}
    return {k: int(row.get(k, 0)) for k in ("runs", "input_tokens", "output_tokens")}


def within_caps(ws: Workspace, config: Config, agent: str = "recorder") -> str | None:
    """None when another run is allowed today, else the reason (one line)."""
    row = _row(read_usage(ws), agent)
    tokens = row["input_tokens"] + row["output_tokens"]
    if agent == "recorder":
        if config.daily_recorder_runs and row["runs"] >= config.daily_recorder_runs:
            return f"daily recorder cap reached ({row['runs']}/{config.daily_recorder_runs} runs today); raise daily_recorder_runs to record more"
        if config.daily_recorder_tokens and tokens >= config.daily_recorder_tokens:
            return f"daily recorder cap reached ({tokens}/{config.daily_recorder_tokens} tokens today); raise daily_recorder_tokens to record more"
    return None


def usage_today(ws: Workspace, config: Config) -> dict[str, Any]:
    """Today's usage per agent, with the recorder's caps: for ``reme-cc status``."""
    data = read_usage(ws)
    out: dict[str, Any] = {"date": data["date"]}
    for agent in sorted(set(data["agents"]) | {"recorder"}):
        row = _row(data, agent)
        row["tokens"] = row["input_tokens"] + row["output_tokens"]
        out[agent] = row
    out["recorder"]["max_runs"] = config.daily_recorder_runs
    out["recorder"]["max_tokens"] = config.daily_recorder_tokens
    out["recorder"]["capped"] = within_caps(ws, config) is not None
    return out
