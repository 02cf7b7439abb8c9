"""The one table of file formats: for each extension, how reme reads a file of it. The chunker, the
index sync, the ``read`` tool, the note service and the resource pipeline all look here, so a new
format is one row (and, for a new extracted kind, its extractor in documents.py).

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    kind: str  # markdown | text | jsonl | pdf | docx | image (documents.py's Extraction.kind for extracted ones)
    chunker: str = "plain"  # how chunker.chunk_file splits its text: markdown | pages | jsonl | plain
    indexed: bool = True  # searchable in daily/, digest/ and resource/ (session/ copies: jsonl, index_sessions)
    note: bool = False  # a Markdown note: frontmatter and wikilinks, written by the note service
    extracted: bool = False  # its text is extracted by documents.py (a bounded child process), then chunked
    paged: bool = False  # `read` takes pages
    resource_text: bool = False  # the resource agent reads it as text (documents and images have their own ways)
    yaml: bool = False  # YAML: a value starting with "[" is a list (forget writes FORGOTTEN, not [FORGOTTEN])


_NOTE = Format("markdown", "markdown", note=True, resource_text=True)
_TEXT = Format("text")
_RESOURCE_TEXT = Format("text", resource_text=True)
_IMAGE = Format("image", indexed=False)

FORMATS: dict[str, Format] = {
    ".md": _NOTE,
    ".markdown": _NOTE,
    ".mdx": Format("markdown", "markdown", indexed=False),
    ".jsonl": Format("jsonl", "jsonl", resource_text=True),
    **dict.fromkeys((".txt", ".json", ".csv", ".html", ".htm"), _RESOURCE_TEXT),
    **dict.fromkeys((".yaml", ".yml"), Format("text", resource_text=True, yaml=True)),
    **dict.fromkeys(
        (".text", ".tsv", ".log", ".rst", ".org", ".xml", ".toml", ".ini", ".py", ".js", ".ts", ".sh", ".sql"), _TEXT
    ),
    ".pdf": Format("pdf", "pages", extracted=True, paged=True),  # its text view: one "## Page N" part a page
    ".docx": Format("docx", "markdown", extracted=True),  # its text view is Markdown
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"), _IMAGE),
}


def exts(**fields: object) -> tuple[str, ...]:
    """The extensions whose format has these values, e.g. ``exts(note=True)``."""
    return tuple(ext for ext, f in FORMATS.items() if all(getattr(f, k) == v for k, v in fields.items()))


NOTE_EXTS = exts(note=True)
DOCUMENT_EXTS = exts(extracted=True)
IMAGE_EXTS = exts(kind="image")
TEXT_INDEXED_EXTS = frozenset(exts(indexed=True, extracted=False))  # chunked as they are
RESOURCE_TEXT_EXTS = frozenset(exts(resource_text=True))
PAGED_EXTS = exts(paged=True)


def format_of(path: str) -> Format | None:
    """The format of ``path`` by the end of its name (``.MD`` is ``.md``), None when unknown."""
    name = path.rpartition("/")[2].lower()
    dot = name.rfind(".")
    return FORMATS.get(name[dot:]) if dot >= 0 else None
