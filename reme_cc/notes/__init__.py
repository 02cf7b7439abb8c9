"""The notes layer: the note service (store.py), the evidence rule, frontmatter, the one wikilink
parser, the chunker and the shared text rules. No index, tools or agent imports. Import submodules
directly; this package imports nothing (so reading a note never loads the Markdown parser)."""
