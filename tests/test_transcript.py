"""Transcript copies: exactly-once, incremental, robust to truncation/replacement/partial lines, private."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reme_cc.memory.transcript import (
    TOOL_EXCERPT_CHARS,
    TOOL_OUTPUT_MARK,
    copy_path,
    copy_session,
    filter_entry,
    load_state,
    read_copy,
)
from support.files_helpers import conversational_uuids
from support.redact_corpus import PRIVATE_KEY

FIXTURES = Path(__file__).parent / "fixtures" / "claude_code" / "projects" / "-home-user-project"
SESSIONS = sorted(p.stem for p in FIXTURES.glob("*.jsonl"))


def stage(tmp_path: Path, sid: str) -> Path:
    """A private copy of a fixture session (and its subagents) to grow/truncate at will."""
    dest = tmp_path / "projects" / f"{sid}.jsonl"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / f"{sid}.jsonl", dest)
    if (FIXTURES / sid).is_dir():
        shutil.copytree(FIXTURES / sid, dest.parent / sid)
    return dest


def entry(uuid: str, text: str = "hello", role: str = "user", **extra) -> dict:
    return {
        "parentUuid": None, "isSidechain": False, "type": role, "uuid": uuid,
        "timestamp": "2026-11-30T06:40:05.520Z", "sessionId": "s1", "cwd": "/p", "gitBranch": "main",
        "message": {"role": role, "content": text}, "version": "2.1.332", **extra,
    }  # fmt: skip


def write_lines(path: Path, objs, mode="a") -> None:
    with open(path, mode) as fh:
        for o in objs:
            fh.write(json.dumps(o, separators=(",", ":")) + "\n")


@pytest.mark.parametrize("sid", SESSIONS)
def test_fixture_sessions_copied_exactly_once(ws, tmp_path, sid):
    src = stage(tmp_path, sid)
    for _ in range(3):  # Stop fires every turn, again after a blocking Stop, again at SessionEnd
        copy_session(ws, sid, src)
    copied = [e["uuid"] for e in read_copy(ws, sid)]
    expected = conversational_uuids(src)
    # thinking-only assistant lines are dropped; fixtures have none, so all must be there, once, in order
    assert copied == expected
    for sub in (src.parent / sid / "subagents").glob("agent-*.jsonl"):
        sub_copy = ws.root / f"session/claude_code/{sid}/subagents/{sub.name}"
        got = [json.loads(line)["uuid"] for line in sub_copy.read_text().splitlines()]
        assert got == conversational_uuids(sub)
        assert all(json.loads(line)["isSidechain"] for line in sub_copy.read_text().splitlines())


def test_filtered_fields_and_tool_output_marked(ws, tmp_path):
    sid = "71d7eee5-6a9d-427a-8f40-f50521713e21"
    copy_session(ws, sid, stage(tmp_path, sid))
    entries = read_copy(ws, sid)
    allowed = {"type", "uuid", "parentUuid", "timestamp", "sessionId", "cwd", "gitBranch", "isSidechain",
               "agentId", "promptSource", "origin", "isMeta", "isCompactSummary", "message"}  # fmt: skip
    for e in entries:
        assert set(e) <= allowed, set(e) - allowed
        assert set(e["message"]) == {"role", "content"}
    results = [b for e in entries if isinstance(e["message"]["content"], list)
               for b in e["message"]["content"] if b["type"] == "tool_result"]  # fmt: skip
    assert len(results) == 4
    assert all(r["content"].startswith(TOOL_OUTPUT_MARK) for r in results)
    assert "toolUseResult" not in (ws.root / copy_path(sid)).read_text()


def test_incremental_appends_only_new_entries(ws, tmp_path):
    src = tmp_path / "s1.jsonl"
    write_lines(src, [entry("u1"), {"type": "queue-operation", "operation": "enqueue"}], "w")
    r1 = copy_session(ws, "s1", src)
    assert (r1.entries, r1.messages) == (1, 1)
    offset = load_state(ws, "s1")["sources"][copy_path("s1")]["offset"]
    assert offset == src.stat().st_size
    write_lines(src, [entry("u2", role="assistant", text="hi"), entry("u3")])
    r2 = copy_session(ws, "s1", src)
    assert (r2.entries, r2.messages) == (2, 2)
    assert [e["uuid"] for e in read_copy(ws, "s1")] == ["u1", "u2", "u3"]
    assert copy_session(ws, "s1", src).entries == 0
    assert load_state(ws, "s1")["pending_messages"] == 3


def test_partial_last_line_is_not_consumed(ws, tmp_path):
    src = tmp_path / "s1.jsonl"
    write_lines(src, [entry("u1")], "w")
    full = json.dumps(entry("u2", text="second")) + "\n"
    with open(src, "a") as fh:
        fh.write(full[:25])  # Claude Code is mid-write
    assert copy_session(ws, "s1", src).entries == 1
    with open(src, "a") as fh:
        fh.write(full[25:])
    assert copy_session(ws, "s1", src).entries == 1
    assert [e["uuid"] for e in read_copy(ws, "s1")] == ["u1", "u2"]


def test_truncated_and_replaced_source_never_duplicates(ws, tmp_path):
    src = tmp_path / "s1.jsonl"
    write_lines(src, [entry("u1"), entry("u2"), entry("u3")], "w")
    copy_session(ws, "s1", src)
    # truncated, then rewritten with old + new entries (e.g. a compaction rewrite)
    write_lines(src, [entry("u2"), entry("u4")], "w")
    r = copy_session(ws, "s1", src)
    assert r.rescanned and r.entries == 1
    # replaced by a new file (new inode) holding the same entries plus one
    tmp = tmp_path / "new.jsonl"
    write_lines(tmp, [entry("u1"), entry("u4"), entry("u5")], "w")
    os.replace(tmp, src)
    r = copy_session(ws, "s1", src)
    assert r.rescanned and r.entries == 1
    # same size, same inode, different bytes before the offset: detected by the tail hash
    data = src.read_bytes().replace(b'"hello"', b'"HELLO"')
    with open(src, "r+b") as fh:
        fh.write(data)
    assert copy_session(ws, "s1", src).entries == 0
    assert [e["uuid"] for e in read_copy(ws, "s1")] == ["u1", "u2", "u3", "u4", "u5"]


def test_crash_between_append_and_state_is_deduplicated(ws, tmp_path):
    src = tmp_path / "s1.jsonl"
    write_lines(src, [entry("u1")], "w")
    copy_session(ws, "s1", src)
    state_before = (ws.metadata / "transcripts" / "s1.json").read_bytes()
    write_lines(src, [entry("u2")])
    copy_session(ws, "s1", src)
    (ws.metadata / "transcripts" / "s1.json").write_bytes(state_before)  # state write "lost"
    dest = ws.root / copy_path("s1")
    with open(dest, "ab") as fh:
        fh.write(b'{"type":"user","uuid":"torn')  # and a torn half line from a power cut
    copy_session(ws, "s1", src)
    assert [e["uuid"] for e in read_copy(ws, "s1")] == ["u1", "u2"]
    assert dest.read_bytes().endswith(b"\n")


def test_resume_continues_the_same_copy(ws, tmp_path):
    sid = "cf0565d1-9dd3-4e0c-9c37-4f1acd73559e"  # two prompts; the second came from --resume
    full = (FIXTURES / f"{sid}.jsonl").read_bytes().splitlines(keepends=True)
    src = tmp_path / f"{sid}.jsonl"
    cut = next(i for i, line in enumerate(full) if b"What is my favourite colour" in line)
    src.write_bytes(b"".join(full[:cut]))
    copy_session(ws, sid, src)
    with open(src, "ab") as fh:
        fh.write(b"".join(full[cut:]))
    copy_session(ws, sid, src)
    texts = [e["message"]["content"] for e in read_copy(ws, sid) if isinstance(e["message"]["content"], str)]
    assert texts == ["Hello, remember that my favourite colour is teal.", "What is my favourite colour?"]
    assert len(read_copy(ws, sid)) == len(conversational_uuids(src))


def test_concurrent_copies_write_each_entry_once(ws, tmp_path):
    src = tmp_path / "s1.jsonl"
    write_lines(src, [entry(f"u{i}", text="x" * 300) for i in range(400)], "w")
    errors = []

    def run():
        try:
            copy_session(ws, "s1", src, lock_timeout=30)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [e["uuid"] for e in read_copy(ws, "s1")] == [f"u{i}" for i in range(400)]


def test_privacy_nothing_secret_reaches_the_workspace(ws, tmp_path):
    ant = "sk-" + "ant-api03-" + "Zx9" * 30
    ghp = "gh" + "p_" + "Ab1" * 12
    b64 = "iVBORw0KGgoAAAANSUhEUg" + "Q" * 5000
    src = tmp_path / "s1.jsonl"
    write_lines(src, [
        entry("u1", text=f"my key is {ant} and <private>my home address is 1 Elm St</private> ok"),
        entry("u2", role="assistant", text=None, message={"role": "assistant", "content": [
            {"type": "thinking", "thinking": "SECRET-THOUGHT about the user", "signature": "sig" * 100},
            {"type": "text", "text": f"token {ghp} noted. <private>unterminated secret plan"},
            {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/k", "content": PRIVATE_KEY}},
        ]}),
        entry("u3", message={"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}},
            {"type": "tool_result", "tool_use_id": "t1", "content": [
                {"type": "text", "text": "cat ~/.ssh/id_rsa\n" + PRIVATE_KEY},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}}]},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64}},
        ]}),
    ], "w")  # fmt: skip
    copy_session(ws, "s1", src)
    needles = [ant, ghp, "1 Elm St", "unterminated secret plan", "SECRET-THOUGHT", "QQQQQQQQQQ",
               PRIVATE_KEY.splitlines()[2], "BEGIN RSA PRIVATE KEY"]  # fmt: skip
    for f in ws.root.rglob("*"):
        if f.is_file():
            data = f.read_text("utf-8", "replace")
            for n in needles:
                assert n not in data, (n[:20], f)
    entries = read_copy(ws, "s1")
    assert "[REDACTED:anthropic-key]" in entries[0]["message"]["content"]
    blocks = entries[1]["message"]["content"]
    assert [b["type"] for b in blocks] == ["text", "tool_use"]  # thinking dropped
    assert "[REDACTED:github-token]" in blocks[0]["text"]
    media = [b for b in entries[2]["message"]["content"] if b["type"] in ("image", "document")]
    assert [m["omitted"] for m in media] == [True, True]


def test_long_tool_output_and_huge_lines(ws, tmp_path):
    src = tmp_path / "s1.jsonl"
    big = "line of output\n" * 800_000  # ~12 MB single JSON line
    write_lines(src, [
        entry("u1", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": big}]}),
        entry("u2", text="y" * 10_000_000),
    ], "w")  # fmt: skip
    copy_session(ws, "s1", src)
    e1, e2 = read_copy(ws, "s1")
    result = e1["message"]["content"][0]["content"]
    assert len(result) < TOOL_EXCERPT_CHARS + 100 and "more chars]" in result
    assert len(e2["message"]["content"]) < 200_000


def test_invalid_utf8_unknown_types_and_garbage_lines(ws, tmp_path):
    src = tmp_path / "s1.jsonl"
    good = json.dumps(entry("u1", text="caf\u00e9")).encode()
    bad = json.dumps(entry("u2", text="XX")).encode().replace(b"XX", b"\xff\xfe")
    src.write_bytes(b"\n".join([
        b"not json at all", b"[1,2,3]", b'{"type":"user"}', b'{"type":"mystery","uuid":"m"}', b"\x00\x01\x02",
        good, bad, json.dumps(entry("u3", message={"role": "user", "content": [{"type": "new_block", "x": 1}]})).encode(),
        b'{"type":"user","uuid":"u4","message":{"role":"user","content":' + b"[" * 5000 + b"]" * 5000 + b"}}",
    ]) + b"\n")  # fmt: skip
    copy_session(ws, "s1", src)
    uuids = [e["uuid"] for e in read_copy(ws, "s1")]
    assert uuids[:3] == ["u1", "u2", "u3"]
    assert read_copy(ws, "s1")[1]["message"]["content"] == "\ufffd\ufffd"


def test_bad_session_id_is_refused(ws, tmp_path):
    from reme_cc.base.errors import InvalidInputError

    for bad in ("../x", "", "a/b", ".hidden", None):
        with pytest.raises(InvalidInputError):
            copy_session(ws, bad, tmp_path / "x.jsonl")


def test_missing_source_is_a_no_op(ws, tmp_path):
    r = copy_session(ws, "s1", tmp_path / "nope.jsonl")
    assert r.entries == 0 and not (ws.root / copy_path("s1")).exists()


_json_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=50))
_json = st.recursive(_json_scalar, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                     max_leaves=20)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(
    st.binary(max_size=200),
    _json.map(lambda v: json.dumps(v).encode()),
    st.builds(lambda c, t: json.dumps({"type": t, "uuid": "u", "message": {"role": t, "content": c}}).encode(),
              _json, st.sampled_from(["user", "assistant"])),
), max_size=12))  # fmt: skip
def test_fuzz_transcript_lines_never_crash(ws, tmp_path, lines):
    src = tmp_path / "fuzz.jsonl"
    src.write_bytes(b"\n".join(x.replace(b"\n", b" ") for x in lines) + b"\n")
    shutil.rmtree(ws.root / "session" / "claude_code", ignore_errors=True)
    (ws.root / "session" / "claude_code").mkdir(parents=True)
    shutil.rmtree(ws.metadata / "transcripts", ignore_errors=True)
    copy_session(ws, "fz", src)
    for e in read_copy(ws, "fz"):
        assert e["type"] in ("user", "assistant") and isinstance(e["uuid"], str)
    assert copy_session(ws, "fz", src).entries == 0


def test_filter_entry_drops_non_conversational():
    assert filter_entry({"type": "attachment", "uuid": "a", "attachment": {}}) is None
    assert filter_entry({"type": "assistant", "uuid": "a", "message": {"role": "assistant",
                         "content": [{"type": "thinking", "thinking": "t"}]}}) is None  # fmt: skip
