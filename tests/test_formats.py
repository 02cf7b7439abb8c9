"""One table of file formats (notes/formats.py): a format is named nowhere else, so adding one is a row."""

from __future__ import annotations

import ast
from pathlib import Path

from reme_cc.notes.formats import FORMATS, format_of

PACKAGE = Path(__file__).resolve().parent.parent / "reme_cc"
# the files reme itself names: the notes it writes, its metadata, the conversation copies, its own modules
OWN_FILES = {".md", ".json", ".jsonl", ".py"}


def test_formats_are_named_only_in_the_table():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "formats.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                ext = node.value.lower()
                if ext in FORMATS and ext not in OWN_FILES:
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.value}")
    assert not found, f"file formats named outside reme_cc/notes/formats.py: {found}"


def test_format_of_goes_by_the_end_of_the_name():
    assert format_of("resource/2026-06-20/Report.PDF").kind == "pdf"
    assert format_of("daily/.md").note  # as str.endswith has always matched it
    assert format_of("resource/x.tar.gz") is None and format_of("resource/README") is None
    assert format_of("resource/v1.2/notes") is None  # a dot in a folder name is no extension
    assert format_of("digest/a.docx").chunker == "markdown" and format_of("digest/a.docx").extracted
