"""The server speaks MCP as the official Python SDK's client understands it.

reme's server answers the protocol with the standard library (reme_cc/surfaces/server.py); this test drives it with
the reference client (the `mcp` package, a test dependency only), so a framing, handshake or result-shape
mistake fails here as well as in the real Claude Code CLI tests."""

from __future__ import annotations

import sys

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from test_server import REPO, server_env  # noqa: E402


async def _session_run(ws_root, script):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "reme_cc.surfaces.server"], env=server_env(ws_root), cwd=str(REPO)
    )
    async with stdio_client(params) as (read, write), mcp.ClientSession(read, write) as session:
        init = await session.initialize()
        return init, await script(session)


def test_reference_client_handshake_list_call_and_errors(tmp_path):
    async def script(session):
        tools = (await session.list_tools()).tools
        await session.send_ping()
        wrote = await session.call_tool(
            "write",
            {"path": "daily/2026-06-20/blue-whale.md", "content": "# Deploy\n\nThe 蓝鲸 cluster moved to port 8443.\n"},
        )
        found = await session.call_tool("search", {"query": "蓝鲸", "limit": 3})
        unknown = await session.call_tool("no_such_tool", {})
        bad = await session.call_tool("search", {"query": "x", "limit": "many"})
        return tools, wrote, found, unknown, bad

    init, (tools, wrote, found, unknown, bad) = anyio.run(_session_run, tmp_path / "ws", script)
    assert init.server_info.name == "reme" and init.capabilities.tools is not None
    names = {t.name for t in tools}
    assert {"search", "read", "write"} <= names
    search = next(t for t in tools if t.name == "search")
    assert "query" in search.input_schema["properties"] and search.annotations.read_only_hint is True
    assert wrote.is_error is False
    assert found.is_error is False and "daily/2026-06-20/blue-whale.md" in found.content[0].text
    assert unknown.is_error is True and "no_such_tool" in unknown.content[0].text
    assert bad.is_error is True and "limit" in bad.content[0].text
