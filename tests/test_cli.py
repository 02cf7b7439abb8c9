"""The `reme-cc` command: subprocess runs of the installed console script, plus in-process checks."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reme_cc.surfaces import cli

REME = str(Path(sys.executable).with_name("reme-cc"))


def sh(*args: str, env_ws: Path | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "REME_EMBEDDING": "none"}
    env.pop("REME_WORKSPACE", None)
    if env_ws is not None:
        env["REME_WORKSPACE"] = str(env_ws)
    return subprocess.run([REME, *args], capture_output=True, text=True, env=env, input=input, timeout=120)


def test_subprocess_roundtrip(tmp_path):
    w = tmp_path / "w"
    assert sh("init", str(w)).returncode == 0
    r = sh(
        "--workspace",
        str(w),
        "write",
        "digest/wiki/a.md",
        "--content",
        "Body\n\n## Sources\n- [[daily/2026-06-20/x.md]]\n",
        "--name",
        "A",
        "--metadata",
        '{"tags": ["t"]}',
    )
    assert r.returncode == 0, r.stderr
    assert "Created digest/wiki/a.md" in r.stdout
    # --workspace after the subcommand; --json output
    r = sh("read", "digest/wiki/a.md", "--start-line", "7", "--end-line", "8", "--workspace", str(w), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["content"] == "## Sources\n- [[daily/2026-06-20/x.md]]" and data["start_line"] == 7
    r = sh("move", "digest/wiki/a.md", "digest/wiki/b.md", env_ws=w)
    assert r.returncode == 0 and "Moved digest/wiki/a.md -> digest/wiki/b.md" in r.stdout
    r = sh("list", "digest", "--recursive", "--ext", "md,txt", env_ws=w)
    assert "digest/wiki/b.md" in r.stdout
    r = sh("frontmatter-delete", "digest/wiki/b.md", "--keys", "tags", "--keys", "nothing", env_ws=w)
    assert r.returncode == 0, r.stderr
    r = sh("daily-list", "2026-06-20", env_ws=w)
    assert r.returncode == 0 and "no daily cards" in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["read", "../etc/passwd"], "'..'"),
        (["read", "daily/missing.md"], "does not exist"),
        (["daily-list", "2026-13-40"], "invalid date"),
        (["write", "x.md", "--content", "x", "--metadata", "{not json"], "not valid JSON"),
        (["read"], "required"),
        (["no-such-command"], "invalid choice"),
        (["read", "x.md", "--bogus"], "unrecognized"),
    ],
)
def test_errors_one_line_exit_1(tmp_path, args, message):
    (tmp_path / "w").mkdir()
    r = sh("--workspace", str(tmp_path / "w"), *args)
    assert r.returncode == 1
    assert message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert r.stdout == ""


def test_init_git(tmp_path):
    w = tmp_path / "g"
    r = sh("init", str(w), "--git")
    assert r.returncode == 0, r.stderr
    assert (w / "daily").is_dir() and (w / ".git").is_dir()
    assert "metadata/" in (w / ".gitignore").read_text()
    (w / "metadata" / "index.db").write_text("x")
    ignored = subprocess.run(["git", "-C", str(w), "check-ignore", "metadata/index.db"], capture_output=True, text=True)
    assert ignored.returncode == 0


def test_help_lists_every_tool(tmp_path):
    r = sh("--help", env_ws=tmp_path / "w")
    assert r.returncode == 0
    for name in (
        "read",
        "write",
        "edit",
        "move",
        "delete",
        "list",
        "stat",
        "frontmatter-read",
        "frontmatter-update",
        "frontmatter-delete",
        "read-image",
        "daily-create",
        "daily-list",
        "daily-reindex",
        "init",
        "demo",
    ):
        assert name in r.stdout


# ---- in process -----------------------------------------------------------------------------------------
def test_option_kinds(tmp_path, capsys):
    from reme_cc.tools import all_tools

    parser = cli.build_parser(["move"])
    args = parser.parse_args(["move", "a.md", "b.md", "--overwrite", "--no-rewrite-links"])
    assert cli._arguments(all_tools()["move"], args) == {
        "src": "a.md",
        "dst": "b.md",
        "overwrite": True,
        "rewrite_links": False,
    }
    args = parser.parse_args(["list", "--ext", "md,jsonl", "--ext", "yaml", "--limit", "3", "--sort", "mtime"])
    assert cli._arguments(all_tools()["list"], args) == {"ext": ["md", "jsonl", "yaml"], "limit": 3, "sort": "mtime"}
    args = parser.parse_args(["frontmatter-update", "x.md", "--updates", '{"a": [1, 2]}'])
    assert cli._arguments(all_tools()["frontmatter_update"], args) == {"path": "x.md", "updates": {"a": [1, 2]}}


def test_broken_extension_is_skipped_with_warning(monkeypatch, tmp_path, capsys):
    bad = tmp_path / "ext_pkg"
    bad.mkdir()
    (bad / "reme_test_broken_ext.py").write_text("raise RuntimeError('boom')\n")
    (bad / "reme_test_good_ext.py").write_text(
        "def register_cli(sub):\n"
        "    p = sub.add_parser('hello')\n"
        "    p.set_defaults(func=lambda args: print('hi') or 0)\n"
    )
    monkeypatch.syspath_prepend(str(bad))
    monkeypatch.setattr(cli, "EXTENSIONS", ("reme_test_broken_ext", "reme_test_missing_ext", "reme_test_good_ext"))
    monkeypatch.setenv("REME_WORKSPACE", str(tmp_path / "w"))
    assert cli.main(["hello"]) == 0
    out = capsys.readouterr()
    assert out.out == "hi\n"
    assert "reme_test_broken_ext unavailable (RuntimeError: boom)" in out.err
    assert "reme_test_missing_ext unavailable (ModuleNotFoundError" in out.err  # never quietly absent


def test_keyboard_interrupt_and_internal_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("REME_WORKSPACE", str(tmp_path / "w"))
    monkeypatch.delenv("REME_DEBUG", raising=False)

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_cmd_init", interrupted)
    assert cli.main(["init"]) == 1
    assert capsys.readouterr().err.strip() == "reme-cc: interrupted"

    def bug(args):
        raise ZeroDivisionError("x")

    monkeypatch.setattr(cli, "_cmd_init", bug)
    assert cli.main(["init"]) == 1
    err = capsys.readouterr().err
    assert "internal error: ZeroDivisionError" in err and len(err.strip().splitlines()) == 1


def test_broken_pipe(tmp_path):
    w = tmp_path / "w"
    (w / "daily" / "2026-06-20").mkdir(parents=True)
    for i in range(300):
        (w / "daily" / "2026-06-20" / f"n{i}.md").write_text("x")
    env = {**os.environ, "REME_WORKSPACE": str(w), "REME_EMBEDDING": "none"}
    p = subprocess.run(
        f"'{REME}' read-image resource/nothing.png; '{REME}' list daily --recursive | head -c 1",
        shell=True,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "Traceback" not in p.stderr and "does not exist" in p.stderr
    # the reader has what it wanted: the command ends quietly, with the status of a SIGPIPE'd tool
    for i in range(300, 3000):  # more than a pipe's buffer: the write after `head` left fails
        (w / "daily" / "2026-06-20" / f"n{i}.md").write_text("x")
    p = subprocess.run(
        f"set -o pipefail; '{REME}' list daily --recursive --limit 5000 | head -n 1",
        shell=True,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        executable="/bin/bash",
    )
    assert p.stderr == "" and p.returncode == 141 and p.stdout.count("\n") == 1, p


def test_every_command_takes_json_and_workspace_before_or_after_it(tmp_path):
    parser = cli.build_parser(["--help"])
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, sub in commands.choices.items():
        assert {"--json", "--workspace"} <= set(sub._option_string_actions), name
    w = tmp_path / "w"
    assert sh("init", str(w), "--json").returncode == 0
    for argv in (
        ["doctor", "--json", "--workspace", str(w)],
        ["--json", "--workspace", str(w), "doctor"],
        ["--json", "status", "--workspace", str(w)],
        ["embed", "--json", "--workspace", str(w)],
        ["trust", "--list", "--workspace", str(w), "--json"],
    ):
        r = sh(*argv)
        assert r.stdout.lstrip().startswith("{"), (argv, r.stdout, r.stderr)
        json.loads(r.stdout)


def test_a_workspace_that_does_not_exist_is_refused_not_created(tmp_path):
    missing = tmp_path / "typo"
    for argv in (
        ["search", "deploy", "--workspace", str(missing)],
        ["status", "--json", "--workspace", str(missing)],
        ["--workspace", str(missing), "write", "digest/wiki/a.md", "--content", "x"],
    ):
        r = sh(*argv)
        assert r.returncode == 1 and r.stdout == "", r
        assert f"--workspace {missing} does not exist" in r.stderr and f"reme-cc init {missing}" in r.stderr
    doctor = sh("--workspace", str(missing), "doctor")  # doctor checks it and says so, among its checks
    assert doctor.returncode == 1 and f"PROBLEM workspace: {missing} does not exist" in doctor.stdout
    assert not missing.exists()
    assert sh("init", str(missing)).returncode == 0 and missing.is_dir()  # init (and demo) create one


def test_an_empty_workspace_says_so(tmp_path):
    w = tmp_path / "w"
    assert sh("init", str(w)).returncode == 0
    status = sh("--workspace", str(w), "status").stdout
    assert "the workspace is empty" in status and "% of 0 chunks" not in status
    found = sh("--workspace", str(w), "search", "deploy").stdout
    assert found.startswith("no results") and "the workspace is empty" in found


def test_demo(tmp_path, monkeypatch):
    """What the demo refuses, before it starts anything (the whole run: tests/test_demo.py)."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.md").write_text("mine")
    r = sh("demo", str(tmp_path / "mine"))
    assert r.returncode == 1 and "not empty" in r.stderr
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.md"]  # nothing touched
    (tmp_path / "afile").write_text("x")
    r = sh("demo", str(tmp_path / "afile"))
    assert r.returncode == 1 and "is a file" in r.stderr
    # --real spends money: only with a login or a key, and it says how to get one or to go offline
    for k in [k for k in os.environ if k in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(tmp_path / "no-login"))
    r = sh("demo", str(tmp_path / "real"), "--real")
    if sys.platform != "darwin":  # macOS keeps the login in the keychain: the CLI is asked instead
        assert (
            r.returncode == 1
            and "/login" in r.stderr
            and "ANTHROPIC_API_KEY" in r.stderr
            and "leave out --real" in r.stderr
        )
        assert not (tmp_path / "real").exists()
