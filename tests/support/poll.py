"""Waiting for what happens in another thread or process (notifications, a detached worker): poll a
predicate until it holds or a generous deadline passes. No test asserts how long it took."""

from __future__ import annotations

import time
from typing import Any
from collections.abc import Callable


def until(pred: Callable[[], Any], timeout: float = 120.0, step: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(step)
    return pred()
