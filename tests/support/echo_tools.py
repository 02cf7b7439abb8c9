"""Test-only tools (loaded into a server via REME_EXTRA_TOOL_MODULES=support.echo_tools)."""

from __future__ import annotations

import time

from reme_cc.base.errors import ConflictError
from reme_cc.tools import Context, Params, TextResult, tool


class EchoParams(Params):
    text: str
    times: int = 1


@tool("echo_test", "Echo text back (test tool).", read_only=True, idempotent=True)
def echo_test(ctx: Context, params: EchoParams) -> TextResult:
    return TextResult(message=" ".join([params.text] * params.times))


class SleepParams(Params):
    seconds: float


@tool("sleep_test", "Sleep, then answer (test tool).", read_only=True)
def sleep_test(ctx: Context, params: SleepParams) -> TextResult:
    time.sleep(params.seconds)
    return TextResult(message=f"slept {params.seconds}")


class BoomParams(Params):
    kind: str = "reme"


@tool("boom_test", "Fail (test tool).", destructive=True)
def boom_test(ctx: Context, params: BoomParams) -> TextResult:
    if params.kind == "reme":
        raise ConflictError("boom: target exists; pick another name")
    raise ValueError("unexpected bug")
