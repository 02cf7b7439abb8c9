"""The hybrid evidence for per-prompt recall (memory/prompt_recall.py), as a running MCP server or the
``reme-cc recall`` command computes it: the prompt's terms cut by the index's own tokenizer (jieba), and
the vector half's cosine for each note, so a Chinese prompt finds an English note. The personal
workspace, and the repository's team memory when the user trusts it."""

from __future__ import annotations

from typing import Any

from ..base.errors import ReMeError
from ..memory import prompt_recall
from ..memory.prompt_recall import PERSONAL, TEAM, Candidate
from . import Context

VECTOR_K = 20


def candidates(ctx: Context, prompt: str, cwd: str) -> tuple[float, list[Candidate], list[str]]:
    """(the prompt's information, candidate notes with keyword and vector evidence, notes on how)."""
    from ..index import keyword
    from .recall_scope import team_context

    text = prompt[: prompt_recall.MAX_PROMPT_CHARS]
    terms = prompt_recall.content_terms(keyword.query_terms(text))
    notes: list[str] = []

    def one(c: Context, workspace: str) -> tuple[float, list[Candidate]]:
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
        return c.index.read(lambda conn: prompt_recall.evidence(conn, terms, vectors, workspace))

    information, found = one(ctx, PERSONAL)
    if prompt_recall.trusted_team(ctx.workspace, cwd) is not None:
        team, _warning = team_context(ctx, cwd)
        if team is not None:
            found += one(team, TEAM)[1]
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
