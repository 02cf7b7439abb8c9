"""A copy of the plugin source tree, as a user's checkout or a marketplace folder would hold it.

Tests that build or install the plugin work on a copy, so the build's own files (``build/``,
``*.egg-info``) and the CLI's view of the folder never touch the repository under test."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_NOT_SHIPPED = (
    ".git",
    ".venv",
    "__pycache__",
    "*.pyc",
    "build",
    "dist",
    "*.egg-info",
    ".pytest_cache",
    ".hypothesis",
    "out",
)


def copy_plugin(dest: Path) -> Path:
    """Copy the repository's plugin files (no VCS data, virtualenvs or build output) to ``dest``."""
    shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(*_NOT_SHIPPED), symlinks=True)
    return dest
