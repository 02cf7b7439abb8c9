"""The workspace layer: safe paths, atomic writes, locks."""

from __future__ import annotations

import os
import threading
import time

import pytest

from reme_cc.base.errors import InvalidInputError, LockedError, NotFoundError, PathError
from reme_cc.base.workspace import LAYERS, Workspace, atomic_write, file_lock


def test_layers_created_on_first_use(tmp_path):
    ws = Workspace(tmp_path / "w")
    for layer in LAYERS:
        assert (ws.root / layer).is_dir()
    assert ws.logs.is_dir()


def test_no_create_requires_existing(tmp_path):
    with pytest.raises(NotFoundError, match="reme-cc init"):
        Workspace(tmp_path / "missing", create=False)


def test_default_root_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("REME_WORKSPACE", str(tmp_path / "envws"))
    assert Workspace().root == (tmp_path / "envws").resolve()


@pytest.mark.parametrize(
    "bad, message",
    [
        ("", "empty"),
        ("../x.md", "'..'"),
        ("daily/../../x.md", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/x.md", "absolute"),
        ("~/x.md", "'~'"),
        ("a\x00b.md", "NUL"),
        ("daily\\x.md", "separator"),
        ("daily/CON.md", "reserved"),
        ("daily/nul", "reserved"),
        ("daily/x.md.", "end with"),
        ("daily/a|b.md", "not allowed"),
        ("x" * 300 + ".md", "too long"),
    ],
)
def test_normalize_refuses(ws, bad, message):
    with pytest.raises(PathError, match=message):
        ws.normalize(bad)


def test_normalize_canonical(ws):
    assert ws.normalize("./daily//2026-06-20/./x.md") == "daily/2026-06-20/x.md"
    assert ws.normalize("", allow_root=True) == ""


def test_symlink_out_refused(ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("s")
    os.symlink(outside, ws.root / "daily" / "link")
    with pytest.raises(PathError, match="outside"):
        ws.resolve("daily/link/secret.md")
    with pytest.raises(PathError):
        ws.write_text("daily/link/new.md", "x")
    assert not (outside / "new.md").exists()


def test_symlink_inside_is_refused_too(ws):
    """Issue 21 item 9: a file is read only as itself; a symlink may lead to config.json or metadata/
    as well as out of the workspace, so none is followed (the index follows none either)."""
    (ws.root / "daily" / "real.md").write_text("hi")
    os.symlink(ws.root / "daily" / "real.md", ws.root / "daily" / "alias.md")
    with pytest.raises(PathError, match="symlink"):
        ws.read_bytes("daily/alias.md")
    assert ws.read_bytes("daily/real.md") == b"hi"


def test_read_errors(ws):
    with pytest.raises(NotFoundError):
        ws.read_bytes("daily/none.md")
    with pytest.raises(InvalidInputError, match="folder"):
        ws.read_bytes("daily")


def test_atomic_write_replaces_and_keeps_mode(ws):
    p = ws.write_text("digest/wiki/a.md", "one")
    os.chmod(p, 0o600)
    ws.write_text("digest/wiki/a.md", "two")
    assert p.read_text() == "two"
    assert (p.stat().st_mode & 0o777) == 0o600
    assert [x.name for x in p.parent.iterdir()] == ["a.md"]  # no temp files left


def test_atomic_write_failure_leaves_old_file(ws, monkeypatch):
    p = ws.write_text("digest/wiki/a.md", "old")

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(Exception, match="disk is full"):
        atomic_write(p, b"new")
    assert p.read_text() == "old"
    assert [x.name for x in p.parent.iterdir()] == ["a.md"]


def test_write_into_folder_refused(ws):
    with pytest.raises(PathError, match="folder"):
        ws.write_text("daily", "x")


def test_relpath(ws, tmp_path):
    assert ws.relpath(ws.root / "daily" / "x.md") == "daily/x.md"
    with pytest.raises(PathError):
        ws.relpath(tmp_path / "elsewhere.md")


def test_lock_excludes_and_times_out(ws):
    held = threading.Event()
    release = threading.Event()

    def holder():
        with ws.lock("dream", timeout=1):
            held.set()
            release.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)
    start = time.monotonic()
    with pytest.raises(LockedError, match="another reme process"):
        with ws.lock("dream", timeout=0.2):
            pass
    assert time.monotonic() - start < 2
    release.set()
    t.join()
    with ws.lock("dream", timeout=0):
        pass


def test_lock_name_validated(ws):
    with pytest.raises(PathError):
        ws.lock("../x")


def test_file_lock_outside_api(tmp_path):
    with file_lock(tmp_path / "l" / "a.lock", timeout=0):
        assert (tmp_path / "l" / "a.lock").exists()
