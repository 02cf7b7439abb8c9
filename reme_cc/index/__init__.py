"""The index layer. ``Index`` (core.py) is the facade over the derived index in ``metadata/``; its names
are imported from here on first use, so that ``readonly.py`` — the standard-library reader the
SessionStart brief uses — loads without numpy or jieba."""

from __future__ import annotations

import importlib
import os
from typing import Any


def __getattr__(name: str) -> Any:
    if os.path.exists(os.path.join(os.path.dirname(__file__), f"{name}.py")):
        raise AttributeError(name)  # a submodule: the import system loads it on its own
    core = importlib.import_module(f"{__name__}.core")
    try:
        value = getattr(core, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value  # found once: later look-ups do not come here
    return value
