"""The index's answers as plain records: what a file, a link, a hit or a node looks like. Standard
library only, so the layers above can name these shapes without loading the index."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable


@dataclass
class FileRecord:
    path: str
    mtime_ns: int
    size: int
    hash: str | None
    name: str | None
    description: str | None
    extra: dict[str, Any]
    date: str | None
    indexed: bool


@dataclass
class LinkRecord:
    source: str
    target: str  # as written in the wikilink
    resolved_path: str | None  # workspace path it resolves to (None = dangling/ambiguous)
    anchor: str | None
    alias: str | None
    embed: bool
    predicate: str | None
    line: int
    how: str  # exact | stem | ambiguous | missing


@dataclass(frozen=True, slots=True)
class Neighbor:  # frozen: the in-memory link graph hands the same ones to every search
    path: str
    name: str | None
    description: str | None
    predicate: str | None
    exists: bool


@dataclass
class Hit:
    """One search hit, from the index to the tool's output (tools/search.py builds its model from these fields)."""

    path: str
    start_line: int
    end_line: int
    score: float
    vector: float
    keyword: float
    text: str
    outlinks: list[Neighbor] = field(default_factory=list)
    inlinks: list[Neighbor] = field(default_factory=list)
    outlinks_total: int = 0  # distinct neighbors before the cap of 10
    inlinks_total: int = 0
    project: Any = None  # the file's frontmatter `project` (a name, a list, or None = general)
    also: list[tuple[int, int]] = field(default_factory=list)  # the note's other matching chunks (start, end line)


@dataclass
class SearchResponse:
    results: list[Hit]
    counts: dict[str, int]
    warnings: list[str] = field(default_factory=list)
    vector: list[tuple[int, float]] = field(default_factory=list)  # the vector half's (chunk id, cosine), best first
    # the chunks in the other script than the query's that stand out most among that script's own chunks:
    # (chunk id, z-score), best first (empty: one script, or too few rows of one; Recall.foreign_z)
    foreign_z: list[tuple[int, float]] = field(default_factory=list)
    scale: Any = None  # how the query's cosines spread over the chunks of its script (Recall.scale)


@dataclass(frozen=True)
class Only:
    """Which notes a search may return, applied before ranking in both recall halves (index/labels.py):
    those carrying every tag of ``tags`` (canonical: notes/tags.py) and whose frontmatter ``project``
    value ``project`` keeps (called with None for a note that has none; None: every note)."""

    tags: tuple[str, ...] = ()
    project: Callable[[Any], bool] | None = None


@dataclass
class Recall:
    """What both recall halves found for one query (chunk id, raw score), best first, and what the
    fusion rule reads besides: everything fusion needs, so that it is a function of this alone."""

    keyword: list[tuple[int, float]] = field(default_factory=list)
    vector: list[tuple[int, float]] = field(default_factory=list)
    # the vector top-k with each script's cosines on their own scale (asked with scripts; None: one script)
    vector_scripts: list[tuple[int, float]] | None = None
    # the top-k chunks of the other script by their z-score among that script's chunks (asked with scripts)
    foreign_z: list[tuple[int, float]] = field(default_factory=list)
    scale: Any = None  # vectors.Scale of the query's cosines over the chunks of its script (None: no vector pass)
    keyword_searched: bool = False  # the keyword half ran (it may have found nothing)
    notes: list[tuple[str, float]] | None = None  # whole-note BM25 (note path, score), when asked for
    coverage: float | None = None  # share of chunks with a vector; None = no vector half
    note_coverage: float | None = None  # share of notes with a vector in any chunk (asked with notes)
    embedded: Callable[[int], bool] = lambda cid: False  # noqa: E731 - does this chunk have a vector?
    paths: dict[int, str] = field(default_factory=dict)  # every candidate's note (asked with notes)
    chunks: int = 0  # chunks in the index (asked with notes: what "rare in the workspace" is a share of)
    rare_terms: list[frozenset[int]] = field(default_factory=list)  # per rare query term, its chunks (asked with rare)
    foreign: frozenset[int] = frozenset()  # candidates in another script than the query's (asked with scripts)
    # the other script's chunks by BM25 over the query's words in that language (asked with scripts, in
    # an index that holds both scripts; translate.py)
    translated: list[tuple[int, float]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def rare_chunks(self, max_df: int) -> set[int]:
        """Chunks holding a query term found in at most ``max_df`` chunks of the whole index."""
        return set().union(*(ids for ids in self.rare_terms if len(ids) <= max_df))


@dataclass
class NodeHit:
    path: str
    name: str | None
    description: str | None
    score: float
    project: Any = None  # the node's frontmatter `project`


@dataclass
class GraphNode:
    path: str
    name: str | None
    description: str | None
    exists: bool
    depth: int


@dataclass
class GraphEdge:
    source: str
    target: str
    predicate: str | None
    anchor: str | None
    alias: str | None
    line: int
    resolved: bool


@dataclass
class Graph:
    nodes: list[GraphNode]
    edges: list[GraphEdge]
