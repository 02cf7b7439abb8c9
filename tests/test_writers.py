"""Notes change only through the note service (docs/ARCHITECTURE.md, notes/store.py): the functions and
classes that write files at all are exactly the ones named here, each with what it writes. A new writer
fails this test until it is added with its reason — and a note it writes goes through ``ctx.notes``."""

from __future__ import annotations

import ast

from test_layers import modules

# module.definition (a top-level function or class) -> what it writes
WRITERS = {
    # the note service, and the primitives it writes by
    "reme_cc.notes.store.NoteStore": "every change of a note: tools, recorder, dream and its undo, resources, share",
    "reme_cc.base.workspace.Workspace": "atomic writes by folder descriptors, logs",
    "reme_cc.base.workspace.atomic_write": "the atomic write of a path outside the API",
    "reme_cc.base.workspace._chmod_private": "making the workspace private",
    "reme_cc.base.workspace.file_lock": "lock files",
    "reme_cc.base.nofollow.write_file": "the write by folder descriptors",
    "reme_cc.base.nofollow.write_at": "the write by folder descriptors",
    "reme_cc.base.nofollow.rename": "the rename by folder descriptors",
    "reme_cc.base.nofollow.remove": "the removal by folder descriptors",
    "reme_cc.base.nofollow._remove_tree": "the removal by folder descriptors",
    # the conversation copies (session/: evidence, never changed by the note service)
    "reme_cc.memory.transcript.save_state": "a copy's state in metadata/",
    "reme_cc.memory.transcript._own_file": "a copy made a file of its own (hard links)",
    "reme_cc.memory.transcript._repair_tail": "a copy's torn last line",
    "reme_cc.memory.transcript._append": "session/claude_code/<id>.jsonl",
    "reme_cc.memory.auto_memory.save_dialog": "session/dialog/<id>.jsonl",
    # derived state in metadata/
    "reme_cc.memory.recording.request": "the recording request flag in metadata/locks/",
    "reme_cc.memory.recording.record_rounds": "the recording request flag, cleared",
    "reme_cc.memory.recording.save_cursor": "the recorder's cursor in metadata/auto_memory/",
    "reme_cc.memory.gitlog.save_run": "a dream's change list and before-copies in metadata/dream/",
    "reme_cc.memory.gitlog.undo_last_run": "the change list marked undone",
    "reme_cc.memory.forget._rewrite_session": "session/ copies: the forgotten text marked (the one change of evidence)",
    "reme_cc.memory.forget._rewrite_metadata": "derived files in metadata/ holding a forgotten text",
    "reme_cc.memory.forget.record_run": "metadata/forget.json (that a forget ran, never what)",
    "reme_cc.index.database.scrub": "the BM25 snapshot and vector files, deleted after a forget",
    "reme_cc.memory.dream.save_catalog": "metadata/dream/catalog.json",
    "reme_cc.memory.contradictions.save": "metadata/dream/contradictions.json (the dream's unresolved contradictions)",
    "reme_cc.memory.dream_trigger.touch": "the automatic dream's stamp",
    "reme_cc.memory.resource.save_catalog": "the resource catalog",
    "reme_cc.memory.failures._write": "metadata/failures.json",
    "reme_cc.memory.usage.add_usage": "the daily usage counters",
    "reme_cc.index.catalog.index_log": "metadata/logs/index.log",
    "reme_cc.index.catalog.remove_db_files": "the index database's files",
    "reme_cc.index.bm25.save_snapshot": "the BM25 snapshot",
    "reme_cc.index.vectors.VectorStore": "the vector file",
    "reme_cc.index.writer.CatalogWriter": "old vector files (reindex)",
    "reme_cc.index.vector_half.VectorHalf": "the replaced set's vector file (set_embeddings)",
    "reme_cc.index.catchup._write_progress": "metadata/embed-progress.json",
    "reme_cc.notes.documents.extract": "the extraction cache metadata/extract/",
    "reme_cc.notes.documents.prune_cache": "the extraction cache, pruned",
    "reme_cc.base.config.Config": "metadata/logs/settings.log and the settings last seen",
    "reme_cc.memory.prompt_recall.save_state": "metadata/recall/<session>.json: the notes a session was given",
    "reme_cc.memory.prompt_recall._forget_old_states": "per-prompt recall's session records older than 14 days",
    "reme_cc.surfaces.recall.Listener": "its unix socket in the user's runtime folder (outside the workspace)",
    "reme_cc.surfaces.prompt_hook.ask_server": "a dead server's socket, removed",
    "reme_cc.surfaces.doctor._workspace": "a write probe in metadata/",
    "reme_cc.surfaces.doctor._claude_cli": "the bundled CLI's version, kept in metadata/",
    # outside the workspace's notes
    "reme_cc.index.dictionary.load": "the machine-wide jieba table in ~/.cache/reme-cc/",
    "reme_cc.index.translate._build": "the machine-wide dictionary table in ~/.cache/reme-cc/ (built beside, renamed into place)",
    "reme_cc.memory.trust.decide": "trusted-repositories.json next to config.json",
    "reme_cc.memory.team.ensure_gitignore": "the team folder's .gitignore",
    "reme_cc.memory.team.create_folder": "the team folder's .gitignore",
    "reme_cc.surfaces.cli._cmd_init": "the workspace's .gitignore",
    "reme_cc.surfaces.cli.main": "/dev/null for a reader that stopped early",
    "reme_cc.surfaces.hooks._export_for_bash": "CLAUDE_ENV_FILE (Claude Code's environment file)",
    "reme_cc.base.bootstrap.spawn_detached": "a detached process's log",
    "reme_cc.base.bootstrap._build": "the plugin env and its build log",
    "reme_cc.base.bootstrap._fail": "the plugin env's error file",
    "reme_cc.surfaces.demo._prepare": "the demo's own folder",
    "reme_cc.surfaces.demo.run_demo": "the demo's sample project",
}

METHODS = {"write_text", "write_bytes", "touch", "unlink", "rmdir", "symlink_to", "hardlink_to", "chmod"}
MOVES = {"rename", "replace"}  # Path.rename(target) / Path.replace(target): one argument (str.replace has two)
OS = {
    "replace",
    "rename",
    "remove",
    "unlink",
    "rmdir",
    "removedirs",
    "truncate",
    "ftruncate",
    "link",
    "symlink",
    "utime",
    "chmod",
    "write",
}
SHUTIL = {"rmtree", "move", "copy", "copy2", "copyfile", "copytree"}
HELPERS = {"atomic_write", "write_file", "write_at"}
NOFOLLOW = {"rename", "remove"}
OPEN_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
GIT_WORK_TREE = {
    "revert",
    "checkout",
    "reset",
    "restore",
    "stash",
    "merge",
    "pull",
    "rebase",
    "cherry-pick",
    "apply",
    "rm",
    "mv",
    "clean",
    "switch",
    "am",
}


def writes(tree: ast.AST) -> set[str]:
    """The file-writing calls in a piece of code (lazy ones inside functions too)."""
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        base = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
        strings = {a.value for a in ast.walk(node) if isinstance(a, ast.Constant) and isinstance(a.value, str)}
        if name == "open" and base in ("", "io", "builtins"):
            mode = (
                node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            )
            if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                found.add(f"open({mode.value!r})")
        elif name == "open" and base == "os":
            if {a.attr for a in ast.walk(node) if isinstance(a, ast.Attribute)} & OPEN_FLAGS:
                found.add("os.open for writing")
        elif (base, name) in {("os", n) for n in OS} | {("shutil", n) for n in SHUTIL} | {
            ("nofollow", n) for n in NOFOLLOW
        }:
            found.add(f"{base}.{name}")
        elif name in HELPERS:
            found.add(name)
        elif isinstance(f, ast.Attribute) and (
            name in METHODS or (name in MOVES and len(node.args) == 1 and not node.keywords)
        ):
            found.add(f".{name}()")
        if ("git" in name or "git" in strings) and strings & GIT_WORK_TREE:  # git changing the work tree
            found.add("git " + "/".join(sorted(strings & GIT_WORK_TREE)))
    return found


def test_the_scan_sees_every_kind_of_write():
    sample = ast.parse(
        "p.write_text('x')\np.write_bytes(b'')\natomic_write(p, b'')\nopen(p, 'w')\nopen(p, mode='ab')\n"
        "nofollow.write_at(d, 'n', b'')\nnofollow.remove(root, rel)\nos.replace(a, b)\nshutil.rmtree(p)\n"
        "os.open(p, os.O_WRONLY | os.O_CREAT)\n_git(root, 'revert', '--no-edit', sha)\nsubprocess.run(['git', 'checkout', 'x'])\n"
        "p.rename(q)\n"
    )
    assert writes(sample) == {
        ".write_text()",
        ".write_bytes()",
        "atomic_write",
        "open('w')",
        "open('ab')",
        "write_at",
        "nofollow.remove",
        "os.replace",
        "shutil.rmtree",
        "os.open for writing",
        "git revert",
        "git checkout",
        ".rename()",
    }
    harmless = "open(p)\nopen(p, 'rb')\ns.replace('a', 'b')\nos.open(p, os.O_RDONLY)\n_git(root, 'commit', '-m', m)\n"
    assert writes(ast.parse(harmless)) == set()


def writers() -> dict[str, set[str]]:
    """{module.definition: its file-writing calls} for every top-level function and class that has any
    (module-level statements count as the module itself)."""
    out: dict[str, set[str]] = {}
    for module, path in modules().items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            named = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            calls = writes(node)
            if calls:
                out.setdefault(f"{module}.{node.name}" if named else module, set()).update(calls)
    return out


def test_only_the_named_definitions_write_files():
    found = writers()
    new = {name: sorted(calls) for name, calls in found.items() if name not in WRITERS}
    assert not new, (
        f"{new}: new code writes files. A note is changed only through the note service "
        "(ctx.notes); derived state may be written directly: add it to WRITERS with what it writes"
    )
    gone = sorted(set(WRITERS) - set(found))
    assert not gone, f"{gone} no longer write files: remove them from WRITERS"
