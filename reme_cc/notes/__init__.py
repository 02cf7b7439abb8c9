"""The notes layer: frontmatter, the one wikilink parser, and the chunker (no index/tools imports)."""

from .chunker import Chunk, chunk_file
from .frontmatter import Note, merge_frontmatter, parse_note, render_note
from .wikilinks import Resolution, WikiLink, build_stems, parse_links, resolve_target, rewrite_links

__all__ = [
    "Chunk",
    "chunk_file",
    "Note",
    "parse_note",
    "merge_frontmatter",
    "render_note",
    "WikiLink",
    "Resolution",
    "parse_links",
    "rewrite_links",
    "resolve_target",
    "build_stems",
]
