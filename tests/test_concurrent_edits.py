"""No lost updates: processes and threads changing the same note through the tools all land."""

from __future__ import annotations

import subprocess
import sys
import threading

from reme_cc.notes.frontmatter import parse_note
from reme_cc.tools import all_tools

WORKER = r"""
import sys
from reme_cc.tools import Context, all_tools
ctx = Context.open(sys.argv[1])
tools = all_tools()
tag = sys.argv[2]
for i in range(int(sys.argv[3])):
    tools["frontmatter_update"].run(ctx, {"path": "daily/2026-06-20/shared.md", "updates": {f"{tag}_{i}": i}})
    tools["edit"].run(ctx, {"path": "daily/2026-06-20/shared.md", "old_text": "<!-- end -->",
                            "new_text": f"- {tag} {i}\n<!-- end -->"})
ctx.close()
"""


def _note(ws) -> str:
    return (ws.root / "daily/2026-06-20/shared.md").read_text()


def test_two_processes_editing_one_note_lose_nothing(ws, ctx):
    all_tools()["write"].run(
        ctx, {"path": "daily/2026-06-20/shared.md", "name": "shared", "content": "# log\n<!-- end -->\n"}
    )
    n = 15
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(ws.root), tag, str(n)], stderr=subprocess.PIPE)
        for tag in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err.decode()
    text = _note(ws)
    meta = parse_note(text).meta
    for tag in ("a", "b"):
        for i in range(n):
            assert meta.get(f"{tag}_{i}") == i, f"lost frontmatter update {tag}_{i}"
            assert f"- {tag} {i}\n" in text, f"lost edit {tag} {i}"


def test_threads_of_one_process_lose_nothing(ws, ctx):
    tools = all_tools()
    tools["write"].run(ctx, {"path": "daily/2026-06-20/shared.md", "name": "shared", "content": "<!-- end -->\n"})
    errors: list[BaseException] = []

    def work(tag: str) -> None:
        try:
            for i in range(20):
                tools["edit"].run(
                    ctx,
                    {
                        "path": "daily/2026-06-20/shared.md",
                        "old_text": "<!-- end -->",
                        "new_text": f"- {tag} {i}\n<!-- end -->",
                    },
                )
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in "xyz"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    text = _note(ws)
    assert sum(text.count(f"- {t} ") for t in "xyz") == 60
