"""Keyword recall in memory: BM25 over the chunks' stored tokens with numpy CSR postings.

FTS5's ``bm25()`` costs about 1 µs per *matching* row, and a query of common words matches tens of
thousands of chunks (45-57 ms at 49k chunks). This index answers the same question in about a
millisecond, with the same answer:

* **Same terms.** Every stored word (``chunks_fts.tokens`` split on spaces) is split and case-folded by
  a private in-memory FTS5 table with the very tokenizer of ``chunks_fts`` (via ``fts5vocab``), so term
  frequencies and document lengths are the ones FTS5 counts, not a re-implementation of unicode61.
* **Same score.** k1=1.2, b=0.75, FTS5's idf ``log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6,
  avgdl = live tokens / live rows, and the float operations in fts5_aux.c's order, so scores are
  bit-identical; ties are broken by (path, start_line, id) like ``keyword.search_chunks``.
* **Same rows.** After every refresh the live row count and token total are compared with FTS5's own
  totals record (``chunks_fts_data`` id 1); a mismatch logs a line, answers from FTS5 and rebuilds.

Life cycle (one per process): built or loaded in a background thread (FTS5 answers meanwhile) from a
snapshot ``metadata/bm25-<schema>.npz`` (atomic replace; a corrupt or foreign one is logged and
rebuilt). When the database's generation moves, the chunk-id set difference is applied: removed
chunks are masked off, added ones (ids only grow, AUTOINCREMENT) go to a small delta segment;
the deltas are merged when there are many and the whole index is rebuilt in the background when
they grow large. Readers never take the writer lock.
"""

from __future__ import annotations

import bisect
import contextlib
import io
import json
import math
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable, Collection, Iterable, Iterator

import numpy as np

from . import catalog, keyword
from ..base.errors import ReMeError
from ..base.workspace import atomic_write
from .catalog import index_log, rows_in
from .terms import TOKENIZER_VERSION

FORMAT = 2
K1 = 1.2
B = 0.75
TOKENIZE = "unicode61 remove_diacritics 0"  # chunks_fts's tokenizer (catalog.SCHEMA); a test pins them equal
FETCH = 2000  # rows per build batch (bounds the transient memory of the build)
INLINE_DELTA_MAX = 2000  # chunks added since the last refresh that a query indexes itself (~70 ms);
# more: FTS5 answers while the index is rebuilt in the background
MAX_DELTA_SEGMENTS = 8  # then the deltas are merged into one (when that is a small job)
NOTE_CACHE_POSTINGS = 1_000_000  # (note, term) weights the whole-note BM25 keeps per process (12 bytes each)
WORD_PIECES_MAX = 10_000  # query words with a term in no chunk whose split is remembered
LOAD_WAIT_S = 1.0  # a whole-note query waits this long for a load under way (FTS5 is slower)
_ROWS_SQL = (
    "SELECT c.id, c.path, c.start_line, f.date, t.tokens FROM chunks c "
    "JOIN chunks_fts t ON t.rowid = c.id LEFT JOIN files f ON f.path = c.path"
)


def snapshot_path(metadata: Path) -> Path:
    return metadata / f"bm25-{catalog.SCHEMA_VERSION}.npz"


class Splitter:
    """FTS5's own tokenisation of words: a private in-memory FTS5 table with the same tokenizer."""

    def __init__(self) -> None:
        self._conn = catalog.open_db(
            ":memory:", statement_s=catalog.READER_STATEMENT_S, check_same_thread=False, isolation_level=None
        )
        self._conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZE}')")
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        self._lock = threading.Lock()

    def split(self, words: list[str]) -> list[list[str]]:
        out: list[list[str]] = [[] for _ in words]
        if not words:
            return out
        with self._lock:
            c = self._conn
            c.execute("BEGIN")
            try:
                c.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", ((i + 1, w) for i, w in enumerate(words)))
                rows = c.execute("SELECT doc, offset, term FROM v").fetchall()
            finally:
                c.execute("ROLLBACK")
        rows.sort()
        for doc, _off, term in rows:
            out[doc - 1].append(term)
        return out


@dataclass
class Segment:
    """CSR postings over a set of chunks (ascending chunk ids)."""

    ids: np.ndarray  # int64 chunk ids, ascending
    doclen: np.ndarray  # int64 FTS5 tokens per chunk
    indptr: np.ndarray  # int64, one past the last term id known when built
    docs: np.ndarray  # int32 doc index per posting (ascending within a term)
    tf: np.ndarray  # int32 term frequency per posting
    start: np.ndarray  # int64 start_line
    path_idx: np.ndarray  # int32 into paths
    paths: list[str]
    date_idx: np.ndarray  # int32 into dates, -1 = no date
    dates: list[str]  # distinct file dates, sorted: date_idx is a rank, a date range a rank range
    live: np.ndarray  # bool
    dead: int = 0
    note_of: np.ndarray | None = None  # int32 note (file) id per chunk, into State.note_paths
    _k: tuple[float, np.ndarray] | None = None
    # per-posting idf × BM25 weight f*(k1+1) / (f + k1*(1-b+b*D/avgdl)), computed per term on first
    # use at the state's version (stamp per term; avgdl and idf change with it): a query then costs
    # one addition per posting
    dead_idx: np.ndarray | None = None
    _rank: np.ndarray | None = None
    _w: np.ndarray | None = None
    _wstamp: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.ids)

    def order_rank(self) -> np.ndarray:
        """Each chunk's rank in (path, start_line, id) order, the order ties are given in (the same
        whatever is live, so it is kept for the segment's life)."""
        if self._rank is None:
            path_rank = _string_ranks(self.paths)
            order = np.lexsort((self.ids, self.start, path_rank[self.path_idx]))
            self._rank = np.empty(self.n, np.int64)
            self._rank[order] = np.arange(self.n)
        return self._rank

    @property
    def max_id(self) -> int:
        return int(self.ids[-1]) if len(self.ids) else 0

    def find(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(which of ``ids`` are live chunks of this segment, their positions in it)."""
        if not self.n or not len(ids):
            return np.zeros(len(ids), bool), np.zeros(0, np.int64)
        at = np.minimum(np.searchsorted(self.ids, ids), self.n - 1)
        ok = (self.ids[at] == ids) & self.live[at]
        return ok, at[ok]

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        if term + 1 >= len(self.indptr):
            return self.docs[:0], self.tf[:0]
        a, b = int(self.indptr[term]), int(self.indptr[term + 1])
        return self.docs[a:b], self.tf[a:b]

    def scored(self, term: int, avgdl: float, idf: float, version: int) -> tuple[np.ndarray, np.ndarray]:
        """(docs, idf × BM25 weight) of a term's postings at a state ``version`` with this ``avgdl``
        and ``idf`` (bit-identical to fts5_aux.c's arithmetic)."""
        if term + 1 >= len(self.indptr):
            return self.docs[:0], np.zeros(0, np.float64)
        if self._w is None or self._wstamp is None:
            self._w = np.empty(len(self.docs), np.float64)
            self._wstamp = np.full(len(self.indptr) - 1, -1, np.int64)
        a, b = int(self.indptr[term]), int(self.indptr[term + 1])
        if self._wstamp[term] != version:
            fv = self.tf[a:b].astype(np.float64)
            self._w[a:b] = idf * ((fv * (K1 + 1.0)) / (fv + self.k_part(avgdl).take(self.docs[a:b])))
            self._wstamp[term] = version
        return self.docs[a:b], self._w[a:b]

    def k_part(self, avgdl: float) -> np.ndarray:
        """k1 * (1 - b + b * D / avgdl) per doc, as fts5_aux.c computes it."""
        if self._k is None or self._k[0] != avgdl:
            d = self.doclen.astype(np.float64)
            self._k = (avgdl, K1 * ((1 - B) + (B * d) / avgdl))
        return self._k[1]

    def kill(self, gone: np.ndarray) -> int:
        """Mask off the chunks whose ids are in ``gone`` (sorted); returns their token total."""
        hit = np.isin(self.ids, gone, assume_unique=True) & self.live
        n = int(hit.sum())
        if not n:
            return 0
        self.live = self.live & ~hit
        self.dead += n
        self.dead_idx = np.flatnonzero(~self.live)
        return int(self.doclen[hit].sum())


class State:
    """One process's index: vocabulary + base segment + delta segments, at one database generation."""

    def __init__(self, db_id: str) -> None:
        self.db_id = db_id
        self.generation = -1
        self.terms: list[str] = []
        self.vocab: dict[str, int] = {}
        self.word_terms: dict[str, tuple[int, ...]] = {}  # stored/query word -> FTS5 term ids
        self.word_pieces: dict[str, tuple[str, ...]] = {}  # a query word with a term no chunk holds -> its FTS5 terms
        self.segments: list[Segment] = []
        self.n_live = 0
        self.tokens_live = 0
        self.note_ids: dict[str, int] = {}  # file path -> note id (whole-note BM25)
        self.note_paths: list[str] = []
        self.version = 0  # bumped by every change of the live chunks (the statistics and term caches)
        self._note_stats: tuple[int, int, float, np.ndarray] | None = None
        self._note_rank = np.zeros(0, np.int64)  # rank of each note path in string order (note ids only grow)
        self._folder_masks: dict[str, tuple[int, np.ndarray]] = {}
        self._filter_mask: tuple[int, Any, np.ndarray] | None = None  # (version, paths, mask): one search's filter
        self._chunk_idf = TermCache(1 << 16)  # term -> its idf over the live chunks (None: in none)
        self._note_weights = TermCache(NOTE_CACHE_POSTINGS)  # term -> (note ids, idf * BM25 weight)

    @property
    def max_id(self) -> int:
        return max((s.max_id for s in self.segments), default=0)

    @property
    def delta_docs(self) -> int:
        return sum(s.n for s in self.segments[1:])

    def add_segment(self, seg: Segment) -> None:
        ids = []
        for p in seg.paths:
            if p not in self.note_ids:
                self.note_ids[p] = len(self.note_paths)
                self.note_paths.append(p)
            ids.append(self.note_ids[p])
        seg.note_of = np.array(ids, np.int32)[seg.path_idx] if len(ids) else np.zeros(seg.n, np.int32)
        self.version += 1
        self.segments.append(seg)
        self.n_live += int(seg.live.sum())
        self.tokens_live += int(seg.doclen[seg.live].sum())

    # ---- words -> FTS5 terms -----------------------------------------------------------------------
    def map_words(self, splitter: Splitter, words: Iterable[str]) -> None:
        todo = [w for w in words if w not in self.word_terms]
        if not todo:
            return
        for w, parts in zip(todo, splitter.split(todo)):
            ids = []
            for term in parts:
                tid = self.vocab.get(term)
                if tid is None:
                    tid = self.vocab[term] = len(self.terms)
                    self.terms.append(term)
                ids.append(tid)
            self.word_terms[w] = tuple(ids)

    def word_ids(self, splitter: Splitter, words: list[str]) -> list[tuple[int, ...]]:
        """The FTS5 term ids of each word (-1: a term no chunk holds). A word's FTS5 split is
        remembered (its ids once all are known, else its terms, which a new chunk may bring), so a
        repeated query word costs no split (~25 µs each)."""
        unknown = [w for w in words if w not in self.word_terms and w not in self.word_pieces]
        if unknown:
            if len(self.word_pieces) > WORD_PIECES_MAX:
                self.word_pieces.clear()
            self.word_pieces.update(zip(unknown, map(tuple, splitter.split(unknown))))
        out = []
        for w in words:
            ids = self.word_terms.get(w)
            if ids is None:
                ids = tuple(self.vocab.get(part, -1) for part in self.word_pieces[w])
                if -1 not in ids:
                    self.word_terms[w] = ids
                    self.word_pieces.pop(w, None)
            out.append(ids)
        return out

    def query_terms(self, splitter: Splitter, words: list[str]) -> list[int] | None:
        """FTS5 term id per query phrase (-1: in no chunk); None when a phrase is not exactly one FTS5
        token (a multi-token phrase needs positions: FTS5 answers those queries)."""
        out = []
        for ids in self.word_ids(splitter, words):
            if len(ids) != 1:
                return None
            out.append(ids[0])
        return out

    # ---- scoring -----------------------------------------------------------------------------------
    def search(
        self, terms: list[int], k: int, start: str | None, end: str | None, notes: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """Top-k (chunk id, score); ``notes``: a mask of the note ids whose chunks may rank (``note_mask``)."""
        n_rows = self.n_live
        if n_rows <= 0 or k <= 0:
            return []
        avgdl = float(self.tokens_live) / float(n_rows)
        idfs = [
            None if t < 0 else self._chunk_idf.get(self.version, t, lambda t=t: (self._idf(t, n_rows), 1))
            for t in terms
        ]
        if all(i is None for i in idfs):
            return []
        lo, hi = start or "0000-00-00", end or "9999-99-99"
        found: list[tuple[Segment, np.ndarray, np.ndarray]] = []  # (segment, positions, their scores)
        for seg in self.segments:
            acc = None
            for t, idf in zip(terms, idfs):
                if idf is None:
                    continue
                d, w = seg.scored(t, avgdl, idf, self.version)
                if len(d):
                    if acc is None:
                        acc = np.zeros(seg.n, np.float64)
                    np.add.at(acc, d, w)  # acc[d] += w, the same double additions, fast path
            if acc is None:
                continue  # no query term in this segment
            if seg.dead:
                acc[seg.dead_idx] = 0.0
            if start or end:
                # files.date BETWEEN lo AND hi (text comparison) = a range of ranks in the sorted dates
                r_lo, r_hi = bisect.bisect_left(seg.dates, lo), bisect.bisect_right(seg.dates, hi)
                np.multiply(acc, (seg.date_idx >= r_lo) & (seg.date_idx < r_hi), out=acc)
            if notes is not None:
                np.multiply(acc, notes.take(seg.note_of), out=acc)
            pos = top_positions(acc, k, seg.order_rank)
            if len(pos):
                found.append((seg, pos, acc[pos]))
        if len(found) == 1:  # best score first, ties in the segment's (path, start_line, id) order
            seg, pos, scores = found[0]
            order = np.lexsort((seg.order_rank()[pos], -scores))[:k]
            return list(zip(seg.ids[pos[order]].tolist(), scores[order].tolist()))
        cands: list[tuple[float, str, int, int]] = []
        for seg, pos, scores in found:
            paths = seg.paths
            for sc, pi, st, cid in zip(
                scores.tolist(), seg.path_idx[pos].tolist(), seg.start[pos].tolist(), seg.ids[pos].tolist()
            ):
                cands.append((-sc, paths[pi], st, cid))
        cands.sort()
        return [(cid, -neg) for neg, _p, _s, cid in cands[:k]]

    def _idf(self, t: int, n_rows: int) -> float | None:
        """A term's idf over the live rows of every segment (FTS5: rows that contain the phrase)."""
        hits = 0
        for seg in self.segments:
            d, _ = seg.postings(t)
            hits += len(d) if not seg.dead else int(np.count_nonzero(seg.live.take(d)))
        if not hits:
            return None
        idf = math.log((n_rows - hits + 0.5) / (hits + 0.5))
        return idf if idf > 0.0 else 1e-6

    def paths_of(self, ids: list[int]) -> dict[int, str]:
        """{chunk id: file path} of the live chunks among ``ids``."""
        want = np.array(ids, np.int64)
        out: dict[int, str] = {}
        for seg in self.segments:
            ok, at = seg.find(want)
            paths = seg.paths
            out.update(zip(want[ok].tolist(), (paths[i] for i in seg.path_idx[at].tolist())))
        return out

    # ---- whole-note BM25 ---------------------------------------------------------------------------
    def note_stats(self) -> tuple[int, float, np.ndarray]:
        """(notes with a live chunk, avgdl over them, k1*(1-b+b*L/avgdl) per note id), cached per version."""
        st = self._note_stats
        if st is None or st[0] != self.version:
            m = len(self.note_paths)
            length = np.zeros(m, np.float64)  # token counts: exact integers in float64
            count = np.zeros(m, np.int64)
            for seg in self.segments:
                notes = seg.note_of[seg.live]  # type: ignore[index]
                length += np.bincount(notes, weights=seg.doclen[seg.live], minlength=m)
                count += np.bincount(notes, minlength=m)
            n_notes = int(np.count_nonzero(count))
            avgdl = float(self.tokens_live) / float(n_notes) if n_notes else 1.0
            st = self._note_stats = (self.version, n_notes, avgdl, K1 * ((1 - B) + (B * length) / avgdl))
        return st[1], st[2], st[3]

    def warm(self) -> None:
        """What the first queries would otherwise compute (4 ms at 49k chunks): the tie orders and the
        notes' statistics."""
        for seg in self.segments:
            seg.order_rank()
        self.note_rank()
        self.note_stats()

    def note_share(self, ids: np.ndarray) -> float:
        """Share of the notes with a live chunk that hold a live chunk among ``ids``."""
        have = np.zeros(len(self.note_paths), bool)
        for seg in self.segments:
            have[seg.note_of[seg.find(ids)[1]]] = True  # type: ignore[index]
        n_notes = self.note_stats()[0]
        return float(np.count_nonzero(have)) / n_notes if n_notes else 0.0

    def note_rank(self) -> np.ndarray:
        """Each note id's rank in path order (ties of the whole-note BM25 go by path)."""
        if len(self._note_rank) != len(self.note_paths):
            self._note_rank = _string_ranks(self.note_paths)
        return self._note_rank

    def term_ids(self, splitter: Splitter, words: list[str]) -> list[int]:
        """The distinct FTS5 terms of the query words (``note_terms``) that some chunk holds, as ids."""
        return [t for t in dict.fromkeys(t for ids in self.word_ids(splitter, words) for t in ids) if t >= 0]

    def note_mask(self, paths: Collection[str]) -> np.ndarray:
        """Mask of the note ids of ``paths`` (a search filter's files); the last one is kept, for the
        same ``paths`` object, while the notes do not change (one search asks three times)."""
        got = self._filter_mask
        if got is None or got[0] != self.version or got[1] is not paths:
            mask = np.zeros(len(self.note_paths), bool)
            mask[[self.note_ids[p] for p in paths if p in self.note_ids]] = True
            got = self._filter_mask = (self.version, paths, mask)
        return got[2]

    def chunks_of(self, notes: np.ndarray) -> np.ndarray:
        """The live chunk ids of the notes in the mask ``notes``."""
        return np.concatenate([seg.ids[notes.take(seg.note_of) & seg.live] for seg in self.segments])

    def notes_below(self, folder: str) -> np.ndarray:
        """Mask of the note ids below ``folder``, cached per version (the integrator asks often)."""
        pre = folder.rstrip("/").translate(_ASCII_LOWER) + "/"
        got = self._folder_masks.get(pre)
        if got is None or got[0] != self.version:
            paths = self.note_paths
            got = self._folder_masks[pre] = (
                self.version,
                np.fromiter((p[: len(pre)].translate(_ASCII_LOWER) == pre for p in paths), bool, len(paths)),
            )
        return got[1]

    def search_notes(
        self,
        terms: list[int],
        k: int,
        start: str | None,
        end: str | None,
        folder: str | None = None,
        paths: Collection[str] | None = None,
    ) -> list[tuple[str, float]]:
        """Top-k (note path, whole-note BM25), the arithmetic of ``search_notes_fts`` (bit-identical);
        ``folder`` keeps the notes below it (as SQL's ``LIKE 'folder/%'``: ASCII case-insensitive),
        ``paths`` those notes."""
        n_notes, _avgdl, kpart = self.note_stats()
        if not n_notes or k <= 0:
            return []
        m = len(self.note_paths)
        acc = np.zeros(m, np.float64)
        for t in terms:
            hit, weight = self._note_weights.get(self.version, t, lambda t=t: self._note_term(t, n_notes, kpart))
            np.add.at(acc, hit, weight)  # acc[hit] += weight (ids unique), the same double additions, faster
        if start or end:
            # a note is in the range when one of its live chunks is (all chunks of a file share its date)
            lo, hi = start or "0000-00-00", end or "9999-99-99"
            ok = np.zeros(m, bool)
            for seg in self.segments:
                r_lo, r_hi = bisect.bisect_left(seg.dates, lo), bisect.bisect_right(seg.dates, hi)
                sel = seg.live & (seg.date_idx >= r_lo) & (seg.date_idx < r_hi)
                ok[seg.note_of[sel]] = True  # type: ignore[index]
            acc[~ok] = 0.0
        if folder:
            acc[~self.notes_below(folder)] = 0.0
        if paths is not None:
            acc[~self.note_mask(paths)] = 0.0
        pos = top_positions(acc, k, self.note_rank)
        scores = acc[pos]
        order = np.lexsort((self.note_rank()[pos], -scores))[:k]  # best first, ties by path
        paths = self.note_paths
        return [(paths[i], sc) for i, sc in zip(pos[order].tolist(), scores[order].tolist())]

    def _note_term(self, t: int, n_notes: int, kpart: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], int]:
        """((note ids holding term t, idf * BM25 weight of t in each), size): the notes' term
        frequencies are their live chunks' summed (exact integers in float64)."""
        m = len(self.note_paths)
        tf: np.ndarray | None = None
        for seg in self.segments:
            d, f = seg.postings(t)
            if not len(d):
                continue
            if seg.dead:
                f = f * seg.live.take(d)  # a dead chunk counts nothing (cheaper than dropping it)
            got = np.bincount(seg.note_of.take(d), weights=f, minlength=m)  # type: ignore[union-attr]
            tf = got if tf is None else tf + got
        hit = np.flatnonzero(tf > 0.0) if tf is not None else np.zeros(0, np.int64)
        if not len(hit):
            return (hit, np.zeros(0, np.float64)), 1
        idf = math.log((n_notes - len(hit) + 0.5) / (len(hit) + 0.5))
        idf = idf if idf > 0.0 else 1e-6
        f = tf.take(hit)  # type: ignore[union-attr]
        return (hit.astype(np.int32), idf * ((f * (K1 + 1.0)) / (f + kpart.take(hit)))), len(hit)


def _string_ranks(strings: list[str]) -> np.ndarray:
    """rank[i] = the place of strings[i] in Python's string order."""
    rank = np.empty(len(strings), np.int64)
    rank[sorted(range(len(strings)), key=strings.__getitem__)] = np.arange(len(strings))
    return rank


def top_positions(acc: np.ndarray, k: int, rank: Callable[[], np.ndarray] | None = None) -> np.ndarray:
    """Positions of the k best positive scores and of every tie with the k-th, in no order. With
    ``rank`` (each position's place in the tie order), only the ties that order keeps: a word in every
    note ties them all (100k at 100k files), and sorting them all in Python cost ~100 ms a query."""
    top = float(acc.max()) if len(acc) else 0.0
    if top <= 0.0:
        return np.zeros(0, np.int64)
    # a cheap threshold that keeps at least k (every score at or above the k-th is then among
    # them), instead of partitioning all ~50k scores
    pos = None
    for frac in (0.9, 0.7, 0.5, 0.3, 0.1):
        mask = acc >= top * frac
        if np.count_nonzero(mask) >= k:
            pos = np.flatnonzero(mask)
            break
    if pos is None:
        pos = np.flatnonzero(acc > 0.0)
    if len(pos) > k:
        vals = acc[pos]
        kth = -np.partition(-vals, k - 1)[k - 1]  # the k-th largest (this side: ~10x faster when most scores tie)
        keep = vals >= kth
        pos, vals = pos[keep], vals[keep]  # the k best and every tie with the k-th
        if rank is not None and len(pos) > k:
            above, tied = pos[vals > kth], pos[vals == kth]
            need = k - len(above)  # >= 1: fewer than k scores are above the k-th
            if need < len(tied):
                tied = tied[np.argpartition(rank()[tied], need - 1)[:need]]
            pos = np.concatenate([above, tied])
    return pos


def build_segment(
    state: State, splitter: Splitter, rows: Iterable[tuple], stop: threading.Event | None = None
) -> Segment:
    """Rows (id, path, start_line, date, tokens) in ascending id order -> a segment of ``state``'s
    vocabulary (new words are added to it)."""
    ids: list[int] = []
    starts: list[int] = []
    pidx: list[int] = []
    didx: list[int] = []
    paths: dict[str, int] = {}
    dates: dict[str, int] = {}
    lens: list[np.ndarray] = []
    parts_t: list[np.ndarray] = []
    parts_d: list[np.ndarray] = []
    parts_f: list[np.ndarray] = []
    base = 0
    for batch in _batches(rows, FETCH):
        if stop is not None and stop.is_set():
            raise _Stopped()
        texts = []
        for cid, path, start, date, toks in batch:
            ids.append(cid)
            starts.append(start or 0)
            pidx.append(paths.setdefault(path, len(paths)))
            didx.append(-1 if date is None else dates.setdefault(date, len(dates)))
            texts.append(toks or "")
        n = len(texts)
        # split on single spaces: piece counts per text are exact (the FTS5 splitter copes with
        # empty pieces or other whitespace inside a piece)
        words = " ".join(texts).split(" ")
        pieces = np.fromiter((t.count(" ") + 1 for t in texts), np.int64, n)
        uniq = list(dict.fromkeys(words))
        state.map_words(splitter, uniq)
        local = {w: i for i, w in enumerate(uniq)}
        wt = [state.word_terms[w] for w in uniq]
        nterm = np.fromiter((len(t) for t in wt), np.int64, len(wt))
        wid = np.fromiter(map(local.__getitem__, words), np.int64, len(words))
        doc_of_word = np.repeat(np.arange(n, dtype=np.int64), pieces)
        if len(wt) and bool((nterm == 1).all()):
            tid = np.fromiter((t[0] for t in wt), np.int64, len(wt))[wid]
            doc_of = doc_of_word
        else:
            flat = np.fromiter((x for t in wt for x in t), np.int64, int(nterm.sum()))
            off = np.cumsum(nterm) - nterm
            rep = nterm[wid]
            total = int(rep.sum())
            within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(rep) - rep, rep)
            tid = flat[np.repeat(off[wid], rep) + within]
            doc_of = np.repeat(doc_of_word, rep)
        lens.append(np.bincount(doc_of, minlength=n).astype(np.int64))
        if len(tid):
            key = tid * n + doc_of
            u, cnt = np.unique(key, return_counts=True)
            t = u // n
            parts_t.append(t.astype(np.int32))
            parts_d.append((u - t * n + base).astype(np.int32))
            parts_f.append(cnt.astype(np.int32))
        base += n
    # term-major CSR without a global sort: each batch's postings (sorted by term, then doc) go
    # right after the earlier batches' postings of the same term, so docs stay ascending per term
    vocab_n = len(state.terms)
    counts = np.zeros(vocab_n, np.int64)
    for t in parts_t:
        counts += np.bincount(t, minlength=vocab_n)
    indptr = np.zeros(vocab_n + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    total = int(indptr[-1])
    docs = np.empty(total, np.int32)
    tf = np.empty(total, np.int32)
    fill = indptr[:-1].copy()
    while parts_t:
        t, d, f = parts_t.pop(0), parts_d.pop(0), parts_f.pop(0)
        c = np.bincount(t, minlength=vocab_n)
        rank = np.arange(len(t), dtype=np.int64) - (np.cumsum(c) - c)[t]
        pos = fill[t] + rank
        docs[pos] = d
        tf[pos] = f
        fill += c
    n_docs = len(ids)
    sorted_dates = sorted(dates)
    rank = np.array([dates[d] for d in sorted_dates], np.int64)  # rank -> first-seen index
    remap = np.empty(len(sorted_dates) + 1, np.int32)
    remap[rank] = np.arange(len(sorted_dates), dtype=np.int32)
    remap[-1] = -1
    return Segment(
        ids=np.array(ids, np.int64),
        doclen=np.concatenate(lens) if lens else np.zeros(0, np.int64),
        indptr=indptr,
        docs=docs,
        tf=tf,
        start=np.array(starts, np.int64),
        path_idx=np.array(pidx, np.int32),
        paths=list(paths),
        date_idx=remap[np.array(didx, np.int64)],
        dates=sorted_dates,
        live=np.ones(n_docs, bool),
    )


class TermCache:
    """Values derived per query term from the live chunks, kept while they do not change (one
    ``State.version``); past ``budget`` (summed sizes) the least recently used go first."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.version = -1
        self.items: dict[int, tuple[Any, int]] = {}  # insertion order = use order
        self.size = 0

    def get(self, version: int, term: int, make: Callable[[], tuple[Any, int]]) -> Any:
        if version != self.version:
            self.items.clear()
            self.size, self.version = 0, version
        got = self.items.pop(term, None)
        if got is None:
            got = make()
            self.size += got[1]
            while self.size > self.budget and self.items:
                self.size -= self.items.pop(next(iter(self.items)))[1]
        self.items[term] = got
        return got[0]


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")  # LIKE folds ASCII only


class _Stopped(Exception):
    pass


def stop_thread(stop: threading.Event, thread: threading.Thread | None, timeout: float = 10.0) -> None:
    """Tell a background build to stop and wait for it (closing)."""
    stop.set()
    if thread is not None and thread.is_alive():
        thread.join(timeout=timeout)


def _batches(rows: Iterable[tuple], n: int) -> Iterator[list[tuple]]:
    if isinstance(rows, sqlite3.Cursor):
        while True:
            got = rows.fetchmany(n)
            if not got:
                return
            yield got
    else:
        batch: list[tuple] = []
        for r in rows:
            batch.append(r)
            if len(batch) >= n:
                yield batch
                batch = []
        if batch:
            yield batch


def trim_heap() -> None:
    """Give the build's freed temporaries back to the OS (glibc keeps them otherwise: ~90 MB at 50k chunks)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """SQLite's varint (FTS5 uses it in its records): 7 bits per byte, big-endian, 9th byte 8 bits."""
    v = 0
    for i in range(8):
        b = buf[pos + i]
        v = (v << 7) | (b & 0x7F)
        if not b & 0x80:
            return v, pos + i + 1
    return (v << 8) | buf[pos + 8], pos + 9


def fts_totals(conn: sqlite3.Connection) -> tuple[int, int]:
    """(rows, tokens) of chunks_fts as FTS5 itself counts them (its averages record, id 1)."""
    row = conn.execute("SELECT block FROM chunks_fts_data WHERE id=1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    buf = bytes(row[0])
    n_rows, pos = _varint(buf, 0)
    n_tokens, _ = _varint(buf, pos) if pos < len(buf) else (0, pos)
    return n_rows, n_tokens


def chunk_ids(conn: sqlite3.Connection, max_id: int | None = None) -> np.ndarray:
    """Every chunk id (≤ ``max_id``), unsorted, read from the small ``chunks_hash`` index and parsed in C:
    ~10x cheaper than a Python loop over 50k rows of the chunks table (which holds the texts)."""
    row = conn.execute(
        "SELECT group_concat(id) FROM chunks INDEXED BY chunks_hash WHERE id <= ?",
        (max_id if max_id is not None else 2**62,),
    ).fetchone()
    return np.array(row[0].split(","), dtype=np.int64) if row and row[0] else np.zeros(0, np.int64)


def db_id(conn: sqlite3.Connection) -> str:
    return catalog.get_meta(conn, "db_id") or ""


# ---- whole-note BM25 (FTS5 answers it too) ---------------------------------------------------------
# A question is asked of a note, and a long note holds its answer in several chunks: a note is also
# scored as one BM25 document (its chunks' term frequencies and token counts summed; N, df and avgdl
# over notes). ``State.search_notes`` answers from the postings in memory; ``search_notes_fts`` gives
# the same answer (same floats, same order) from FTS5 while that index is not loaded.

_splitter: Splitter | None = None
_splitter_lock = threading.Lock()


def default_splitter() -> Splitter:
    global _splitter
    with _splitter_lock:
        if _splitter is None:
            _splitter = Splitter()
        return _splitter


def note_terms(splitter: Splitter, words: list[str]) -> list[str]:
    """The distinct FTS5 terms of the query words, in order (a word FTS5 splits counts as its parts)."""
    return list(dict.fromkeys(t for parts in splitter.split(words) for t in parts))


class ChunkNotes:
    """Which note each chunk belongs to, from SQL: ``State.note_share`` while the index is not in
    (one generation)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        rows = conn.execute("SELECT id, path FROM chunks ORDER BY id").fetchall()
        self.ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        paths, self.note = np.unique(np.array([r[1] for r in rows], dtype=object), return_inverse=True)
        self.notes = len(paths)

    def share(self, ids: np.ndarray) -> float:
        """Share of notes with at least one of these chunk ids."""
        if not self.notes or not len(ids):
            return 0.0
        pos = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        return float(np.unique(self.note[pos[self.ids[pos] == ids]]).size / self.notes)


def _docsize(blob: bytes | None) -> int:
    return _varint(bytes(blob), 0)[0] if blob else 0  # chunks_fts has one column: its token count


def search_notes_fts(
    conn: sqlite3.Connection,
    query: str,
    k: int,
    start: str | None = None,
    end: str | None = None,
    path_like: str | None = None,
    splitter: Splitter | None = None,
    paths: Collection[str] | None = None,
) -> list[tuple[str, float]]:
    """Top-k (note path, whole-note BM25) from FTS5: term frequencies per chunk from an fts5vocab
    'instance' table, token counts from chunks_fts_docsize; the date range and folder (an escaped
    LIKE pattern) and ``paths`` filter the notes, N/df/avgdl are over all notes (as bm25() keeps them over all rows)."""
    words = keyword.query_terms(query)
    if not words or k <= 0:
        return []
    terms = note_terms(splitter or default_splitter(), words)
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.reme_chunk_terms USING fts5vocab(main, chunks_fts, instance)")
    n_notes = conn.execute("SELECT COUNT(DISTINCT path) FROM chunks").fetchone()[0]
    if not n_notes:
        return []
    avgdl = float(fts_totals(conn)[1]) / float(n_notes)
    per_term: list[dict[str, int]] = []
    for t in terms:
        tf = dict(
            conn.execute(
                "SELECT c.path, SUM(i.n) FROM (SELECT doc, COUNT(*) AS n FROM temp.reme_chunk_terms WHERE term = ? "
                "GROUP BY doc) i JOIN chunks c ON c.id = i.doc GROUP BY c.path",
                (t,),
            )
        )
        if tf:
            per_term.append(tf)
    cands: set[str] = set().union(*per_term) if per_term else set()
    if paths is not None:
        cands &= set(paths)
    if cands and (start or end or path_like):
        sql, args = "SELECT path FROM files WHERE path IN ({marks})", []
        if start or end:
            sql += " AND date IS NOT NULL AND date BETWEEN ? AND ?"
            args += [start or "0000-00-00", end or "9999-99-99"]
        if path_like:
            sql += " AND path LIKE ? ESCAPE '\\'"
            args.append(path_like)
        cands = {r[0] for r in rows_in(conn, sql, sorted(cands), after=args)}
    length: dict[str, int] = {}
    for path, sz in rows_in(
        conn,
        "SELECT c.path, d.sz FROM chunks c JOIN chunks_fts_docsize d ON d.id = c.id WHERE c.path IN ({marks})",
        sorted(cands),
    ):
        length[path] = length.get(path, 0) + _docsize(sz)
    acc: dict[str, float] = {}
    for tf in per_term:
        idf = math.log((n_notes - len(tf) + 0.5) / (len(tf) + 0.5))
        idf = idf if idf > 0.0 else 1e-6
        for p, n in tf.items():
            if p in cands:
                f = float(n)
                acc[p] = acc.get(p, 0.0) + idf * (
                    (f * (K1 + 1.0)) / (f + K1 * ((1 - B) + (B * float(length[p])) / avgdl))
                )
    return sorted(acc.items(), key=lambda x: (-x[1], x[0]))[:k]


# ---- snapshot ------------------------------------------------------------------------------------


def _blob(strings: list[str]) -> np.ndarray:
    return np.frombuffer("\0".join(strings).encode("utf-8"), np.uint8)


def _unblob(arr: np.ndarray, n: int) -> list[str]:
    if n == 0:
        return []
    out = arr.tobytes().decode("utf-8").split("\0")
    if len(out) != n:
        raise ValueError(f"string table has {len(out)} entries, expected {n}")
    return out


def save_snapshot(metadata: Path, state: State) -> bool:
    """Persist the state's base segment (deltas are folded in by the next build); atomic replace."""
    if len(state.segments) != 1:
        return False
    seg = state.segments[0]
    live = seg.live
    meta = {
        "format": FORMAT,
        "schema": catalog.SCHEMA_VERSION,
        "tokenize": TOKENIZE,
        "tokenizer": TOKENIZER_VERSION,
        "sqlite": sqlite3.sqlite_version,
        "db_id": state.db_id,
        "generation": state.generation,
        "n": seg.n,
        "terms": len(state.terms),
        "paths": len(seg.paths),
        "dates": len(seg.dates),
    }
    arrays = {
        "meta": np.frombuffer(json.dumps(meta).encode(), np.uint8),
        "terms": _blob(state.terms),
        "ids": seg.ids,
        "doclen": seg.doclen,
        "indptr": seg.indptr,
        "docs": seg.docs,
        "tf": seg.tf,
        "start": seg.start,
        "path_idx": seg.path_idx,
        "paths": _blob(seg.paths),
        "date_idx": seg.date_idx,
        "dates": _blob(seg.dates),
        "live": live,
    }
    target = snapshot_path(metadata)
    now = time.time()
    for old in metadata.glob(f".{target.name}.*.tmp"):  # left by a process killed while saving
        with contextlib.suppress(OSError):
            if now - old.stat().st_mtime > 600:
                old.unlink()
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    try:
        atomic_write(target, buf.getvalue())
        return True
    except ReMeError:  # read-only workspace, full disk: keep it in memory
        return False


def load_snapshot(metadata: Path, want_db_id: str) -> State | None:
    """The snapshot as a State (generation as saved), or None when missing/foreign/damaged (logged)."""
    path = snapshot_path(metadata)
    if not path.exists():
        return None
    try:
        data = path.read_bytes()  # one read: a concurrent os.replace cannot mix two files
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            a = {key: z[key] for key in z.files}
        meta = json.loads(a["meta"].tobytes().decode())
        for key, want in (
            ("format", FORMAT),
            ("schema", catalog.SCHEMA_VERSION),
            ("tokenize", TOKENIZE),
            ("tokenizer", TOKENIZER_VERSION),  # the stored words' form (terms.py): re-tokenised in place
            ("sqlite", sqlite3.sqlite_version),
        ):
            if meta.get(key) != want:
                raise ValueError(f"{key} {meta.get(key)!r} != {want!r}")
        if meta.get("db_id") != want_db_id:
            raise ValueError("it was built from another index database")
        n, nt = int(meta["n"]), int(meta["terms"])
        ids, doclen, indptr, docs, tf = a["ids"], a["doclen"], a["indptr"], a["docs"], a["tf"]
        start, path_idx, date_idx, live = a["start"], a["path_idx"], a["date_idx"], a["live"]
        terms = _unblob(a["terms"], nt)
        paths = _unblob(a["paths"], int(meta["paths"]))
        dates = _unblob(a["dates"], int(meta["dates"]))
        ok = (
            len(ids) == len(doclen) == len(start) == len(path_idx) == len(date_idx) == len(live) == n
            and len(indptr) == nt + 1
            and len(docs) == len(tf)
            and int(indptr[0]) == 0
            and int(indptr[-1]) == len(docs)
            and bool((np.diff(indptr) >= 0).all())
            and bool((np.diff(ids) > 0).all())
            and (not len(docs) or (int(docs.min()) >= 0 and int(docs.max()) < n and int(tf.min()) >= 1))
            and int(tf.sum()) == int(doclen.sum())
            and (
                not n
                or (
                    int(path_idx.min()) >= 0
                    and int(path_idx.max()) < len(paths)
                    and int(date_idx.min()) >= -1
                    and int(date_idx.max()) < len(dates)
                )
            )
            and len(set(terms)) == nt
            and dates == sorted(dates)
        )
        if not ok:
            raise ValueError("inconsistent arrays")
    except Exception as exc:  # noqa: BLE001 - any unreadable snapshot is rebuilt, never fatal
        index_log(metadata, f"bm25 snapshot {path.name} unusable ({type(exc).__name__}: {exc}): rebuilding it")
        return None
    st = State(want_db_id)
    st.generation = int(meta.get("generation", -1))
    st.terms = terms
    st.vocab = {t: i for i, t in enumerate(terms)}
    seg = Segment(
        ids=ids.astype(np.int64),
        doclen=doclen.astype(np.int64),
        indptr=indptr.astype(np.int64),
        docs=docs.astype(np.int32),
        tf=tf.astype(np.int32),
        start=start.astype(np.int64),
        path_idx=path_idx.astype(np.int32),
        paths=paths,
        date_idx=date_idx.astype(np.int32),
        dates=dates,
        live=live.astype(bool).copy(),
    )
    seg.dead = int(n - seg.live.sum())
    seg.dead_idx = np.flatnonzero(~seg.live)
    st.add_segment(seg)
    return st


# ---- the per-process index -------------------------------------------------------------------------


class BM25Index:
    """Owned by an Index. ``search`` returns None whenever the answer must come from FTS5 instead
    (not built yet, rebuilding after a large change, a phrase FTS5 must answer, totals mismatch)."""

    def __init__(self, metadata: Path, mode: str) -> None:
        self.metadata = metadata
        self.mode = mode  # "rw" | "ro"
        self.splitter = Splitter()
        self._state: State | None = None
        self._lock = threading.Lock()  # guards _state and its mutation (refresh)
        self._thread: threading.Thread | None = None
        self._load: threading.Thread | None = None  # the first load (snapshot + deltas), which queries wait for
        self._stop = threading.Event()
        self._failures = 0
        self.last_build: dict[str, Any] = {}
        self.disabled: str | None = None

    # ---- background build ------------------------------------------------------------------------
    def start(self) -> None:
        """Load the snapshot or build (background thread) unless ready or already under way."""
        if self.disabled or self._stop.is_set():
            return
        t = self._thread
        if t is not None and t.is_alive():
            return
        self._thread = self._load = threading.Thread(target=self._build_bg, name="reme-bm25", daemon=True)
        self._thread.start()

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Block until a state is in (tests, benchmarks, reindex)."""
        deadline = time.monotonic() + timeout
        while True:
            self.start()
            t = self._thread
            if t is not None and t.is_alive():
                t.join(timeout=max(0.0, deadline - time.monotonic()))
            if self._state is not None or self.disabled:
                return self._state is not None
            if time.monotonic() >= deadline:
                return False

    @property
    def ready(self) -> bool:
        return self._state is not None

    @property
    def state(self) -> State | None:
        """The index in memory (None until it is in): tests and benchmarks read its segments and totals."""
        return self._state

    def _build_bg(self) -> None:
        try:
            self.build(use_snapshot=True)
        except _Stopped:
            pass
        except Exception as exc:  # noqa: BLE001 - FTS5 keeps answering; log and retry later
            self._failures += 1
            index_log(self.metadata, f"bm25 build failed ({type(exc).__name__}: {exc}): keyword search uses FTS5")
            if self._failures >= 3:
                self.disabled = f"build failed 3 times: {exc}"

    def build(self, use_snapshot: bool = True, save: bool = True) -> State:
        """Load (snapshot + deltas) or build the state from the database and swap it in."""
        t0 = time.perf_counter()
        conn = catalog.reader(self.metadata, self.mode)
        try:
            conn.execute("BEGIN")
            try:
                ident = db_id(conn)
                gen = catalog.generation(conn)
                state = load_snapshot(self.metadata, ident) if use_snapshot else None
                how = "snapshot"
                if state is not None:
                    # in this background load a delta up to the snapshot's own size is cheaper than a
                    # rebuild (a snapshot saved midway through a bulk import: 10k new of 100k chunks)
                    why = self._catch_up(conn, state, inline_max=max(INLINE_DELTA_MAX, state.n_live))
                    if why:
                        index_log(self.metadata, f"bm25 snapshot is far behind ({why}): rebuilding it")
                        state = None
                if state is None:
                    how = "built"
                    state = State(ident)
                    seg = build_segment(state, self.splitter, conn.execute(_ROWS_SQL + " ORDER BY c.id"), self._stop)
                    state.add_segment(seg)
                state.generation = gen
                totals = fts_totals(conn)
            finally:
                conn.execute("COMMIT")
        finally:
            conn.close()
        if totals != (state.n_live, state.tokens_live):
            self.disabled = (
                f"in-memory totals {(state.n_live, state.tokens_live)} != FTS5's {totals} right after a build"
            )
            index_log(self.metadata, f"bm25: {self.disabled}; keyword search stays on FTS5")
            raise _Stopped()
        state.warm()
        if how == "built":
            trim_heap()
        saved = False
        if how == "built" and save and self.mode == "rw":
            saved = save_snapshot(self.metadata, state)
        with self._lock:
            self._state = state
        self.last_build = {
            "how": how,
            "seconds": round(time.perf_counter() - t0, 3),
            "chunks": state.n_live,
            "terms": len(state.terms),
            "saved": saved,
            "generation": state.generation,
        }
        return state

    def _catch_up(self, conn: sqlite3.Connection, state: State, inline_max: int) -> str | None:
        """Apply the chunk-id set difference between ``state`` and the database (inside the caller's
        read transaction). Returns why not (too much has changed) or None when done."""
        max_id = state.max_id
        count = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]  # counted on the smallest index
        new = conn.execute("SELECT COUNT(*) FROM chunks WHERE id > ?", (max_id,)).fetchone()[0]  # a rowid range
        if new > inline_max:
            return f"{new} chunks added"
        if count != state.n_live + new:  # something was removed: the set difference
            current = chunk_ids(conn, max_id)
            for seg in state.segments:
                gone = np.setdiff1d(seg.ids[seg.live], current, assume_unique=True)
                if len(gone):
                    tokens = seg.kill(gone)
                    state.n_live -= len(gone)
                    state.tokens_live -= tokens
                    state.version += 1
        if new:
            base = state.segments[0] if state.segments else None
            if (
                base is not None
                and len(state.segments) >= 1 + MAX_DELTA_SEGMENTS
                and state.delta_docs + new <= inline_max
            ):
                # merge the deltas: every chunk above the base's ids is a live delta chunk. Only while
                # that is small: during a bulk import the deltas outgrow a small base, and merging them
                # here cost a query seconds; the compaction that _refresh kicks merges them instead
                state.segments = [base]
                state.n_live = int(base.live.sum())
                state.tokens_live = int(base.doclen[base.live].sum())
                max_id = base.max_id
            seg = build_segment(
                state, self.splitter, conn.execute(_ROWS_SQL + " WHERE c.id > ? ORDER BY c.id", (max_id,))
            )
            state.add_segment(seg)
        return None

    # ---- query -----------------------------------------------------------------------------------
    def search(
        self,
        conn: sqlite3.Connection,
        query: str,
        k: int,
        start: str | None = None,
        end: str | None = None,
        paths: Collection[str] | None = None,
    ) -> list[tuple[int, float]] | None:
        """Top-k (chunk id, score) exactly as ``keyword.search_chunks`` would return, or None (use FTS5).
        ``conn`` is the Index's connection (the caller holds its lock)."""
        if self.disabled:
            return None
        words = keyword.query_terms(query)
        if not words:
            return []
        with self._lock:
            state = self._state
            if state is None:
                self.start()
                return None
            if not self._refresh(conn, state):
                return None
            terms = state.query_terms(self.splitter, words)
            if terms is None:
                return None
            return state.search(terms, k, start, end, None if paths is None else state.note_mask(paths))

    def search_notes(
        self,
        conn: sqlite3.Connection,
        query: str,
        k: int,
        start: str | None = None,
        end: str | None = None,
        folder: str | None = None,
        paths: Collection[str] | None = None,
    ) -> list[tuple[str, float]]:
        """Top-k (note path, whole-note BM25) among ``paths`` (None: all): from memory when the index is in, else from FTS5 (the
        same answer, so a search does not change while the index loads). FTS5 needs 0.3-0.7 s for
        common words at 50k chunks, loading the snapshot 0.1-0.3 s: the first load, under way, is
        waited for (at most LOAD_WAIT_S) first; a rebuild is not."""
        if not self.disabled:
            words = keyword.query_terms(query)
            for waited in (False, True):
                with self._lock:
                    state = self._state
                    if state is not None:
                        if self._refresh(conn, state):
                            return (
                                state.search_notes(state.term_ids(self.splitter, words), k, start, end, folder, paths)
                                if words
                                else []
                            )
                        break  # stale: FTS5 answers while it is rebuilt
                    self.start()
                    t = self._thread
                if waited or t is None or not t.is_alive() or t is not self._load:
                    break  # a rebuild (the index fell behind a bulk import) takes seconds: FTS5 answers now
                t.join(timeout=LOAD_WAIT_S)
        return search_notes_fts(
            conn, query, k, start, end, keyword.like_prefix(folder) if folder else None, self.splitter, paths
        )

    def note_share(self, conn: sqlite3.Connection, ids: np.ndarray) -> float | None:
        """State.note_share from memory; None while the index is not in (or stale)."""
        with self._lock:
            state = self._state
            return state.note_share(ids) if state is not None and self._refresh(conn, state) else None

    def chunk_ids(self, conn: sqlite3.Connection, paths: Collection[str]) -> np.ndarray | None:
        """The live chunk ids of the files in ``paths`` from memory (~1 ms for 25k of 49k chunks, SQL
        ~25 ms); None while the index is not in (or stale)."""
        with self._lock:
            state = self._state
            if state is None or not self._refresh(conn, state):
                return None
            return state.chunks_of(state.note_mask(paths))

    def paths(self, conn: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
        """{chunk id: file path} of those chunks this process's index holds live, when it was built
        from the database ``conn`` is on (chunk ids restart at 1 in a re-created one)."""
        with self._lock:
            state = self._state
            if state is None or not ids or db_id(conn) != state.db_id:
                return {}
            return state.paths_of(ids)

    def _refresh(self, conn: sqlite3.Connection, state: State) -> bool:
        if catalog.version(conn) == (state.db_id, state.generation):
            return True
        conn.execute("BEGIN")
        try:
            gen = catalog.generation(conn)
            if db_id(conn) != state.db_id:
                why: str | None = "the index database was replaced"
            else:
                why = self._catch_up(conn, state, inline_max=INLINE_DELTA_MAX)
            if why is None:
                totals = fts_totals(conn)
                if totals != (state.n_live, state.tokens_live):
                    why = f"in-memory totals {(state.n_live, state.tokens_live)} != FTS5's {totals}"
                    index_log(self.metadata, f"bm25: {why}: rebuilding, FTS5 answers meanwhile")
        finally:
            conn.execute("COMMIT")
        if why is not None:
            self._state = None  # stale: FTS5 answers until the rebuild is in
            self._kick_rebuild()
            return False
        state.generation = gen
        base = state.segments[0]
        if state.delta_docs > max(2000, base.n // 10) or base.dead > max(2000, base.n // 4):
            self._kick_rebuild()  # compaction: this state keeps answering until the new one is in
        return True

    def _kick_rebuild(self) -> None:
        if self.disabled or self._stop.is_set():
            return
        t = self._thread
        if t is not None and t.is_alive():
            return
        self._thread = threading.Thread(target=self._rebuild_bg, name="reme-bm25", daemon=True)
        self._thread.start()

    def _rebuild_bg(self) -> None:
        try:
            self.build(use_snapshot=False)
        except _Stopped:
            pass
        except Exception as exc:  # noqa: BLE001
            self._failures += 1
            index_log(self.metadata, f"bm25 rebuild failed ({type(exc).__name__}: {exc}): keyword search uses FTS5")
            if self._failures >= 3:
                self.disabled = f"rebuild failed 3 times: {exc}"

    def discard(self) -> None:
        """Forget the state (the database was wiped): FTS5 answers until the next build."""
        with self._lock:
            self._state = None

    def close(self) -> None:
        stop_thread(self._stop, self._thread)

    def info(self) -> dict[str, Any]:
        st = self._state
        return {
            "ready": st is not None,
            "disabled": self.disabled,
            "chunks": st.n_live if st else 0,
            "segments": len(st.segments) if st else 0,
            "terms": len(st.terms) if st else 0,
            "last_build": self.last_build,
        }
