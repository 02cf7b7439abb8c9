"""Shared fixtures. Helpers for the fake Anthropic API and the real Claude CLI live in tests/support/."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

# The installed plugin (marketplace install, env built by its own launcher): session fixtures shared by
# every test file that takes them, so the env is built once per test run (tests/support/installed_plugin.py)
from support.installed_plugin import installed_plugin, plugin_env  # noqa: E402,F401

# Whatever a test starts "in the plugin's environment" (a hook's detached recorder or automatic dream)
# runs with this interpreter instead of building that environment under the real ~/.claude
# (bootstrap honours REME_PYTHON). Tests of the bootstrap itself clear both variables.
os.environ.setdefault("REME_PYTHON", sys.executable)
os.environ.setdefault("CLAUDE_PLUGIN_DATA", tempfile.mkdtemp(prefix="reme-test-plugin-data-"))


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """A fresh workspace in tmp_path (also exported as REME_WORKSPACE for subprocesses)."""
    from reme_cc.base.workspace import Workspace

    root = tmp_path / "ws"
    monkeypatch.setenv("REME_WORKSPACE", str(root))
    monkeypatch.setenv("REME_EMBEDDING", os.environ.get("REME_TEST_EMBEDDING", "none"))
    return Workspace(root)


@pytest.fixture
def idx(ws):
    """The workspace's index (embedding in the background as configured: "none" unless REME_TEST_EMBEDDING)."""
    from reme_cc.base.config import Config
    from reme_cc.index import Index

    index = Index(ws, Config.load(ws.root))
    yield index
    index.close()


@pytest.fixture
def ctx(ws):
    from reme_cc.surfaces.agent import with_agents
    from reme_cc.base.config import Config
    from reme_cc.tools import Context

    c = with_agents(Context(ws, Config.load(ws.root)))  # able to run the memory pipelines too
    yield c
    c.close()
