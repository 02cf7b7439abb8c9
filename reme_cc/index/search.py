"""Hybrid search: BM25 (jieba/FTS5) and vector recall run concurrently, fused by RRF
``Σ w_i / (60 + rank_i)`` (vector 0.7, keyword 0.3 when both answered, else the one ranking with
weight 1), filtered by min_score, cut to limit, then expanded one hop along wikilinks."""

from __future__ import annotations

import datetime as _dt
import math
import threading
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError
from . import keyword, tiers
from .graph import neighbours

if TYPE_CHECKING:  # pragma: no cover
    from . import Index, SearchResponse
    from .tiers import TierOf

RRF_K = 60
VECTOR_WEIGHT = 0.7
KEYWORD_WEIGHT = 0.3
MAX_LIMIT = 100
MAX_CANDIDATES = 200


def rrf(vector: list[int], kw: list[int], k: int = RRF_K) -> dict[int, tuple[float, float, float]]:
    """{id: (score, vector part, keyword part)} from two rankings (best first, 1-based ranks)."""
    wv, wk = (VECTOR_WEIGHT, KEYWORD_WEIGHT) if vector and kw else (1.0, 1.0)
    out: dict[int, list[float]] = {}
    for rank, cid in enumerate(vector, 1):
        out.setdefault(cid, [0.0, 0.0])[0] += wv / (k + rank)
    for rank, cid in enumerate(kw, 1):
        out.setdefault(cid, [0.0, 0.0])[1] += wk / (k + rank)
    return {cid: (v + w, v, w) for cid, (v, w) in out.items()}


def normalised_fusion(vector: list[tuple[int, float]], kw: list[tuple[int, float]]) -> dict[int, tuple[float, float, float]]:
    """Alternative for the benchmark: min-max normalise each list's raw scores to [0, 1], then
    weight 0.7/0.3 (or 1 for a single list)."""
    wv, wk = (VECTOR_WEIGHT, KEYWORD_WEIGHT) if vector and kw else (1.0, 1.0)

    def norm(pairs: list[tuple[int, float]]) -> dict[int, float]:
        if not pairs:
            return {}
        scores = [s for _, s in pairs]
        lo, hi = min(scores), max(scores)
        return {cid: (1.0 if hi == lo else (s - lo) / (hi - lo)) for cid, s in pairs}

    nv, nk = norm(vector), norm(kw)
    return {cid: (wv * nv.get(cid, 0.0) + wk * nk.get(cid, 0.0), wv * nv.get(cid, 0.0), wk * nk.get(cid, 0.0))
            for cid in set(nv) | set(nk)}


def parse_date(value: str | None, what: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return _dt.date.fromisoformat(str(value).strip()).isoformat()
    except ValueError:
        raise InvalidInputError(f"{what} {value!r} is not a date; use YYYY-MM-DD, e.g. 2026-06-20") from None


def validate(query: Any, limit: Any, min_score: Any, start_date: Any, end_date: Any) -> tuple[str, str | None, str | None]:
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


def run_search(index: "Index", query: str, limit: int = 5, min_score: float = 0.0,
               start_date: str | None = None, end_date: str | None = None, *, fusion: str = "rrf",
               expand: bool = True, modes: tuple[str, ...] = ("vector", "keyword"),
               tier_of: "TierOf | None" = None) -> "SearchResponse":
    """``tier_of`` (e.g. the project preference) reorders the fused candidates before the cut; see tiers.py."""
    from . import Hit, SearchResponse

    query, start, end = validate(query, limit, min_score, start_date, end_date)
    warnings: list[str] = []
    if len(query) > keyword.MAX_QUERY_CHARS:
        warnings.append(f"query cut to its first {keyword.MAX_QUERY_CHARS} characters")
        query = query[: keyword.MAX_QUERY_CHARS]
    index.maybe_sync()
    k = min(MAX_CANDIDATES, limit * (10 if tier_of else 5))  # a preference needs candidates beyond the top

    # Vector half: embed the query in a thread while BM25 runs in this one.
    qvec: dict[str, Any] = {}
    worker = None
    vectors = index._vectors if "vector" in modes else None
    if vectors is not None:
        index._refresh_vectors()
        if vectors.count:
            def embed() -> None:
                try:
                    qvec["v"] = index._get_embedder("query").query(query)
                except Exception as exc:  # noqa: BLE001 - vectors are optional: fall back to BM25
                    qvec["error"] = str(exc)

            worker = threading.Thread(target=embed, daemon=True)
            worker.start()

    def keyword_and_filter(conn: Any) -> tuple[list[tuple[int, float]], list[int] | None]:
        kw = index._keyword_search(conn, query, k, start, end) if "keyword" in modes else []
        allowed = None
        if worker is not None and (start or end):
            allowed = [r[0] for r in conn.execute(
                "SELECT c.id FROM chunks c JOIN files f ON f.path = c.path WHERE f.date BETWEEN ? AND ?",
                (start or "0000-00-00", end or "9999-99-99"))]
        return kw, allowed

    kw_hits, allowed = index._run(keyword_and_filter)
    vec_hits: list[tuple[int, float]] = []
    if worker is not None:
        worker.join()
        if "error" in qvec:
            warnings.append(f"vector search unavailable ({qvec['error']}); keyword results only")
        elif "v" in qvec:
            vec_hits = vectors.search(qvec["v"], k, allowed)  # type: ignore[union-attr]

    if fusion == "normalised":
        fused = normalised_fusion(vec_hits, kw_hits)
    else:
        fused = rrf([c for c, _ in vec_hits], [c for c, _ in kw_hits])
    ranked = sorted(fused.items(), key=lambda kv: (-kv[1][0], kv[0]))
    if tier_of is not None:
        ranked = index._run(lambda conn: tiers.prefer_chunks(conn, ranked, tier_of))
    ranked = [(cid, parts) for cid, parts in ranked if parts[0] >= min_score][:limit]
    both = len({c for c, _ in vec_hits} & {c for c, _ in kw_hits})

    def load(conn: Any) -> list[Hit]:
        hits = []
        for cid, (score, v, w) in ranked:
            row = conn.execute("SELECT path, start_line, end_line, text FROM chunks WHERE id=?", (cid,)).fetchone()
            if row is None:
                continue  # removed by a concurrent writer between recall and load
            hits.append(Hit(row[0], row[1], row[2], round(score, 6), round(v, 6), round(w, 6), row[3]))
        if expand and hits:  # the neighbours of every hit in one batch of queries
            around = neighbours(conn, [h.path for h in hits])
            for hit in hits:
                hit.outlinks, hit.outlinks_total, hit.inlinks, hit.inlinks_total = around[hit.path]
        projects = tiers.file_projects(conn, {h.path for h in hits})
        for hit in hits:
            hit.project = projects.get(hit.path)
        return hits

    results = index._run(load)
    counts = {"vector": len(vec_hits), "keyword": len(kw_hits), "returned": len(results), "hybrid": both}
    return SearchResponse(results, counts, warnings)


def render(resp: "SearchResponse") -> str:
    """Human output in the seeds' shape."""
    if not resp.results:
        lines = ["no results"]
        lines += [f"note: {w}" for w in resp.warnings]
        return "\n".join(lines)
    blocks = []
    for h in resp.results:
        lines = [f"========== {h.path}:{h.start_line}-{h.end_line} "
                 f"[score={h.score:.4f} vector={h.vector:.4f} keyword={h.keyword:.4f}] =========="]
        lines += _where(h)
        lines.append(h.text.rstrip("\n"))
        if h.outlinks:
            lines.append("")
            lines.append(f"  outlinks ({len(h.outlinks)}):")
            lines += [f"    → {_neighbour(n)}" for n in h.outlinks]
            if h.outlinks_total > len(h.outlinks):
                lines.append(f"    … {h.outlinks_total - len(h.outlinks)} more")
        if h.inlinks:
            if not h.outlinks:
                lines.append("")
            lines.append(f"  inlinks ({len(h.inlinks)}):")
            lines += [f"    ← {_neighbour(n)}" for n in h.inlinks]
            if h.inlinks_total > len(h.inlinks):
                lines.append(f"    … {h.inlinks_total - len(h.inlinks)} more")
        blocks.append("\n".join(lines))
    tail = [f"note: {w}" for w in resp.warnings]
    return "\n\n".join(blocks + (["\n".join(tail)] if tail else []))


def _where(h: Any) -> list[str]:
    """The hit's project and, for the repository's shared memory, where its file is."""
    names = getattr(h, "project", None)
    if not isinstance(names, list):  # an index Hit: the raw frontmatter value
        names = [names] if isinstance(names, str) and names else []
    line = f"project: {', '.join(' '.join(str(n).split()) for n in names) or 'general'}"
    if getattr(h, "workspace", "personal") != "personal":
        line += f" · team memory: .reme/{h.path}"
    return [line]


def _one_line(s: str | None) -> str:
    return " ".join((s or "").split()).replace('"', "'")


def _neighbour(n: Any) -> str:
    via = f"via predicate={n.predicate}" if n.predicate else "via plain"
    if not n.exists:
        return f"{n.path}  (not found)  {via}"
    return f'{n.path}  name="{_one_line(n.name)}"  description="{_one_line(n.description)}"  {via}'
