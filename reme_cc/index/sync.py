"""Incremental sync: stat-walk the indexed layers, compare mtime+size then hash, re-index what changed.

Every file under daily/, digest/, resource/ and session/ gets a catalog row (so wikilinks to a PDF
or a transcript resolve); text files of the indexed layers also get chunks, FTS rows and links, and
so do PDF and .docx files, through their extracted text view (notes/documents.py).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable, Iterator, Mapping

from ..base.config import Config
from ..notes.documents import DOCUMENT_EXTS, MAX_DOCUMENT_BYTES, prune_cache, text_view
from ..notes.formats import NOTE_EXTS, TEXT_INDEXED_EXTS
from ..notes.text import CHUNKER_VERSION, has_unsafe, note_context, text_hash, without_context
from ..base.workspace import Workspace, own_stat
from . import catalog, keyword, labels
from .catalog import bump_generation, get_meta, index_log, set_meta, transaction
from .labels import labels_of
from .terms import SCRIPT_CHARS, TOKENIZER_VERSION, dominant_script

WALK_LAYERS = ("daily", "digest", "resource", "session")
MAX_INDEX_BYTES = 8 * 1024 * 1024  # larger files are catalogued but not chunked
CONFLICT_KEY = "conflict_markers"  # in files.extra: line numbers of unresolved git conflicts
HARD_LINK_KEY = "hard_links"  # in files.extra: the link count of a file that has other hard links
BATCH = 200
PARALLEL_MIN = 300  # files; below this a pool costs more than it saves
_DATE_IN_PATH = re.compile(r"(?:^|/)(\d{4}-\d{2}-\d{2})(?:[/.]|$)")


@dataclass
class SyncReport:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    chunks: int = 0
    seconds: float = 0.0

    @property
    def touched(self) -> bool:
        return bool(self.added or self.changed or self.removed)


# {workspace root: {refused rel path: why}} as this process's walks last found them (for status)
_REFUSED: dict[str, dict[str, str]] = {}


def refused_name(rel: str) -> str | None:
    """Why the index refuses a file by its name, or None. Git stores any bytes but "/" and NUL in a
    name: a newline would forge a line wherever the path is shown, and a name that is not UTF-8 (its
    bytes surrogate-escaped by os.fsdecode) cannot be stored in SQLite at all — one such file made
    every search fail. No one can sensibly mean either: the file is left out and status names it."""
    if not has_unsafe(rel):
        return None
    if any("\udc80" <= c <= "\udcff" for c in rel):
        return "not valid UTF-8"
    return "control characters"


def refused(root: Path) -> dict[str, str]:
    """{path: why} of the files the last walks of ``root`` in this process left out by name."""
    return dict(_REFUSED.get(str(root), {}))


def _note_refused(root: Path, folders: Iterable[str], found: dict[str, str]) -> None:
    key = str(root)
    prefixes = tuple(f"{f}/" for f in folders)
    kept = {p: why for p, why in _REFUSED.get(key, {}).items() if not p.startswith(prefixes)}
    _REFUSED[key] = {**kept, **found}


def walk(root: Path, folders: Iterable[str] = WALK_LAYERS) -> dict[str, tuple[int, int]]:
    """{rel path: (mtime_ns, size)} of every non-hidden regular file under these workspace folders
    (the walked layers; a moved or deleted folder). Symlinks are not followed nor listed; a name the
    index refuses (``refused_name``: a folder's too) is left out and noted for ``refused``."""
    folders = tuple(folders)
    out: dict[str, tuple[int, int]] = {}
    bad: dict[str, str] = {}
    stack = [(root / folder, folder) for folder in folders if own_stat(root, folder) is not None]
    while stack:
        folder, rel = stack.pop()
        try:
            it = os.scandir(folder)
        except OSError:
            continue
        with it:
            for entry in it:
                if entry.name.startswith("."):
                    continue  # temp files of atomic writes, .obsidian/, .git/
                why = refused_name(entry.name)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if why:
                            bad[f"{rel}/{entry.name}/"] = why
                        else:
                            stack.append((Path(entry.path), f"{rel}/{entry.name}"))
                    elif entry.is_file(follow_symlinks=False):
                        if why:
                            bad[f"{rel}/{entry.name}"] = why
                            continue
                        st = entry.stat(follow_symlinks=False)
                        out[f"{rel}/{entry.name}"] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    continue
    _note_refused(root, folders, bad)
    return out


def wants_chunks(path: str, size: int, config: Config) -> bool:
    ext = os.path.splitext(path)[1].lower()
    if ext in DOCUMENT_EXTS:  # indexed through their extracted text view
        return size <= MAX_DOCUMENT_BYTES and path.startswith(("daily/", "digest/", "resource/"))
    if ext not in TEXT_INDEXED_EXTS or size > MAX_INDEX_BYTES:
        return False
    if path.startswith("session/"):
        return config.index_sessions and ext == ".jsonl"
    return path.startswith(("daily/", "digest/", "resource/"))


def file_date(path: str, meta: dict[str, Any], mtime_ns: int) -> str:
    """Date used by search's start/end filter: the date in the path (daily/2026-06-20/…), else a
    frontmatter date, else the file's modification day."""
    m = _DATE_IN_PATH.search(path)
    if m:
        return m.group(1)
    for key in ("date", "created", "updated"):
        value = meta.get(key)
        if isinstance(value, (_dt.date, _dt.datetime)):
            return value.strftime("%Y-%m-%d")
        if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}", value.strip()):
            return value.strip()[:10]
    return _dt.datetime.fromtimestamp(mtime_ns / 1e9).strftime("%Y-%m-%d")


def _delete_path(conn: sqlite3.Connection, path: str) -> None:
    ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE path=?", (path,))]
    if ids:
        conn.executemany("DELETE FROM chunks_fts WHERE rowid=?", [(i,) for i in ids])
        conn.executemany("DELETE FROM cjk_chunks WHERE id=?", [(i,) for i in ids])
        conn.execute("DELETE FROM chunks WHERE path=?", (path,))
    conn.execute("DELETE FROM links WHERE source=?", (path,))
    conn.execute("DELETE FROM nodes_fts WHERE path=?", (path,))
    conn.execute("DELETE FROM labels WHERE path=?", (path,))


@dataclass
class Prepared:
    """Everything derived from one file's bytes (pure CPU work, safe to run in a worker process)."""

    path: str
    stat: tuple[int, int]
    hash: str | None = None
    name: str | None = None
    description: str | None = None
    extra: str = "{}"
    date: str | None = None
    # start, end, text, hash, headings, tokens, CJK (made here: a pool's worker, not the writer's transaction)
    chunks: list[tuple[int, int, str, str, str, str, bool]] = field(default_factory=list)
    links: list[tuple[str, str | None, str | None, int, str | None, int]] = field(default_factory=list)
    node_tokens: str | None = None
    labels: list[tuple[str, str]] = field(default_factory=list)  # (kind, value): labels.labels_of
    context: str = ""  # the context line every chunk starts with (text.note_context)
    body_hashes: list[str] = field(default_factory=list)  # per chunk: sha256 of its text without it
    indexed: bool = True
    vanished: bool = False


def warm_up() -> None:
    """Run the note parsers once on a tiny note: their lazy imports (mistletoe alone: 0.6 s, seconds on
    a busy machine) happen now, not inside the search that follows the first edit."""
    from ..notes.chunker import chunk_file
    from ..notes.frontmatter import parse_note
    from ..notes.wikilinks import parse_links

    text = "---\nname: warm\n---\n# Warm\n\nA [[link]] and `code`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    parse_note(text)
    parse_links(text)
    chunk_file("warm.md", text.encode(), max_chars=1500)


def _no_follow(path: str, flags: int) -> int:
    """Open a file, never through a symlink put in its place since the walk (it may point anywhere)."""
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))


def prepare(ws_root: Path, path: str, stat: tuple[int, int], config: Config, metadata: Path | None = None) -> Prepared:
    """``metadata``: the workspace's derived-state folder (the extraction cache), when not ``ws_root/metadata``."""
    from ..notes.chunker import chunk_file
    from ..notes.conflicts import conflict_lines
    from ..notes.frontmatter import parse_note
    from ..notes.wikilinks import parse_links

    mtime_ns, size = stat
    out = Prepared(path, stat)

    def listed_only(why: dict[str, Any] | None = None) -> Prepared:  # catalogued, never searchable
        out.indexed = False
        if why:
            out.extra = json.dumps(why)  # status names the file, and why
        out.date = file_date(path, {}, mtime_ns)
        return out

    if not wants_chunks(path, size, config):
        return listed_only()
    try:
        with open(ws_root / path, "rb", opener=_no_follow) as fh:
            links = os.fstat(fh.fileno()).st_nlink
            data = fh.read() if links == 1 else b""
    except OSError:
        out.vanished = True  # gone between walk and read: apply_changes treats it as deleted
        return out
    if links > 1:  # may be a file anywhere on the disk (Workspace.existing_file): listed, never shown
        return listed_only({HARD_LINK_KEY: links})
    out.hash = hashlib.sha256(data).hexdigest()
    if path.lower().endswith(DOCUMENT_EXTS):
        # cached by content hash, bounded in time and memory; "" (no chunks) when it has no text
        data = text_view(metadata or ws_root / "metadata", path, data, out.hash).text.encode("utf-8")
    text = data.decode("utf-8", errors="replace")
    meta: dict[str, Any] = {}
    context = ""
    is_md = path.lower().endswith(NOTE_EXTS)
    conflicts = conflict_lines(text) if is_md else []
    if conflicts:  # half of two versions: listed and reported (status), never searchable content
        return listed_only({CONFLICT_KEY: conflicts})
    if is_md:
        note = parse_note(text)
        meta = note.meta if isinstance(note.meta, dict) else {}
        out.name, out.description = note.name, note.description
        context = out.context = note_context(note.name, note.description)
        out.links = [(l.target, l.anchor, l.alias, int(l.embed), l.predicate, l.line) for l in parse_links(text)]
        if path.startswith("digest/"):
            out.node_tokens = keyword.tokenize(node_text(path, out.name, out.description))
        out.labels = labels_of(meta, note.body)
    out.extra = json.dumps(
        {k: v for k, v in meta.items() if k not in ("name", "description")}, ensure_ascii=False, default=str
    )
    out.date = file_date(path, meta, mtime_ns)
    out.chunks = [
        (
            ch.start_line,
            ch.end_line,
            ch.text,
            ch.hash,
            json.dumps(list(ch.headings), ensure_ascii=False),
            keyword.chunk_tokens(ch.text),
            is_cjk(ch.text),
        )
        for ch in chunk_file(path, data, max_chars=config.chunk_chars, context=context)
    ]
    out.body_hashes = [
        text_hash(without_context(text, context)) if context else h for _s, _e, text, h, *_ in out.chunks
    ]
    return out


def node_text(path: str, name: str | None, description: str | None) -> str:
    """What a digest node is found by in nodes_fts: its name, description and the words of its path."""
    return " ".join(x for x in (name or "", description or "", re.sub(r"[/_.-]+", " ", path)) if x)


def store(
    conn: sqlite3.Connection,
    p: Prepared,
    paths: set[str],
    stems: Mapping[str, list[str]],
    model: str | None = None,
) -> int | None:
    """Write one prepared file inside the caller's transaction. Returns chunks written, or None when
    the content hash was unchanged (only mtime/size refreshed). ``model``: the embedding model whose
    vectors the file's old chunks lend its new ones (carry_vectors)."""
    from ..notes.wikilinks import resolve_target

    mtime_ns, size = p.stat
    if not p.indexed:
        _delete_path(conn, p.path)
        conn.execute(
            "INSERT OR REPLACE INTO files(path, mtime_ns, size, hash, extra, date, indexed) VALUES (?,?,?,?,?,?,0)",
            (p.path, mtime_ns, size, p.hash, p.extra, p.date),
        )
        return 0
    row = conn.execute("SELECT hash, indexed, name, description FROM files WHERE path=?", (p.path,)).fetchone()
    if row and row[0] == p.hash and row[1]:
        conn.execute("UPDATE files SET mtime_ns=?, size=? WHERE path=?", (mtime_ns, size, p.path))
        return None
    lent = lenders(conn, p.path, model) if model and row and row[1] else []
    _delete_path(conn, p.path)
    conn.execute(
        "INSERT OR REPLACE INTO files(path, mtime_ns, size, hash, name, description, extra, date, indexed) "
        "VALUES (?,?,?,?,?,?,?,?,1)",
        (p.path, mtime_ns, size, p.hash, p.name, p.description, p.extra, p.date),
    )
    for start, end, text, h, headings, toks, cjk in p.chunks:
        cur = conn.execute(
            "INSERT INTO chunks(path, start_line, end_line, text, hash, headings) VALUES (?,?,?,?,?,?)",
            (p.path, start, end, text, h, headings),
        )
        conn.execute("INSERT INTO chunks_fts(rowid, tokens) VALUES (?, ?)", (cur.lastrowid, toks))
        if cjk:
            conn.execute("INSERT INTO cjk_chunks(id) VALUES (?)", (cur.lastrowid,))
    if lent:
        carry_vectors(conn, model or "", p, lent, note_context(row[2], row[3]))
    rows = []
    for target, anchor, alias, embed, predicate, line in p.links:
        res = resolve_target(target, paths, stems)
        rows.append((p.path, target, res.path, anchor, alias, embed, predicate, line, res.how))
    conn.executemany(
        "INSERT INTO links(source, target, resolved_path, anchor, alias, embed, predicate, line, how) "
        "VALUES (?,?,?,?,?,?,?,?,?)",
        rows,
    )
    if p.node_tokens is not None:
        conn.execute("INSERT INTO nodes_fts(path, tokens) VALUES (?, ?)", (p.path, p.node_tokens))
    labels.store(conn, p.path, p.labels)
    return len(p.chunks)


@dataclass(frozen=True)
class Lender:
    """A chunk a file had before its re-index, and the vector it lends: its own, or the one lent to it."""

    start: int
    end: int
    headings: str  # JSON, as stored
    hash: str
    source: str  # the hash in embeddings whose vector it lends (may have none: then the loan finds none)
    same_body: bool  # False when the vector it holds was lent by an edited text


def lenders(conn: sqlite3.Connection, path: str, model: str) -> list[Lender]:
    """The chunks ``path`` has now, read before they are replaced. Whether their own vectors exist is
    not asked here (a look-up in the large embeddings table per chunk, in the writer's transaction):
    a loan of a vector that does not exist lends nothing (VectorStore._fetch joins the two): the chunk
    waits among those with no vector, and its loan goes when the worker embeds it."""
    rows = conn.execute(
        "SELECT c.start_line, c.end_line, c.headings, c.hash, k.source, k.same_body FROM chunks c "
        "LEFT JOIN carried_vectors k ON k.model = ? AND k.hash = c.hash WHERE c.path = ?",
        (model, path),
    )
    return [
        Lender(start, end, headings or "", h, source or h, bool(same) if source else True)
        for start, end, headings, h, source, same in rows
    ]


def carry_vectors(conn: sqlite3.Connection, model: str, p: Prepared, lent: list[Lender], old_context: str) -> int:
    """Lend each new chunk text of ``p`` the vector of the old chunk it replaces (carried_vectors), so
    search finds the note by meaning at once rather than after the embedding worker reaches it (hours
    after an upgrade that re-chunks every note). The lender: the old chunk with the same text but for
    the context line (``old_context``: the one the old chunks were made with; none before chunker 2)
    -- a re-chunk, a changed name or description: the same meaning; else the one under the same
    headings, then over the most of the same lines -- an edit: nearly the same meaning, embedded
    first. Matched by hash (the body's is made in the pool): the writer's transaction reads no old
    text. A text the file had before keeps what it had. Returns the chunks lent a vector."""
    by_hash = {old.hash: old for old in lent}
    rows = []
    for (start, end, text, h, headings, *_), body_hash in zip(p.chunks, p.body_hashes):
        if h in by_hash:
            continue  # unchanged: its own vector, or its loan (keyed by its hash), stays
        old = by_hash.get(body_hash)  # the previous chunker's chunk: the body alone
        if old is None and old_context and old_context != p.context:  # the name or description changed
            old = by_hash.get(text_hash(f"{old_context}\n{without_context(text, p.context)}"))
        same = old is not None and old.same_body
        old = old or _nearest(lent, start, end, headings)
        if old is not None:
            rows.append((model, h, old.source, int(same)))
    # a new text that has a vector of its own already (an edit undone, a text another note has) gets
    # a loan too, unused (VectorStore._fetch takes a text's own vector first) and deleted when the
    # worker reaches it (vector_half.backlog_batch): asking here costs a look-up in the large
    # embeddings table per chunk, inside the writer's transaction
    conn.executemany("INSERT OR IGNORE INTO carried_vectors(model, hash, source, same_body) VALUES (?,?,?,?)", rows)
    return len(rows)


def _nearest(lent: list[Lender], start: int, end: int, headings: str) -> Lender | None:
    """The old chunk under the same headings, else over the most of the lines [start, end]; None when
    none shares either (a new section; text appended to a session)."""

    def likeness(old: Lender) -> tuple[bool, int]:
        same_section = old.headings == headings and headings not in ("", "[]")
        return same_section, max(0, min(end, old.end) - max(start, old.start) + 1)

    best = max(lent, key=likeness, default=None)
    return best if best is not None and any(likeness(best)) else None


def _prepare_star(args: tuple) -> Prepared:
    return prepare(*args)


def _pool_worker(polite: bool) -> None:
    keyword.full_dictionary()  # bulk tokenising: jieba's own dict is ~30x faster than the shared table
    if polite:
        from .polite import lower_priority

        lower_priority()


def prepared_stream(
    ws_root: Path,
    items: list[tuple[str, tuple[int, int]]],
    config: Config,
    polite: bool = False,
    metadata: Path | None = None,
) -> Iterator[Prepared]:
    """Prepare files in order; big batches use a process pool (jieba + mistletoe are CPU bound).
    ``polite`` (a server's background batch): half the cores, at the lowest priority.

    Like any multiprocessing pool, its workers re-import the main module: a script that opens an
    Index must keep its work under ``if __name__ == "__main__":`` (reme's own entry points do)."""
    cores = os.cpu_count() or 1
    workers = max(1, cores // 2) if polite else min(cores, 8)
    if len(items) < PARALLEL_MIN or (workers < 2 and not polite):  # polite: even one worker is a low-priority process
        for path, stat in items:
            yield prepare(ws_root, path, stat, config, metadata)
        return
    import multiprocessing as mp

    ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
    with ctx.Pool(workers, initializer=_pool_worker, initargs=(polite,)) as pool:
        yield from pool.imap(_prepare_star, [(ws_root, p, st, config, metadata) for p, st in items], chunksize=16)


class LazyStems(Mapping[str, list[str]]):
    """build_stems(paths) computed on first use: most links are full paths and never need it
    (saves ~0.1 s per one-file update at 10k files)."""

    def __init__(self, paths: set[str]):
        self._paths = paths
        self._d: dict[str, list[str]] | None = None

    def _get(self) -> dict[str, list[str]]:
        if self._d is None:
            from ..notes.wikilinks import build_stems

            self._d = build_stems(self._paths)
        return self._d

    def __getitem__(self, key: str) -> list[str]:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


def reresolve(conn: sqlite3.Connection, paths: set[str], stems: Mapping[str, list[str]], removed: set[str]) -> None:
    """After files appeared or vanished: links that were dangling, ambiguous, short-form, or pointed
    at a removed file may resolve differently now."""
    from ..notes.wikilinks import resolve_target

    rows = conn.execute(
        "SELECT rowid, target, resolved_path FROM links WHERE resolved_path IS NULL OR how != 'exact'"
    ).fetchall()
    for p in removed:
        rows += conn.execute("SELECT rowid, target, resolved_path FROM links WHERE resolved_path=?", (p,)).fetchall()
    updates = []
    for rowid, target, _old in rows:
        res = resolve_target(target, paths, stems)
        updates.append((res.path, res.how, rowid))
    conn.executemany("UPDATE links SET resolved_path=?, how=? WHERE rowid=?", updates)


def apply_changes(
    conn: sqlite3.Connection,
    ws_root: Path,
    config: Config,
    todo: dict[str, tuple[int, int] | None],
    all_paths: set[str],
    report: SyncReport,
    progress: Callable[[int, int], None] | None = None,
    polite: bool = False,
    metadata: Path | None = None,
    model: str | None = None,
) -> None:
    """Write ``todo`` ({path: stat, or None when deleted}) in transactions of BATCH files.
    The caller holds the writer lock. ``metadata``: the derived-state folder, when not ``ws_root/metadata``;
    ``model``: the embedding model whose vectors a re-indexed file's old chunks lend its new ones."""
    all_paths = set(all_paths)  # corrected below for files created or gone since the walk
    known = {r[0] for r in conn.execute("SELECT path FROM files")}
    # a deletion comes from a walk made before the writer lock; a file there now was created since
    # (and maybe indexed by another process): deleting it would drop its rows and links
    back = {p for p, st in todo.items() if st is None and p in known and (ws_root / p).is_file()}
    all_paths |= back
    stems = LazyStems(all_paths)
    deleted = sorted(p for p, st in todo.items() if st is None and p not in back)
    present = sorted((p, st) for p, st in todo.items() if st is not None)
    removed: set[str] = set()
    total = len(deleted) + len(present)
    done = 0
    stream = prepared_stream(ws_root, present, config, polite, metadata)
    set_changed = False

    def batches() -> Iterator[list[Any]]:
        batch: list[Any] = list(deleted)
        for prep in stream:
            batch.append(prep)
            if len(batch) >= BATCH:
                yield batch
                batch = []
        if batch or not total:
            yield batch

    for batch in batches():
        with transaction(conn):
            for item in batch:
                if isinstance(item, str) or item.vanished:
                    # a file deleted between the walk and the read is a deletion too: else links stored
                    # in this run resolve to it and no later sync sees a change that corrects them
                    path = item if isinstance(item, str) else item.path
                    if path in all_paths:
                        all_paths.discard(path)
                        stems = LazyStems(all_paths)
                    if path in known:
                        _delete_path(conn, path)
                        conn.execute("DELETE FROM files WHERE path=?", (path,))
                        report.removed.append(path)
                        removed.add(path)
                        set_changed = True
                    elif not isinstance(item, str):
                        removed.add(path)  # links stored earlier in this run may point at it
                        set_changed = True
                    continue
                n = store(conn, item, all_paths, stems, model)
                if n is None:
                    report.unchanged += 1
                elif item.path in known:
                    report.changed.append(item.path)
                    report.chunks += n
                else:
                    report.added.append(item.path)
                    report.chunks += n
                    set_changed = True
            done += len(batch)
            if set_changed and done >= total:
                reresolve(conn, all_paths, stems, removed)
            bump_generation(conn)
            set_meta(conn, "last_sync", _dt.datetime.now().isoformat(timespec="seconds"))
        if progress:
            progress(done, total)
    if any(p.lower().endswith(DOCUMENT_EXTS) for p in todo):  # a document changed or went: its old text too
        is_doc = " OR ".join("lower(path) LIKE ?" for _ in DOCUMENT_EXTS)
        prune_cache(
            metadata or ws_root / "metadata",
            {
                r[0]
                for r in conn.execute(
                    f"SELECT hash FROM files WHERE hash IS NOT NULL AND ({is_doc})",
                    [f"%{ext}" for ext in DOCUMENT_EXTS],
                )
            },
        )


RETOKENIZE_BATCH = 2000


@contextlib.contextmanager
def _tokenizer(count: int) -> Iterator[Callable[[list[str]], list[str]]]:
    """keyword.chunk_tokens over lists of texts: in this process for a few, else in a process pool like
    prepared_stream's (jieba is CPU bound: a 10k-file workspace's 49k chunks cost ~55 s of one core
    with the shared dictionary, ~20 s with jieba's own)."""
    cores = os.cpu_count() or 1
    if count < PARALLEL_MIN * 10 or cores < 2:
        yield lambda texts: [keyword.chunk_tokens(t) for t in texts]
        return
    import multiprocessing as mp

    ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
    with ctx.Pool(min(cores, 8), initializer=_pool_worker, initargs=(False,)) as pool:
        yield lambda texts: pool.map(keyword.chunk_tokens, texts, chunksize=64)


def migrate_once(
    conn: sqlite3.Connection,
    writer_lock: Any,
    metadata: Path,
    key: str,
    version: int,
    step: Callable[[sqlite3.Connection], tuple[int, str]],
    missing: str | None = None,
) -> int | None:
    """One change to what an index stores, made once: due while meta ``key`` (``missing`` when it has
    none) is not ``version``. ``step`` runs in one transaction under the writer lock (due is checked
    again there: another process may have done it meanwhile) and returns (its count, what it did);
    then the version is recorded, the generation bumped and what it did logged with its time.
    Returns the count, None when nothing was due."""
    import time

    if get_meta(conn, key, missing) == str(version):
        return None
    t0 = time.perf_counter()
    with writer_lock, transaction(conn):
        if get_meta(conn, key, missing) == str(version):
            return None
        done, what = step(conn)
        set_meta(conn, key, str(version))
        bump_generation(conn)
    index_log(metadata, f"{what} in {time.perf_counter() - t0:.1f} s")
    return done


def retokenize(conn: sqlite3.Connection, writer_lock: Any, metadata: Path) -> int | None:
    """An index whose stored tokens another tokenizer version made (meta 'tokenizer'; none = 1) gets
    them made again from its chunks' texts and its nodes' names, in one transaction: chunk ids, the
    vectors and the embedding cache stay. Returns the chunks re-tokenised, None when nothing was due."""

    def step(conn: sqlite3.Connection) -> tuple[int, str]:
        conn.execute("DELETE FROM chunks_fts")
        last, done = 0, 0
        with _tokenizer(conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]) as tokenize_all:
            while True:
                rows = conn.execute(
                    "SELECT id, text FROM chunks WHERE id > ? ORDER BY id LIMIT ?", (last, RETOKENIZE_BATCH)
                ).fetchall()
                if not rows:
                    break
                toks = tokenize_all([t for _, t in rows])
                conn.executemany("INSERT INTO chunks_fts(rowid, tokens) VALUES (?, ?)", zip([i for i, _ in rows], toks))
                last, done = rows[-1][0], done + len(rows)
        nodes = conn.execute(
            "SELECT n.path, f.name, f.description FROM nodes_fts n LEFT JOIN files f ON f.path = n.path"
        ).fetchall()
        conn.execute("DELETE FROM nodes_fts")
        conn.executemany(
            "INSERT INTO nodes_fts(path, tokens) VALUES (?, ?)",
            [(p, keyword.tokenize(node_text(p, name, desc))) for p, name, desc in nodes],
        )
        return done, f"tokenizer {TOKENIZER_VERSION}: re-tokenised {done} chunks and {len(nodes)} nodes"

    return migrate_once(conn, writer_lock, metadata, "tokenizer", TOKENIZER_VERSION, step, missing="1")


def rechunk(conn: sqlite3.Connection, writer_lock: Any, metadata: Path) -> int | None:
    """An index whose chunks another chunker version made (meta 'chunker'; none = 1) has the notes
    whose chunks change read again: those with a frontmatter name or description (their chunks now
    start with its context line) lose their catalog stat and hash, so the next sync re-chunks them
    as it does any edited file (a large workspace in the background, politely). Their chunk ids
    change and the embedding worker makes their vectors again. Returns the notes due, None when
    nothing was due."""

    def step(conn: sqlite3.Connection) -> tuple[int, str]:
        due = conn.execute(
            "UPDATE files SET mtime_ns = -1, hash = NULL "
            "WHERE indexed = 1 AND (COALESCE(name, '') != '' OR COALESCE(description, '') != '')"
        ).rowcount
        return due, f"chunker {CHUNKER_VERSION}: {due} notes with a name or description are chunked again"

    return migrate_once(conn, writer_lock, metadata, "chunker", CHUNKER_VERSION, step, missing="1")


def is_cjk(text: str) -> bool:
    """Is this chunk listed in cjk_chunks (its start's dominant script is CJK)?"""
    return dominant_script(text[:SCRIPT_CHARS]) == "cjk"


def backfill_scripts(conn: sqlite3.Connection, writer_lock: Any, metadata: Path) -> int | None:
    """An index made before cjk_chunks (meta 'scripts' missing) gets it filled from its chunks' starts,
    in one transaction (~50 µs a chunk: 49k chunks in 2-3 s, once). Returns the CJK chunks listed,
    None when nothing was due."""

    def step(conn: sqlite3.Connection) -> tuple[int, str]:
        conn.execute("DELETE FROM cjk_chunks")
        rows = conn.execute(f"SELECT id, substr(text, 1, {SCRIPT_CHARS}) FROM chunks")
        conn.executemany("INSERT INTO cjk_chunks(id) VALUES (?)", [(i,) for i, text in rows if is_cjk(text)])
        done = conn.execute("SELECT COUNT(*) FROM cjk_chunks").fetchone()[0]
        return done, f"scripts: {done} CJK chunks listed (vector search per script)"

    return migrate_once(conn, writer_lock, metadata, "scripts", catalog.SCRIPTS_VERSION, step)


def backfill_labels(conn: sqlite3.Connection, writer_lock: Any, ws: Workspace, metadata: Path) -> int | None:
    """An index made before the labels table (meta 'labels' missing) gets every indexed note's labels
    (labels.labels_of: the frontmatter as files.extra holds it, the body read from disk), in one
    transaction: nothing else changes, no re-index. Returns the notes labelled, None when nothing was due.
    A note edited since it was indexed gets its labels again from its next sync, like all its rows."""
    from ..base.errors import ReMeError
    from ..notes.frontmatter import split_frontmatter

    def step(conn: sqlite3.Connection) -> tuple[int, str]:
        conn.execute("DELETE FROM labels")
        rows = conn.execute("SELECT path, extra FROM files WHERE indexed = 1").fetchall()
        done = 0
        for path, extra in rows:
            if not path.lower().endswith(NOTE_EXTS):
                continue
            try:  # read as the workspace reads a file (a team's is hostile: no symlink on the way)
                meta = json.loads(extra or "{}")
                body = split_frontmatter(ws.read_bytes(path).decode("utf-8", errors="replace"))[1]
            except (ReMeError, OSError, ValueError):
                continue  # gone or changed since: its next sync writes its rows, labels included
            labels.store(conn, path, labels_of(meta if isinstance(meta, dict) else {}, body))
            done += 1
        return done, f"labels: {done} notes labelled (search's tag filter)"

    return migrate_once(conn, writer_lock, metadata, "labels", catalog.LABELS_VERSION, step)
