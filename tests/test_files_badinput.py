"""Issue #2 "Bad input": every file/daily tool against outside paths, missing files, binary files,
invalid UTF-8, malformed frontmatter, unterminated fences, a 50 MB file and empty strings — a clear
ReMeError or a documented best-effort result, nothing written, nothing lost. By example and with
hypothesis."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reme_cc.base.errors import ReMeError
from reme_cc.tools import all_tools
from support.files_helpers import put, snapshot

# mutating tools last, move/delete at the very end (they take the fixture file away)
FILE_TOOLS = (
    "read",
    "list",
    "stat",
    "frontmatter_read",
    "read_image",
    "edit",
    "frontmatter_update",
    "frontmatter_delete",
    "write",
    "move",
    "delete",
)
DAILY_TOOLS = ("daily_create", "daily_list", "daily_reindex")
# best-effort successes documented in the tool descriptions / README
READ_ONLY = {"read", "list", "stat", "frontmatter_read", "read_image", "daily_list"}


def args_for(tool: str, path: str) -> dict:
    return {
        "read": {"path": path},
        "write": {"path": path, "content": "new text"},
        "edit": {"path": path, "old_text": "body", "new_text": "BODY"},
        "move": {"src": path, "dst": "digest/wiki/moved.md"},
        "delete": {"path": path},
        "list": {"path": path},
        "stat": {"path": path},
        "frontmatter_read": {"path": path},
        "frontmatter_update": {"path": path, "updates": {"k": "v"}},
        "frontmatter_delete": {"path": path, "keys": ["name"]},
        "read_image": {"path": path},
    }[tool]


@pytest.fixture
def bad_ws(ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret body\n")
    os.symlink(outside, ws.root / "resource" / "escape")
    put(ws, "resource/bin.md", b"\x89PNG\r\n\x1a\n\x00\x00body\x00" * 50)
    put(ws, "daily/2026-06-20/bad-utf8.md", b"---\nname: caf\xe9\n---\nbody \xff\xfe\n")
    put(ws, "daily/2026-06-20/bad-fm.md", "---\nname: [unclosed\n  : : :\n---\nbody\n")
    put(ws, "digest/wiki/fence.md", "## Sources\n- [[daily/2026-06-20/x.md]]\n```python\n[[digest/wiki/a.md]] body\n")
    return ws


def make_big(ws) -> None:
    with open(ws.root / "resource" / "big.md", "wb") as fh:
        block = b"body line with some text [[daily/2026-06-20/x.md]]\n" * 20_000
        while fh.tell() < 50 * 1024 * 1024:
            fh.write(block)


CASES = {
    "outside-dotdot": "../outside/secret.md",
    "outside-abs": "/etc/passwd",
    "outside-symlink": "resource/escape/secret.md",
    "missing": "daily/2026-06-20/missing.md",
    "binary": "resource/bin.md",
    "invalid-utf8": "daily/2026-06-20/bad-utf8.md",
    "malformed-frontmatter": "daily/2026-06-20/bad-fm.md",
    "unterminated-fence": "digest/wiki/fence.md",
    "50mb": "resource/big.md",
    "empty": "",
    "nul": "daily/a\x00b.md",
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_matrix(ctx, bad_ws, tmp_path, case):
    path = CASES[case]
    if case == "50mb":
        make_big(bad_ws)
    outcomes = {}
    for tool in FILE_TOOLS:
        before = snapshot(bad_ws.root)
        outside_before = snapshot(tmp_path / "outside")
        try:
            result = all_tools()[tool].run(ctx, args_for(tool, path))
            assert result.text()  # renders without error
            outcome = "ok"
        except ReMeError as exc:
            msg = str(exc)
            assert msg and "\n" not in msg and "Traceback" not in msg
            outcome = "error"
        after = snapshot(bad_ws.root)
        assert snapshot(tmp_path / "outside") == outside_before, f"{tool} touched a file outside the workspace"
        if outcome == "error" or tool in READ_ONLY:
            assert after == before, f"{tool} on {case} changed files although it {outcome}"
        outcomes[tool] = outcome
        if outcome == "ok" and tool in ("move", "delete"):
            break  # the fixture file is gone or elsewhere now: later tools would test something else
    if case.startswith("outside") or case in ("empty", "nul"):  # empty path = the root for list/stat only
        assert all(v == "error" for t, v in outcomes.items() if t not in ("list", "stat") or case != "empty"), outcomes
    if case == "missing":  # write creates the file (its job); everything before it is a clear error
        assert all(outcomes[t] == "error" for t in FILE_TOOLS[:8]) and outcomes["write"] == "ok", outcomes
    if case == "binary":
        assert outcomes["read"] == outcomes["edit"] == outcomes["write"] == "error"
    if case == "invalid-utf8":
        assert outcomes["read"] == "ok" and outcomes["edit"] == "error" and outcomes["write"] == "error"
    if case == "malformed-frontmatter":
        assert outcomes["read"] == outcomes["frontmatter_read"] == "ok"
        assert outcomes["write"] == outcomes["frontmatter_update"] == outcomes["frontmatter_delete"] == "error"
    if case == "unterminated-fence":  # the unterminated fence hides [[digest/wiki/a.md]]: edit keeps working
        assert outcomes["read"] == outcomes["edit"] == "ok"
    if case == "50mb":
        assert outcomes["read"] == outcomes["stat"] == "ok" and outcomes["edit"] == "error"


@pytest.mark.parametrize("value", ["", "   ", "2026-13-40", "yesterday", "../../etc", "2026-06-20\x00"])
def test_daily_bad_dates(ctx, ws, value):
    before = snapshot(ws.root)
    for tool in DAILY_TOOLS:
        try:
            all_tools()[tool].run(ctx, {"date": value})
        except ReMeError as exc:
            assert "date" in str(exc)
            assert snapshot(ws.root) == before
        else:
            assert value.strip() == ""  # blank means today: documented


def test_unknown_and_wrong_typed_arguments(ctx):
    for tool in FILE_TOOLS + DAILY_TOOLS:
        with pytest.raises(ReMeError, match="unknown argument"):
            all_tools()[tool].run(ctx, {"bogus": 1})
    with pytest.raises(ReMeError, match="start_line"):
        all_tools()["read"].run(ctx, {"path": "x.md", "start_line": "three"})


# ---- hypothesis ---------------------------------------------------------------------------------------
PATH_CHARS = st.sampled_from(
    list("ab/.\\~:|*?\x00 -_") + ["..", "/", "C:", "con", "ü", "光", "\n", "daily/", "digest/"]
)
paths = st.lists(PATH_CHARS, max_size=12).map("".join)
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(path=paths, tool=st.sampled_from(FILE_TOOLS))
def test_fuzz_paths_never_escape(ctx, ws, tmp_path, path, tool):
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "keep.md").write_text("keep\n")
    before = snapshot(tmp_path, skip_metadata=False)
    outside_files = {k: v for k, v in before.items() if not k.startswith("ws/")}
    try:
        all_tools()[tool].run(ctx, args_for(tool, path + (".md" if tool == "write" else "")))
    except ReMeError as exc:
        assert str(exc) and "\n" not in str(exc)
    after = snapshot(tmp_path, skip_metadata=False)
    assert {k: v for k, v in after.items() if not k.startswith("ws/")} == outside_files


@FUZZ
@given(
    content=st.text(max_size=300),
    name=st.one_of(st.none(), st.text(max_size=40)),
    meta=st.dictionaries(
        st.text(min_size=1, max_size=10),
        st.one_of(st.text(max_size=20), st.integers(), st.lists(st.text(max_size=5), max_size=3)),
        max_size=3,
    ),
)
def test_fuzz_write_then_read(ctx, ws, content, name, meta):
    from reme_cc.notes.frontmatter import parse_note

    rel = "daily/2026-06-20/fuzz.md"
    try:
        all_tools()["write"].run(ctx, {"path": rel, "content": content, "name": name, "metadata": meta})
    except ReMeError as exc:
        assert "\n" not in str(exc)
        return
    text = (ws.root / rel).read_text(encoding="utf-8")
    note = parse_note(text)
    if name is not None and not content.startswith("---"):
        assert note.error is None and note.meta.get("name") == name
        for k, v in meta.items():
            if k not in ("name",):
                assert note.meta.get(k) == v
    res = all_tools()["read"].run(ctx, {"path": rel})
    assert isinstance(res.content, str)


@FUZZ
@given(old=st.text(max_size=20), new=st.text(max_size=20), replace_all=st.booleans())
def test_fuzz_edit(ctx, ws, old, new, replace_all):
    rel = "daily/2026-06-20/e.md"
    original = "alpha beta\nbeta gamma 光伏\n"
    put(ws, rel, original)
    try:
        res = all_tools()["edit"].run(ctx, {"path": rel, "old_text": old, "new_text": new, "replace_all": replace_all})
    except ReMeError:
        assert (ws.root / rel).read_text() == original
        return
    expected = original.replace(old, new)
    assert (ws.root / rel).read_text() == expected and res.replacements == original.count(old)
