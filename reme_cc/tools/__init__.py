"""The one tool registry. Every operation is defined once here and exposed three ways:
an MCP tool (server.py), a CLI subcommand (cli.py) and an in-process Agent SDK tool (agent.py).

A tool is a function ``fn(ctx, params) -> result`` where ``params`` is a pydantic model (its JSON
schema is the MCP input schema; its fields become CLI options) and ``result`` is a ``ToolResult``
(``.text()`` is the human/MCP text form, ``model_dump()`` the ``--json`` form).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar
from collections.abc import Callable, Mapping

from pydantic import BaseModel, ConfigDict, ValidationError

from ..base.errors import InvalidInputError
from ..memory.context import Context

__all__ = [
    "Context",
    "Params",
    "ToolResult",
    "TextResult",
    "Tool",
    "REGISTRY",
    "AGENT_TOOLS",
    "TOOL_MODULES",
    "tool",
    "agent_tool",
    "all_tools",
    "agent_tools",
]


class Params(BaseModel):
    """Base for tool parameters: unknown arguments are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


class ToolResult(BaseModel):
    """Base for tool results."""

    def text(self) -> str:  # human / MCP text form; subclasses override
        return self.model_dump_json(indent=2)


class TextResult(ToolResult):
    message: str

    def text(self) -> str:
        return self.message


P = TypeVar("P", bound=Params)


@dataclass(frozen=True)
class Tool(Generic[P]):
    name: str
    description: str
    params: type[P]
    fn: Callable[[Context, P], ToolResult]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    # CLI: names of params given positionally, in order (``reme-cc move SRC DST``)
    positional: tuple[str, ...] = ()
    # keyword-only parameters of ``fn`` an agent run binds (``bind``): the recorder's card target
    binds: tuple[str, ...] = ()

    def bind(self, values: Mapping[str, Any]) -> Tool[P]:
        """This tool with the run's values for the parameters it binds (the others are ignored)."""
        taken = {k: v for k, v in values.items() if k in self.binds}
        return replace(self, fn=functools.partial(self.fn, **taken)) if taken else self

    def validate(self, arguments: dict[str, Any] | None) -> P:
        try:
            return self.params.model_validate(arguments or {})
        except ValidationError as exc:
            raise InvalidInputError(f"{self.name}: {format_validation_error(exc)}") from None

    def run(self, ctx: Context, arguments: dict[str, Any] | P | None) -> ToolResult:
        params = arguments if isinstance(arguments, self.params) else self.validate(arguments)  # type: ignore[arg-type]
        return self.fn(ctx, params)  # type: ignore[arg-type]  (changes take the notes lock in the note service)

    @property
    def cli_name(self) -> str:
        return self.name.replace("_", "-")


REGISTRY: dict[str, Tool[Any]] = {}
# Memory-agent-only tools (e.g. the recorder's daily_write): served to agents, never by the MCP server / CLI.
AGENT_TOOLS: dict[str, Tool[Any]] = {}
# The one list of tool modules; importing them registers their tools.
TOOL_MODULES = ("files", "daily", "search", "graph", "system")


def tool(
    name: str,
    description: str,
    *,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    positional: tuple[str, ...] = (),
    registry: dict[str, Tool[Any]] | None = None,
) -> Callable[[Callable[[Context, P], ToolResult]], Callable[[Context, P], ToolResult]]:
    """Register ``fn`` as a tool (in ``REGISTRY`` unless another ``registry`` is given, e.g. the memory
    agents' own tools). The params model is taken from its second argument's annotation."""
    target = REGISTRY if registry is None else registry

    def decorate(fn: Callable[[Context, P], ToolResult]) -> Callable[[Context, P], ToolResult]:
        import typing

        hints = typing.get_type_hints(fn)
        params_type = hints.get("params")
        if params_type is None or not issubclass(params_type, Params):
            raise TypeError(f"tool {name}: the second argument must be named `params` and typed as a Params model")
        if name in target:
            raise ValueError(f"tool {name} registered twice")
        binds = tuple(p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY)
        target[name] = Tool(
            name, description.strip(), params_type, fn, read_only, destructive, idempotent, positional, binds
        )
        return fn

    return decorate


def format_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ())) or "arguments"
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unknown argument"
        parts.append(f"{loc}: {msg}")
    return "; ".join(parts)


def agent_tool(
    name: str, description: str, **flags: Any
) -> Callable[[Callable[[Context, P], ToolResult]], Callable[[Context, P], ToolResult]]:
    """Like ``tool`` but registers into AGENT_TOOLS."""
    return tool(name, description, registry=AGENT_TOOLS, **flags)


def all_tools() -> dict[str, Tool[Any]]:
    """The registry with every tool module imported (AGENT_TOOLS filled too)."""
    import importlib

    for module in TOOL_MODULES:
        importlib.import_module(f"{__name__}.{module}")
    return REGISTRY


def agent_tools() -> dict[str, Tool[Any]]:
    """The memory-agent-only tools, every tool module imported."""
    all_tools()
    return AGENT_TOOLS
