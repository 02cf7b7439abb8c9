"""Issue 21 items 9, 11, 15: one rule for every tool that opens a workspace file, and changes that a
folder swapped for a symlink cannot lead elsewhere.

* a file is opened only as itself: never through a symlink (anywhere along its path), never a device,
  pipe or socket, never with other hard links — read, stat, list, frontmatter_read and read_image alike,
  in the personal workspace and in a repository's team memory (``.reme/…``);
* reads follow the path policy of writes: ``config.json``, other root files and ``metadata/`` are
  unreachable, ``session/`` is readable; what ``read`` returns is redacted like everything else that
  reaches the model;
* a thread swapping a folder for a symlink while ``move``/``write`` run changes nothing outside the
  layers (real threads, real renames; the issue needed 2-83 tries to replace config.json).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from reme_cc.base.errors import PathError, ReMeError
from reme_cc.notes.store import NoteStore
from support.files_helpers import put, run
from support.project_corpus import git_init

ANT_KEY = "sk-" + "ant-api03-" + "Zq3" * 30
OUTSIDE_NOTE = "---\nname: OUTSIDE-NAME\ndescription: outside-description\n---\nthe outside text\n"


def within(seconds: float, fn, *unblock: Path):
    """fn() in a thread; fails when it has not returned after ``seconds`` (a pipe opened for reading
    blocks forever), then opens each ``unblock`` FIFO for writing so the thread can end."""
    box: dict = {}

    def go():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            box["error"] = exc

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        for fifo in unblock:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        t.join(5)
        pytest.fail(f"{fn} did not return within {seconds} s (it opened a pipe)")
    if "error" in box:
        raise box["error"]
    return box["value"]


def hostile_entries(tmp_path: Path, folder: Path) -> list[Path]:
    """Plant in ``folder``: a symlink out, a symlink to a FIFO, a FIFO, a hard link to a file outside
    and a symlinked folder; return the FIFOs (to unblock a reader that got stuck)."""
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text(OUTSIDE_NOTE)
    (outside / "netrc").write_text(OUTSIDE_NOTE)
    (outside / "dir").mkdir(exist_ok=True)
    (outside / "dir" / "n.md").write_text(OUTSIDE_NOTE)
    fifo_out = outside / "fifo"
    if not fifo_out.exists():
        os.mkfifo(fifo_out)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "link.md").symlink_to(outside / "secret.md")
    (folder / "stdin.md").symlink_to(fifo_out)
    os.mkfifo(folder / "pipe.md")
    os.link(outside / "netrc", folder / "netrc.md")
    (folder / "linked").symlink_to(outside / "dir")
    (folder / "real.md").write_text("---\nname: real\ndescription: a real note\n---\nreal text\n")
    return [fifo_out, folder / "pipe.md"]


BAD = ("link.md", "stdin.md", "pipe.md", "netrc.md", "linked/n.md")


def assert_nothing_outside_shown(result) -> None:
    shown = json.dumps(result.model_dump()) + result.text()
    assert "OUTSIDE-NAME" not in shown and "outside-description" not in shown and "the outside text" not in shown


def check_every_tool(ctx, prefix: str, fifos: list[Path]) -> None:
    listed = within(10, lambda: run(ctx, "list", path=f"{prefix}digest/wiki"), *fifos)
    assert_nothing_outside_shown(listed)
    by_path = {e.path.rsplit("/", 1)[-1]: e for e in listed.entries}
    assert by_path["real.md"].name == "real" and by_path["real.md"].refused is None
    for name in ("link.md", "stdin.md", "pipe.md", "netrc.md", "linked"):
        assert by_path[name].refused, name  # listed, never opened, with the reason
    assert "never followed" in listed.text() or "refused" in listed.text()
    assert_nothing_outside_shown(within(10, lambda: run(ctx, "list", path=f"{prefix}digest", recursive=True), *fifos))
    for tool in ("read", "stat", "frontmatter_read", "read_image"):
        for name in BAD:
            with pytest.raises(ReMeError):
                within(10, lambda: run(ctx, tool, path=f"{prefix}digest/wiki/{name}"), *fifos)
    with pytest.raises(ReMeError):
        run(ctx, "list", path=f"{prefix}digest/wiki/linked")
    assert run(ctx, "read", path=f"{prefix}digest/wiki/real.md").content.endswith("real text")


def test_no_tool_opens_a_file_through_a_symlink_nor_a_pipe_in_the_personal_workspace(ctx, ws, tmp_path):
    fifos = hostile_entries(tmp_path, ws.root / "digest" / "wiki")
    (ws.root / "digest" / "wiki" / "config.md").symlink_to("../../config.json")  # a link inside, to a root file
    check_every_tool(ctx, "", fifos)
    with pytest.raises(PathError):
        run(ctx, "read", path="digest/wiki/config.md")


def test_no_tool_opens_a_file_through_a_symlink_nor_a_pipe_in_team_memory(ctx, ws, tmp_path, monkeypatch):
    repo = git_init(tmp_path / "repo")
    fifos = hostile_entries(tmp_path, repo / ".reme" / "digest" / "wiki")
    monkeypatch.chdir(repo)
    check_every_tool(ctx, ".reme/", fifos)


def test_reads_follow_the_write_path_policy_and_are_redacted(ctx, ws):
    (ws.root / "config.json").write_text(json.dumps({"api_key": ANT_KEY}))
    put(ws, "metadata/notes.txt", "derived")
    put(ws, "session/claude_code/s1.jsonl", '{"type": "user"}\n')
    for tool, path in (
        ("read", "config.json"),
        ("stat", "config.json"),
        ("frontmatter_read", "config.json"),
        ("read_image", "config.json"),
        ("read", "metadata/notes.txt"),
        ("stat", "metadata"),
        ("list", "metadata"),
        ("read", "notes.txt"),
    ):
        with pytest.raises(PathError, match="config.json|metadata|outside the memory layers|root"):
            run(ctx, tool, path=path)
    root = {e.path for e in run(ctx, "list", path="").entries}
    assert root == {"daily", "digest", "resource", "session"}
    everything = run(ctx, "list", path="", recursive=True, limit=1000)
    assert not [e.path for e in everything.entries if e.path.startswith(("metadata", "config"))]
    assert run(ctx, "read", path="session/claude_code/s1.jsonl").content == '{"type": "user"}'
    # what read returns reaches the model: redacted, line numbers kept (a key block keeps its lines)
    pem = "-----BEGIN " + "PRIVATE KEY-----\n" + "\n".join(["QUJD" * 16] * 3) + "\n-----END " + "PRIVATE KEY-----"
    netrc = "machine api.example.com login alice password " + "Netrc" + "S3cret77"
    put(ws, "resource/key.txt", f"key: {ANT_KEY}\n{pem}\n{netrc}\nlast line\n")
    got = run(ctx, "read", path="resource/key.txt")
    assert ANT_KEY not in got.content and "QUJD" not in got.content and "S3cret77" not in got.content
    assert got.total_lines == 8 and got.content.split("\n")[7] == "last line" and got.end_line == 8
    assert any("redacted" in n for n in got.notes)
    put(ws, "daily/2026-06-20/k.md", f"---\nname: k\ndescription: the key is {ANT_KEY}\ntoken: {ANT_KEY}\n---\nx\n")
    for result in (
        run(ctx, "frontmatter_read", path="daily/2026-06-20/k.md"),
        run(ctx, "stat", path="daily/2026-06-20/k.md"),
        run(ctx, "list", path="daily/2026-06-20"),
    ):
        assert ANT_KEY not in json.dumps(result.model_dump()) + result.text()


# ---- item 15: a folder swapped for a symlink while the note service works -------------------------
def snapshot(root: Path, skip: tuple[str, ...]) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir.split(os.sep)[0] in skip:
            dirnames[:] = []
            continue
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = Path(dirpath) / name
            out[os.path.relpath(p, root)] = os.readlink(p) if p.is_symlink() else p.read_bytes()
    return out


SWAPPER = """
import os, shutil, sys, time
sub, parked, stop, count = sys.argv[1:5]
n = 0
while not os.path.exists(stop):
    try:
        os.rename(sub, parked)
    except OSError:
        continue
    try:
        os.symlink("..", sub)  # daily/sub -> the workspace root
        n += 1
        time.sleep(0.0002)
        os.unlink(sub)
        os.rename(parked, sub)
    except OSError:  # the note service made daily/sub again meanwhile: start over
        shutil.rmtree(parked, ignore_errors=True)
open(count, "w").write(str(n))
"""


def test_a_folder_swapped_for_a_symlink_never_leads_a_change_outside_the_layers(ws, tmp_path):
    """A separate process swaps daily/sub for a symlink to the workspace root and back, as fast as it
    can, while this one writes, moves, restores and deletes under daily/sub/."""
    import subprocess
    import sys

    (ws.root / "config.json").write_text('{"model": "original"}')
    put(ws, "session/claude_code/s.jsonl", "{}\n")
    before = snapshot(ws.root, skip=("daily", "metadata"))
    sub = ws.root / "daily" / "sub"
    sub.mkdir(parents=True)
    store = NoteStore(ws)
    stop, count = tmp_path / "stop", tmp_path / "count"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(sub), str(ws.root / "daily" / "sub.real"), str(stop), str(count)]
    )
    tries = refused = 0
    deadline = time.monotonic() + 4.0
    try:
        while time.monotonic() < deadline:
            tries += 1
            for call in (
                lambda: store.put("daily/a.md", "x\n"),
                lambda: store.move("daily/a.md", "daily/sub/config.json", overwrite=True),
                lambda: store.put("daily/sub/config.json", "replaced\n"),
                lambda: store.write_note("daily/sub/planted.md", "planted\n", {}),
                lambda: store.restore("daily/sub/config.json", None),
                lambda: store.delete("daily/sub/config.json"),
            ):
                try:
                    call()
                except ReMeError:
                    refused += 1  # refused or not found at that moment: fine, as long as nothing else changed
    finally:
        stop.touch()
        swapper.wait(10)
    swaps = int(count.read_text())
    print(f"swaps {swaps}, rounds {tries}, calls refused {refused}")
    assert swaps > 100 and tries > 20, (swaps, tries)
    after = snapshot(ws.root, skip=("daily", "metadata"))
    assert after == before, {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert not (ws.root / "planted.md").exists() and (ws.root / "config.json").read_text() == '{"model": "original"}'
