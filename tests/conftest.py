"""Shared fixtures. Helpers for the fake Anthropic API and the real Claude CLI live in tests/support/."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """A fresh workspace in tmp_path (also exported as REME_WORKSPACE for subprocesses)."""
    from reme_cc.workspace import Workspace

    root = tmp_path / "ws"
    monkeypatch.setenv("REME_WORKSPACE", str(root))
    monkeypatch.setenv("REME_EMBEDDING", os.environ.get("REME_TEST_EMBEDDING", "none"))
    return Workspace(root)


@pytest.fixture
def ctx(ws):
    from reme_cc.config import Config
    from reme_cc.tools import Context

    c = Context(ws, Config.load(ws.root))
    yield c
    c.close()
