"""Hybrid search: BM25 (jieba/FTS5) and vector recall run concurrently (Index.recall), are fused
by a rule chosen in Config.search_fusion (``fuse``, a function of the Recall alone; see FUSIONS and
bench/retrieval.py for the measurements), filtered by min_score, cut to limit, then expanded one
hop along wikilinks."""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

from ..base.errors import InvalidInputError
from ..notes import tags as note_tags
from . import keyword, labels, periods, tiers
from .catalog import rows_in
from .records import Only, SearchResponse

if TYPE_CHECKING:  # pragma: no cover
    from . import Index
    from .records import Recall
    from .tiers import TierOf

RRF_K = 60
RARE_SHARE = 0.01
RARE_TOP = 3  # the rare-term rule holds for BM25's own top hits: lower down, a rare word is a coincidence
MAX_LIMIT = 100
MAX_CANDIDATES = 200
ATTEMPTS = 3  # searches of one call while concurrent writers keep replacing its hits' chunks


@dataclass(frozen=True)
class Fusion:
    """How the two rankings become one. RRF: ``Σ w / (60 + rank)`` over the lists a chunk is in.

    coverage_aware: while only a share p of the chunks has a vector, a vector rank r among them is
      read as rank r/p among all chunks, and a chunk without a vector takes its keyword rank for the
      vector half too (it is never penalised for not being embedded yet; p = 0 is keyword-only). Nor
      for being embedded: a keyword hit's vector part is at least that guess. BM25's best chunks were
      chosen by the other half, so their real vector ranks are worse on average than the guess the
      unembedded ones get, and a partly embedded workspace ranked below both its 0 % and its 100 %
      (bench/README, "Partial coverage: a vector rank only lifts"). At 100 % no rank is a guess.
    note: weight of the note-level term: the same fusion over notes is added to every chunk of the
      note, so the note the question is about wins. Its vector ranking ranks notes by their best
      chunk; its keyword ranking is a whole-note BM25 (each note one document: its chunks' term
      frequencies and token counts summed, N/df/avgdl over notes; bm25.search_notes_fts), so a note
      that matches the question in several chunks outranks one that matches in one.
    note_coverage: the note term reads its vector ranks with the share of notes that have a vector in
      some chunk (Recall.note_coverage), not the share of chunks: at 10 % of the chunks a long session
      is embedded in part far more often than one time in ten.
    rare: a keyword hit among BM25's top RARE_TOP holding a query term found in at most this many
      chunks (an identifier, a hash, a name) is worth at least a first-rank vector hit besides its
      keyword rank (further down, the rest of the question does not match it); its note
      too, in the note term, when the term is also in at most RARE_SHARE of all chunks (in 49 cards
      a word in one card is no identifier of a note: it would count twice there). 0 = off.
    foreign: a candidate whose dominant script is not the query's (Recall.foreign: an English
      question, a Chinese note) is one that a half cannot rank fairly, so the rank it lacks there is
      no evidence against it. BM25 cannot match it on the question's words: a foreign vector hit
      takes its rank among the foreign vector hits as a stand-in keyword rank. The multilingual
      model scores another language lower than its own for the same meaning, so it ranks such
      a note below the question's language's ones: a foreign keyword hit (found through the
      question's commands or names) that has a vector but not among the vector hits takes its rank
      among the foreign keyword hits as a stand-in vector rank. Both in the chunk term and, for
      notes, in the note term. And the vector ranking is the per-script one (Recall.vector_scripts:
      each row's cosine read as a z-score among its own script's rows, so the foreign chunks the
      model scores below every own-language one are ranked too; the keyword stand-ins stay those
      of the plain ranking's foreign hits). Not when BM25's top holds a
      rare-term hit (an identifier is asked for: a stand-in must not tie with the exact match).
      run_search then gives the foreign notes that stand out most places of their own
      (foreign_slots).
    normalized: min-max normalized raw scores instead of ranks (for comparison only).
    """

    vector_weight: float = 0.5
    keyword_weight: float = 0.5
    coverage_aware: bool = True
    note: float = 0.0
    note_coverage: bool = True
    rare: int = 0
    foreign: bool = False
    normalized: bool = False


FUSIONS = {
    "notes": Fusion(note=1.0, rare=3),
    "scripts": Fusion(note=1.0, rare=3, foreign=True),  # the default: notes + foreign stand-ins
    "rrf": Fusion(),
    "rrf-0.7": Fusion(vector_weight=0.7, keyword_weight=0.3, coverage_aware=False),  # the seed's rule
    "normalized": Fusion(vector_weight=0.7, keyword_weight=0.3, coverage_aware=False, normalized=True),
}


def fusion_named(name: str) -> Fusion:
    try:
        return FUSIONS[name.strip().lower()]
    except KeyError:
        raise InvalidInputError(f"search_fusion={name!r} is unknown; use one of {', '.join(FUSIONS)}") from None


def rrf(
    vector: list[int],
    kw: list[int],
    k: int = RRF_K,
    *,
    weights: tuple[float, float] = (0.5, 0.5),
    coverage: float = 1.0,
    embedded: Any = None,
    both: bool | None = None,
) -> dict[int, tuple[float, float, float]]:
    """{id: (score, vector part, keyword part)} from two rankings (best first, 1-based ranks).
    One ranking alone has weight 1. ``both``: whether both halves searched (default: both found
    something); a half that searched and found nothing keeps its weight, so a hit only one half found
    does not score as high as one both found (hits of two workspaces are merged by score).
    With ``embedded`` (a predicate) the rule is coverage-aware."""
    if both is None:
        both = bool(vector and kw)
    wv, wk = weights if both else (1.0, 1.0)
    aware = embedded is not None and coverage < 1.0
    out: dict[int, list[float]] = {}
    for rank, cid in enumerate(vector, 1):
        out.setdefault(cid, [0.0, 0.0])[0] += wv / (k + (rank / coverage if aware else rank))
    for rank, cid in enumerate(kw, 1):
        part = out.setdefault(cid, [0.0, 0.0])
        part[1] += wk / (k + rank)
        if aware:  # its keyword rank is the guess of its vector rank; a real one counts where it is better
            part[0] = max(part[0], wv / (k + rank))
    return {cid: (v + w, v, w) for cid, (v, w) in out.items()}


def normalized_fusion(
    vector: list[tuple[int, float]], kw: list[tuple[int, float]], weights: tuple[float, float] = (0.7, 0.3)
) -> dict[int, tuple[float, float, float]]:
    """Min-max normalize each list's raw scores to [0, 1], then weight (1 for a single list)."""
    wv, wk = weights if vector and kw else (1.0, 1.0)

    def norm(pairs: list[tuple[int, float]]) -> dict[int, float]:
        if not pairs:
            return {}
        scores = [s for _, s in pairs]
        lo, hi = min(scores), max(scores)
        return {cid: (1.0 if hi == lo else (s - lo) / (hi - lo)) for cid, s in pairs}

    nv, nk = norm(vector), norm(kw)
    return {
        cid: (wv * nv.get(cid, 0.0) + wk * nk.get(cid, 0.0), wv * nv.get(cid, 0.0), wk * nk.get(cid, 0.0))
        for cid in set(nv) | set(nk)
    }


def fuse(rec: Recall, rule: Fusion) -> dict[int, tuple[float, float, float]]:
    """{chunk id: (score, vector part, keyword part)}: the ranking ``rule`` makes of one recall, read
    from it alone (a new rule is a function of a Recall, with its own test on hand-made ones)."""
    vec = [c for c, _ in rec.vector]
    kw = [c for c, _ in rec.keyword]
    if rule.normalized:
        return normalized_fusion(rec.vector, rec.keyword, (rule.vector_weight, rule.keyword_weight))
    weights = (rule.vector_weight, rule.keyword_weight)
    aware = (
        dict(coverage=rec.coverage or 0.0, embedded=rec.embedded)
        if rule.coverage_aware and rec.coverage is not None
        else {}
    )
    both = rec.coverage is not None and rec.keyword_searched  # both halves ran, whatever each found
    rare = rec.rare_chunks(rule.rare) & set(kw[:RARE_TOP]) if rule.rare and kw and vec else set()
    stand_in = rule.foreign and not rare and rec.keyword_searched
    if stand_in and rec.vector_scripts is not None:  # each script's cosines on their own scale
        vec = [c for c, _ in rec.vector_scripts]
    fused = rrf(vec, kw, weights=weights, both=both, **aware)
    _boost_rare(fused, rare, rule.vector_weight)
    # keyword stand-ins for the plain ranking's foreign hits only: one for every hit the per-script
    # ranking adds put many near-alike foreign notes above a dated question's own (bench/README)
    foreign_vec = [c for c, _ in rec.vector if c in rec.foreign] if stand_in else []
    foreign_kw = [c for c in kw if c in rec.foreign] if stand_in else []
    _stand_in_foreign(fused, foreign_vec, set(kw), rule.keyword_weight, aware.get("coverage") or 1.0, half=2)
    _stand_in_foreign(fused, foreign_kw, set(vec), rule.vector_weight, 1.0, half=1)  # BM25's list is whole
    if rule.note and fused:
        paths = rec.paths
        note_aware = {**aware, "embedded": _note_embedded(rec, paths)} if aware else {}
        if aware and rule.note_coverage and rec.note_coverage is not None:
            note_aware["coverage"] = rec.note_coverage  # note ranks among the notes with a vector
        notes = rrf(
            _note_ranking(vec, paths), [p for p, _ in rec.notes or ()], weights=weights, both=both, **note_aware
        )
        # the same rule over notes, for a term rare in the workspace as a whole as well (a small
        # workspace: only terms in fewer chunks count)
        note_df = min(rule.rare, int(rec.chunks * RARE_SHARE)) if rare else 0
        note_rare = rec.rare_chunks(note_df) & rare if note_df else set()
        _boost_rare(notes, {paths[c] for c in note_rare if c in paths}, rule.vector_weight)
        note_p = note_aware.get("coverage") or 1.0
        bm25_notes = {path for path, _ in rec.notes or ()}
        vector_notes = set(_note_ranking(vec, paths))
        _stand_in_foreign(notes, _note_ranking(foreign_vec, paths), bm25_notes, rule.keyword_weight, note_p, half=2)
        _stand_in_foreign(notes, _note_ranking(foreign_kw, paths), vector_notes, rule.vector_weight, 1.0, half=1)
        for cid, (s, v, w) in fused.items():
            ns, nv, nw = notes.get(paths.get(cid), (0.0, 0.0, 0.0))  # type: ignore[call-overload]
            fused[cid] = (s + rule.note * ns, v + rule.note * nv, w + rule.note * nw)
    return fused


def _boost_rare(fused: dict[Any, tuple[float, float, float]], keys: Any, vector_weight: float) -> None:
    """A keyword hit holding a rare query term is worth at least a first-rank vector hit (the bonus
    is a keyword signal: it is shown in the keyword part)."""
    for key in keys:
        if key in fused:
            s, v, w = fused[key]
            bonus = max(0.0, vector_weight / (RRF_K + 1) - v)
            fused[key] = (s + bonus, v, w + bonus)


def _stand_in_foreign(
    fused: dict[Any, tuple[float, float, float]], ranked: list[Any], seen: set[Any], weight: float, p: float, half: int
) -> None:
    """One half's foreign hits in its order: the i-th takes rank i in the other half (read as i/p
    for vector ranks while a share p is embedded) unless that half ranked it (``seen``). The part
    is raised to the stand-in, not added to (a chunk without a vector has its keyword rank as its
    vector rank already); shown in that half's part (``half``: 1 vector, 2 keyword)."""
    for rank, key in enumerate(ranked, 1):
        if key in fused and key not in seen:
            parts = list(fused[key])
            raise_by = max(0.0, weight / (RRF_K + rank / p) - parts[half])
            parts[0] += raise_by
            parts[half] += raise_by
            fused[key] = (parts[0], parts[1], parts[2])


def _note_ranking(chunks: list[int], paths: dict[int, str]) -> list[str]:
    """Notes in the order of their best chunk in one chunk ranking."""
    seen: dict[str, None] = {}
    for cid in chunks:
        if cid in paths:
            seen.setdefault(paths[cid], None)
    return list(seen)


def _note_embedded(rec: Recall, paths: dict[int, str]) -> Any:
    """A note counts as embedded when any of its candidate chunks has a vector."""
    have = {p for cid, p in paths.items() if rec.embedded(cid)}
    return have.__contains__


def parse_date(value: str | None, what: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return _dt.date.fromisoformat(str(value).strip()).isoformat()
    except ValueError:
        raise InvalidInputError(f"{what} {value!r} is not a date; use YYYY-MM-DD, e.g. 2026-06-20") from None


def validate(
    query: Any, limit: Any, min_score: Any, start_date: Any, end_date: Any
) -> tuple[str, str | None, str | None]:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("search: query is empty; give a few words to look for")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"search: limit must be between 1 and {MAX_LIMIT} (got {limit!r})")
    if not isinstance(min_score, (int, float)) or math.isnan(min_score) or min_score < 0:
        raise InvalidInputError(f"search: min_score must be a number >= 0 (got {min_score!r})")
    start = parse_date(start_date, "start_date")
    end = parse_date(end_date, "end_date")
    if start and end and start > end:
        raise InvalidInputError(f"search: start_date {start} is after end_date {end}")
    return query.strip(), start, end


def run_search(
    index: Index,
    query: str,
    limit: int = 5,
    min_score: float = 0.0,
    start_date: str | None = None,
    end_date: str | None = None,
    *,
    fusion: str | Fusion | None = None,
    expand: bool = True,
    modes: tuple[str, ...] = ("vector", "keyword"),
    folder: str | None = None,
    tier_of: TierOf | None = None,
    chunks: bool = False,
    tags: Sequence[str] = (),
    today: _dt.date | None = None,
    dates: bool | None = None,
) -> SearchResponse:
    """``tier_of`` (e.g. the project preference) reorders the fused candidates before the cut; see tiers.py.
    ``limit`` hits are ``limit`` distinct notes (``distinct_notes``), or chunks with ``chunks``.

    Filters apply before ranking, in both recall halves: the dates, the folder, ``tags`` (only notes
    carrying every one: notes/tags.py, labels.py) and the notes ``tier_of`` leaves out (a project
    named), so ``limit`` hits come back whenever that many notes pass.
    A period the query names ("last week", relative to ``today``, the local date by default) ranks the
    notes dated in it higher (``period_boost``) unless ``dates`` (default Config.search_dates) is off
    or the caller gave start_date/end_date."""

    query, start, end = validate(query, limit, min_score, start_date, end_date)
    only = Only(note_tags.filter_tags(tags), (lambda value: tier_of(value) is not None) if tier_of else None)
    rule = fusion if isinstance(fusion, Fusion) else fusion_named(fusion or index.config.search_fusion)
    warnings: list[str] = []
    if len(query) > keyword.MAX_QUERY_CHARS:
        warnings.append(f"query cut to its first {keyword.MAX_QUERY_CHARS} characters")
        query = query[: keyword.MAX_QUERY_CHARS]
    if folder is not None:
        folder = index.ws.normalize(folder).rstrip("/")
    use_dates = index.config.search_dates if dates is None else dates
    period = periods.find_period(query, today or _dt.date.today()) if use_dates and not (start or end) else None
    words = query
    if period is not None:
        warnings.append(f"query {period.label()}: notes of those days ranked higher")
        # the period's words are no evidence of what the note is about (R@1 +0.02..0.05 without them)
        words = period.rest(query) if _WORD.search(period.rest(query)) else query
    index.maybe_sync()
    k = min(MAX_CANDIDATES, limit * (10 if tier_of else 5))  # a preference needs candidates beyond the top
    for _ in range(ATTEMPTS):
        rec = index.recall(
            words, k, start, end, modes, folder, notes=bool(rule.note), rare=rule.rare, scripts=rule.foreign, only=only
        )
        fused = fuse(rec, rule)
        inside = _rank_period(index, rec, fused, words, k, period, modes, folder, rule, only) if period else None
        if rule.foreign:  # a period named: the other language's notes of that period
            foreign_slots(fused, inside or rec, rule, rec.paths)
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1][0], kv[0]))
        if tier_of is not None:
            ranked = index.read(lambda conn: tiers.prefer_chunks(conn, ranked, tier_of))
        ranked = [(cid, parts) for cid, parts in ranked if parts[0] >= min_score]
        folded: dict[int, list[int]] = {}
        if not chunks:
            ranked, folded = distinct_notes(ranked, index.read(lambda conn: _chunk_paths(conn, rec, ranked)))
        ranked = ranked[:limit]
        results = index.load_hits(ranked, expand)
        if len(results) == len(ranked):
            _fold(index, results, [folded.get(cid, []) for cid, _ in ranked])
            break
        # a hit's chunks were replaced between the recall and reading them (another process rewrote or
        # removed its file, which gives its chunks new ids): search the database as it is now
    warnings += rec.warnings
    both = len({c for c, _ in rec.vector} & {c for c, _ in rec.keyword})
    if rec.coverage is not None and rec.coverage < 1.0 and "keyword" in modes:
        warnings.append(f"vectors for {math.floor(rec.coverage * 100)} % of chunks; keyword results complete")
    counts = {"vector": len(rec.vector), "keyword": len(rec.keyword), "returned": len(results), "hybrid": both}
    return SearchResponse(results, counts, warnings, rec.vector, rec.foreign_z, rec.scale)


Scores = dict[int, tuple[float, float, float]]


# ---- dates in the query (issue 25, 2): the notes of the period it names first ----------------------------
PERIOD_BONUS = 1 / (RRF_K + 1)  # see period_boost
_WORD = re.compile(r"\w")


def period_boost(fused: Scores, inside: Scores, unmatched: list[int]) -> None:
    """Every note dated in the query's period gains PERIOD_BONUS (as much as a first-rank hit in both
    halves of the chunk term) over the rank the same search within the period gives it (its ranks
    among the period's notes only); a note of the period that neither half found gets the bonus alone
    (``unmatched``: one chunk each, newest first), so "what did we do yesterday" lists yesterday's
    notes whatever their words. A soft boost, not a filter: a note may be dated the day it was written
    about something earlier (a postmortem of last week's outage), and a note outside the period that
    matches better than by a first-rank hit still ranks above (bench/README, "Dates in the query")."""
    for cid, parts in inside.items():
        s, v, w = max(parts, fused.get(cid, parts), key=lambda p: p[0])
        fused[cid] = (s + PERIOD_BONUS, v, w)
    for i, cid in enumerate(unmatched):
        if cid not in fused:
            fused[cid] = (PERIOD_BONUS * (1 - i / 10_000), 0.0, 0.0)  # newest first


def _rank_period(
    index: Index,
    rec: Recall,
    fused: Scores,
    words: str,
    k: int,
    period: periods.Period,
    modes: tuple[str, ...],
    folder: str | None,
    rule: Fusion,
    only: Only,
) -> Recall:
    """The same search within the period (and the same filters), its notes boosted in ``fused``
    (period_boost); ``rec`` learns the new candidates' notes. Returns that search's recall."""
    inside = index.recall(
        words, k, period.start.isoformat(), period.end.isoformat(), modes, folder,
        notes=bool(rule.note), rare=rule.rare, scripts=rule.foreign, only=only,
    )  # fmt: skip
    inside_fused = fuse(inside, rule)

    def read(conn: Any) -> list[tuple[int, str]]:
        return dated_notes(
            conn, period, folder, k, _chunk_paths(conn, inside, inside_fused), labels.allowed_paths(conn, only)
        )

    dated = index.read(read)
    period_boost(fused, inside_fused, [cid for cid, _ in dated])
    rec.paths.update({**inside.paths, **dict(dated)})
    return inside


def dated_notes(
    conn: Any,
    period: periods.Period,
    folder: str | None,
    k: int,
    found: dict[int, str],
    allowed: set[str] | None = None,
) -> list[tuple[int, str]]:
    """(first chunk, path) of up to ``k`` notes dated in ``period`` whose chunks are not among ``found``
    ({chunk: path}: the candidates), newest first, among ``allowed`` (a search filter's files; None:
    all). Files first, by their date index: a year holds thousands of chunks."""
    seen = set(found.values())
    sql = "SELECT path FROM files WHERE date BETWEEN ? AND ?" + (" AND path LIKE ? ESCAPE '\\'" if folder else "")
    args = [period.start.isoformat(), period.end.isoformat(), *([keyword.like_prefix(folder)] if folder else [])]
    limit = 4 * k + len(seen) if allowed is None else -1  # some have no chunks; a filter may pass few of them
    rows = conn.execute(sql + " ORDER BY date DESC, path LIMIT ?", [*args, limit])
    paths = [path for (path,) in rows if path not in seen and (allowed is None or path in allowed)]
    first = dict(rows_in(conn, "SELECT path, min(id) FROM chunks WHERE path IN ({marks}) GROUP BY path", paths))
    return [(first[path], path) for path in paths if path in first][:k]


# ---- the other language's best notes get places of their own (issue 25, 4) ---------------------------
FOREIGN_SLOTS = (2, 4)  # the places in the list of notes they take
# how far the other script's best passage must stand out (z among its script's passages) against the
# query's own script's best (z among its own), less: en->zh / zh->en questions p10 -0.71 / 0.14, the
# same notes asked by their own title p50 -0.82 (bench/README, "The other language's places")
FOREIGN_STANDOUT = -0.5
# the dictionary's ranking counts half the per-script vector ranking's at full coverage (bilingual R@5
# at 100 %, the MCP call, places opened by the vectors alone: weight 1 0.797 / 0.778 en->zh / zh->en,
# 0.5 0.811 / 0.820, 0.25 0.807 / 0.815): an English word maps to many Chinese words
TRANSLATED_WEIGHT = 0.5
# while part of the passages are embedded, the per-script ranking holds the right note only if it is
# embedded and puts the embedded others first: bilingual R@5 (en->zh / zh->en) at 10 / 50 / 90 %,
# counted at coverage ** 1: 0.448 / 0.429, 0.566 / 0.534, 0.764 / 0.794; ** 4: 0.580 / 0.577, 0.575 /
# 0.550, 0.759 / 0.783; ** 8: 0.580 / 0.577, 0.670 / 0.577, 0.722 / 0.741 (bench/README)
PARTIAL_POWER = 4


def foreign_standout(rec: Recall) -> float | None:
    """How far the best passage in the other script than the query's stands out among that script's
    passages, less how far the query's own script's best stands out among its own (both z-scores of
    one vector pass); None without a per-script ranking (one script, or fewer than 20 passages of one)."""
    if rec.vector_scripts is None or not rec.foreign_z or rec.scale is None:
        return None
    own = next((score for cid, score in rec.vector if cid not in rec.foreign), None)
    return None if own is None else rec.foreign_z[0][1] - float(rec.scale.z(own))


def foreign_slots(fused: Scores, rec: Recall, rule: Fusion, paths: dict[int, str]) -> None:
    """The multilingual model scores the query's own language far above another for the same meaning,
    and BM25 cannot match the other language on the question's words, so neither half can rank a
    note in the other script against the query's own: fused, the one the question is about rarely
    reaches the top 5 (bilingual R@5 0.61 / 0.23). So when the question's words in the other language
    find notes of that script (``Recall.translated``), or the other script's best passage stands out
    about as far as the own script's best (``foreign_standout``), the other script's best notes
    (``foreign_notes``) take the places FOREIGN_SLOTS of the list (their best chunk raised to halfway
    between its neighbors there, shown in the vector part); the first place stays the fused one's, and
    a place is put off to the next one while it would be above a note that holds a rare query term
    among BM25's top (an identifier asked for keeps its place) or between two notes that tie (their
    ids order them). When the question's own language finds nothing, they are the list. ``rec``: the
    search's recall, or within a period the query names, that period's; ``paths``: every candidate's
    note."""
    standout = foreign_standout(rec)
    if not rec.translated and (standout is None or standout <= FOREIGN_STANDOUT):
        return
    foreign = foreign_notes(rec, paths)
    if not fused:  # the question's own language found nothing: the other language's notes are the list
        for rank, cid in enumerate(foreign.values()):
            s = rule.keyword_weight / (RRF_K + 1 + rank)
            fused[cid] = (s, 0.0, s)
        return
    heads, _ = distinct_notes(sorted(fused.items(), key=lambda kv: (-kv[1][0], kv[0])), paths)
    best = {paths.get(cid, f"#{cid}"): cid for cid, _ in heads}  # note -> its best chunk, best first
    notes = list(best)
    for note, cid in foreign.items():
        best.setdefault(note, cid)  # a candidate of the other script's rankings only
    top_kw = {cid for cid, _ in rec.keyword[:RARE_TOP]}
    held = {paths.get(cid) for cid in rec.rare_chunks(rule.rare) & top_kw} & set(notes) if rule.rare else set()
    score = lambda note: fused.get(best[note], (0.0,))[0]  # noqa: E731
    order: list[str] = []
    due = 0  # places owed to the other language (one is put off while no place is free)
    for place in range(1, len(best) + 1):
        due += place in FOREIGN_SLOTS
        pick = next((p for p in foreign if p not in order), None) if due and order and held <= set(order) else None
        nxt = next((p for p in notes if p not in order and p != pick), None)
        below = score(nxt) if nxt is not None else 0.0
        if pick is not None and score(order[-1]) > below:  # not between two notes that tie
            s, v, w = fused.get(best[pick], (0.0, 0.0, 0.0))
            if s <= below:  # moved up: halfway between its new neighbors, in the vector part
                halfway = (score(order[-1]) + below) / 2
                fused[best[pick]] = (halfway, v + halfway - s, w)
            due -= 1
        else:
            pick = nxt
        if pick is None:
            break
        order.append(pick)
        if place >= max(FOREIGN_SLOTS) and not due:
            break


def foreign_notes(rec: Recall, paths: dict[int, str]) -> dict[str, int]:
    """{note: its best chunk} of the other script, best first: by how far their best passage stands out
    among that script's passages (the per-script vector ranking, which ranks only the embedded share of
    them: counted at coverage ** PARTIAL_POWER) and by BM25 over the question's words in that language
    (``Recall.translated``, counted at TRANSLATED_WEIGHT), fused by reciprocal rank."""
    score: dict[str, float] = {}
    chunk: dict[str, int] = {}
    vector_weight = 1.0 if rec.coverage is None else rec.coverage**PARTIAL_POWER
    for ranking, weight in ((rec.foreign_z, vector_weight), (rec.translated, TRANSLATED_WEIGHT)):
        seen: list[str] = []
        for cid, _ in ranking:
            note = paths.get(cid)
            if note is not None and note not in seen:
                seen.append(note)
                chunk.setdefault(note, cid)
        for rank, note in enumerate(seen):
            score[note] = score.get(note, 0.0) + weight / (RRF_K + rank)
    return {note: chunk[note] for note in sorted(score, key=lambda n: -score[n])}


# ---- distinct notes (issue 25, 1): a result list spends its slots on different notes ---------------
Ranked = list[tuple[int, tuple[float, float, float]]]


def distinct_notes(ranked: Ranked, paths: dict[int, str]) -> tuple[Ranked, dict[int, list[int]]]:
    """The best chunk of each note, in rank order, and {that chunk: the note's other ranked chunks}
    (shown in its hit as extra line ranges). A chunk whose note is unknown (removed meanwhile) stands
    alone; load_hits skips it and the search runs again."""
    out: Ranked = []
    first: dict[str, int] = {}
    folded: dict[int, list[int]] = {}
    for cid, parts in ranked:
        path = paths.get(cid)
        if path is not None and path in first:
            folded.setdefault(first[path], []).append(cid)
            continue
        if path is not None:
            first[path] = cid
        out.append((cid, parts))
    return out, folded


def _chunk_paths(conn: Any, rec: Recall, ranked: Ranked | Scores) -> dict[int, str]:
    """The note of every ranked chunk: the recall's when it has them (the note-level rules ask), else
    from the catalog."""
    missing = [cid for cid in (ranked if isinstance(ranked, dict) else dict(ranked)) if cid not in rec.paths]
    return {**rec.paths, **(tiers.chunk_paths(conn, missing) if missing else {})}


def _fold(index: Index, hits: list[Any], folded: list[list[int]]) -> None:
    """Each hit's ``also``: the line ranges of its note's other matching chunks, in line order."""
    ids = [cid for group in folded for cid in group]
    if not ids:
        return
    lines = index.read(lambda conn: tiers.chunk_lines(conn, ids))
    for hit, group in zip(hits, folded):
        hit.also = sorted(lines[cid] for cid in group if cid in lines)
