"""The hybrid evidence for per-prompt recall (memory/prompt_recall.py), as a running MCP server or the
``reme-cc recall`` command computes it: the candidates are the notes the search tool ranks first for
the prompt (both halves fused, one hit per note, the session's project first; the trusted team memory
too), and each gets the absolute evidence the bar reads -- the share of the prompt's terms (cut by the
index's own tokenizer) it holds, and the cosine of its best chunk, so a Chinese prompt finds an English
note when vectors exist."""

from __future__ import annotations

import statistics
from typing import Any

from ..base.errors import ReMeError
from ..memory import prompt_recall
from ..memory.prompt_recall import PERSONAL, TEAM, Candidate
from . import Context

SEARCHED = 5  # notes the search returns (day index pages among them are dropped)
VECTOR_K = 100  # chunks whose cosine is known: the candidates' best chunks are almost always among them


def candidates(ctx: Context, prompt: str, cwd: str) -> tuple[float, list[Candidate], list[str]]:
    """(the prompt's information, candidate notes best first with keyword and vector evidence, notes on how)."""
    from ..index import keyword
    from .recall_scope import scoped

    text = prompt[: prompt_recall.MAX_PROMPT_CHARS]
    words = prompt_recall.content_terms(keyword.query_terms(text))
    notes: list[str] = []
    contexts: dict[str, Context] = {}

    def ask(c: Context, tier_of: Any) -> list[Any]:
        contexts[PERSONAL if c is ctx else TEAM] = c
        return c.index.search(text, SEARCHED, tier_of=tier_of).results

    hits, _here, _warnings = scoped(ctx, None, SEARCHED, ask, cwd)
    if prompt_recall.trusted_team(ctx.workspace, cwd) is None:  # a repository's notes only when the user trusts it
        hits = [s for s in hits if s.workspace != TEAM]
        contexts.pop(TEAM, None)
    information, found = 0.0, []
    for workspace, c in contexts.items():
        paths = [s.hit.path for s in hits if s.workspace == workspace]
        vectors: dict[int, float] = {}
        try:
            rec = c.index.recall(text, VECTOR_K, modes=("vector",))
            vectors = dict(rec.vector)
            if rec.coverage is None or not rec.vector:
                notes.append(f"{workspace}: no vectors yet, keyword evidence only")
            elif rec.coverage < 1.0:
                notes.append(f"{workspace}: vectors for {int(rec.coverage * 100)} % of chunks")
        except ReMeError as exc:
            notes.append(f"{workspace}: vector half skipped: {exc}")
        info, part = c.index.read(lambda conn: prompt_recall.evidence(conn, words, vectors, workspace, paths))
        if vectors:  # cosines crowd together (e5: 0.80-0.90 for most pairs); what stands out is the signal
            middle = statistics.median(vectors.values())
            for cand in part:
                cand.gap = cand.vector - middle if cand.vector else 0.0
        if workspace == PERSONAL:
            information = info
        found += part
    rank = {(s.workspace, s.hit.path): i for i, s in enumerate(hits)}
    found.sort(key=lambda c: rank.get((c.workspace, c.path), len(rank)))
    return information, found, notes


def answer(ctx: Context, request: dict[str, Any]) -> dict[str, Any]:
    """The socket's answer to one request {"prompt", "cwd"} (surfaces/recall.py)."""
    from .recall_scope import current_project

    cwd = str(request.get("cwd") or "")
    information, found, notes = candidates(ctx, str(request.get("prompt") or ""), cwd)
    return {
        "project": current_project(ctx, cwd).name or None,
        "information": information,
        "candidates": [prompt_recall.candidate_json(c) for c in found],
        "notes": notes,
    }
