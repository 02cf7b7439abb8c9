"""README's tool and configuration tables stay equal to the registry and to Config (in the manner of
sqlite-utils' test_commands_are_documented): a tool or setting added, renamed or removed without its
README row fails here."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from reme_cc.base.config import Config
from reme_cc.tools import all_tools

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def table_after(heading: str, first_header: str) -> list[list[str]]:
    """The rows (cells) of the first Markdown table under ``heading`` whose first header is ``first_header``."""
    section = README.split(heading, 1)[1]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def names(cell: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`", cell)


def test_every_tool_is_in_the_readme_table_and_nothing_else():
    documented = [n for row in table_after("## Tools and CLI", "tools") for n in names(row[1])]
    assert len(documented) == len(set(documented)), "a tool is listed twice"
    # the product's own tools (a test may have registered its echo tools into this process's registry)
    shipped = {n for n, t in all_tools().items() if t.fn.__module__.startswith("reme_cc.")}
    assert set(documented) == shipped, (
        f"README lacks {sorted(shipped - set(documented))}; README lists unknown {sorted(set(documented) - shipped)}"
    )


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def test_every_setting_is_in_the_readme_table_with_its_default():
    fields = {f.name: f.default for f in dataclasses.fields(Config)}
    documented: dict[str, str] = {}
    for key_cell, default_cell, _meaning in table_after("## Configuration", "key"):
        keys = [k for k in names(key_cell) if k in fields or k == "workspace"]
        assert keys, f"README row {key_cell!r} names no setting"
        defaults = [d.strip().strip("`").replace(",", "") for d in default_cell.split(" / ")] if default_cell else []
        for i, key in enumerate(keys):
            documented[key] = defaults[i] if len(defaults) == len(keys) else ""
    documented.pop("workspace")  # not a Config field: the folder itself (REME_WORKSPACE / the plugin option)
    assert set(documented) == set(fields), (
        f"README lacks {sorted(set(fields) - set(documented))}; lists unknown {sorted(set(documented) - set(fields))}"
    )
    for key, shown in documented.items():
        assert shown == _shown(fields[key]), f"README says {key} defaults to {shown!r}, Config says {fields[key]!r}"


def test_the_plugin_options_readme_names_are_the_ones_plugin_json_declares():
    """Issue 22, item 5: README says plainly which settings are plugin options (the rest go in
    config.json or REME_<KEY>); the list must be the manifest's, and each a real setting."""
    import json

    manifest = json.loads((Path(__file__).resolve().parent.parent / ".claude-plugin" / "plugin.json").read_text())
    declared = set(manifest["userConfig"])
    sentence = README.split("**Which way to set what.**", 1)[1].split("Every other setting", 1)[0]
    assert set(names(sentence)) == declared
    assert declared - {"workspace"} <= {f.name for f in dataclasses.fields(Config)}
