"""Transcript copy → messages for the recorder (memory/render.py), on real Claude Code transcripts."""

from __future__ import annotations

import json
import time

import pytest

from reme_cc.memory.render import (
    format_transcript,
    has_conversation,
    local_date,
    parse_lines,
    render_entries,
    strip_boilerplate,
    tool_call_line,
)
from support.recorder import copy_fixture, entry, fixture

TOOLS = "71d7eee5-6a9d-427a-8f40-f50521713e21.jsonl"
COMPACT = "32018381-76a0-4a5d-a8d3-1e6bd3781701.jsonl"
BACKGROUND = "6a9e6eb8-0dea-47ee-878b-6cb62c1a40eb.jsonl"
SIMPLE = "cf0565d1-9dd3-4e0c-9c37-4f1acd73559e.jsonl"


def _render(path):
    return render_entries(parse_lines(path.read_bytes()))


@pytest.mark.parametrize("source", ["raw", "copy"])
def test_tool_session_renders_calls_and_marked_outputs(ws, source):
    path = fixture(TOOLS) if source == "raw" else copy_fixture(ws, TOOLS, "t1")
    msgs = _render(path)
    text = format_transcript(msgs)
    assert msgs[0].role == "user" and msgs[0].content.startswith("TOOLS_DEMO")
    assert msgs[0].created_at.startswith("2026-11-30T06:40:05")
    assert "[tool] Bash: ls -la" in text
    assert "[tool] Write: /home/user/project/notes.txt" in text
    assert "[tool] echo: remember sqlite" in text  # MCP tool names are shortened
    outputs = [m for m in msgs if m.role == "tool"]
    assert len(outputs) == 4
    assert all(m.content.startswith("[tool output, not user input] ") for m in outputs)
    assert "[tool output] [tool output]" not in text and "not user input] [tool output]" not in text
    assert text.count("### user") == 1  # tool results are not shown as user turns
    assert text.rstrip().endswith('echo tool answered: {"result":"ECHO: remember sqlite"}')
    assert all(m.uuid for m in msgs)


def test_boilerplate_is_dropped_from_real_transcripts():
    compact = format_transcript(_render(fixture(COMPACT)))
    for noise in (
        "Stop hook feedback",
        "STOP_BLOCK_REASON_MARKER",
        "This session is being continued",
        "<command-name>",
        "/compact",
        "local-command",
        "Compacted",
        "system-reminder",
    ):
        assert noise not in compact, noise
    assert "hello c2" in compact
    background = format_transcript(_render(fixture(BACKGROUND)))
    assert "<task-notification>" not in background and "task-id" not in background
    assert "tools-used-before-summary" not in background
    assert "The background probe agent finished: PROBE_AGENT_DONE." in background
    assert "[tool] Agent: probe task" in background


def test_strip_boilerplate_keeps_the_users_words():
    text = "<system-reminder>ignore me</system-reminder>Please fix the login bug.\n<local-command-stdout>x</local-command-stdout>"
    assert strip_boilerplate(text) == "Please fix the login bug."
    assert strip_boilerplate("<command-name>/clear</command-name>\n<command-args></command-args>") == ""
    assert strip_boilerplate("<bash-input>git status</bash-input>") == "[user ran a shell command] git status"
    assert strip_boilerplate("<system-reminder>never closed") == ""


def test_meta_thinking_images_and_partial_lines(tmp_path):
    lines = [
        entry("user", "real question", "2026-11-30T10:00:00Z", "u1"),
        entry("user", "Caveat: meta", "2026-11-30T10:00:01Z", "u2", isMeta=True),
        entry("assistant", [{"type": "thinking", "thinking": "secret plan"}], "2026-11-30T10:00:02Z", "a1"),
        entry(
            "user",
            [
                {"type": "image", "source": {"type": "base64", "data": "[omitted]"}},
                {"type": "text", "text": "see screenshot"},
            ],
            "2026-11-30T10:00:03Z",
            "u3",
        ),
        entry("user", "notification", "2026-11-30T10:00:04Z", "u4", origin={"kind": "task-notification"}),
    ]
    data = "".join(json.dumps(e) + "\n" for e in lines) + '{"type": "user", "uuid": "partial'
    msgs = render_entries(parse_lines(data.encode()))
    assert [m.uuid for m in msgs] == ["u1", "u3"]
    assert msgs[1].content == "[image attached]\nsee screenshot"
    assert "secret plan" not in format_transcript(msgs)
    assert has_conversation(msgs) and not has_conversation([])


def test_tool_call_line_is_short():
    line = tool_call_line("Write", {"file_path": "/x/y.py", "content": "a" * 5000})
    assert line == "[tool] Write: /x/y.py"
    assert len(tool_call_line("Custom", {"a": "b" * 1000, "c": 1})) < 200
    assert tool_call_line("mcp__plugin_reme_reme__search", {"query": "sqlite"}) == "[tool] search: sqlite"


def test_local_date_follows_the_local_timezone(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        assert local_date("2026-11-30T20:00:00Z") == "2026-12-01"
        assert local_date("2026-11-30T20:00:00") == "2026-11-30"  # naive = already local
        assert local_date("not a time") is None
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_simple_resumed_session_keeps_both_turns():
    msgs = _render(fixture(SIMPLE))
    assert [m.role for m in msgs] == ["user", "assistant", "user", "assistant"]
    assert "teal" in msgs[0].content and "What is my favourite colour?" == msgs[2].content
