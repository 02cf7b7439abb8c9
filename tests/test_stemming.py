"""English words that match (issue 25, 3): Snowball stems and stop words in the stored tokens and the
queries, identifiers untouched, two query words found written as one, the standard-library fallback,
and an index of the older tokenizer re-tokenised when it is opened."""

from __future__ import annotations

import sqlite3

from reme_cc.base.config import Config
from reme_cc.index import Index, keyword, terms
from reme_cc.index.catalog import DB_NAME, get_meta, set_meta
from support.files_helpers import note


def paths(idx: Index, query: str, limit: int = 5) -> list[str]:
    return [h.path for h in idx.search(query, limit=limit).results]


def test_reported_database_question(ws, idx):
    """'which database do we use locally': 'we', 'use', 'do', 'which' are no evidence, 'locally' is 'local'."""
    ws.write_text("daily/2026-06-01/db.md", "# Dev setup\nLocal database is SQLite in data/dev.db\n")
    ws.write_text("daily/2026-06-01/pnpm.md", "# Packages\nWe use pnpm, never npm\n")
    # "database" in many notes, "use" in a few: before stemming "use" outweighed it ("locally" matched
    # nothing) and the pnpm note came first
    for i in range(6):
        ws.write_text(f"daily/2026-06-02/db{i}.md", f"# Staging {i}\nThe staging database {i} was migrated.\n")
    for tool in ("ruff", "docker"):
        ws.write_text(f"daily/2026-06-03/{tool}.md", f"# Tooling\nWe use {tool} for this repository.\n")
    idx.sync()
    found = paths(idx, "which database do we use locally", limit=10)
    assert found[0] == "daily/2026-06-01/db.md"
    assert found.index("daily/2026-06-01/db.md") < found.index("daily/2026-06-01/pnpm.md")


def test_inflections_match_both_ways(ws, idx):
    ws.write_text("daily/2026-06-01/a.md", "# Meeting\nWe recorded the decisions of the architects.\n")
    ws.write_text("daily/2026-06-01/b.md", "# Cooking\nBoiled potatoes with butter.\n")
    idx.sync()
    assert paths(idx, "record")[0] == "daily/2026-06-01/a.md"
    assert paths(idx, "recording decision architect")[0] == "daily/2026-06-01/a.md"
    assert paths(idx, "potato boiling")[0] == "daily/2026-06-01/b.md"


def test_a_sources_heading_is_no_word_of_the_note(ws, idx):
    """With stems, "source" matched every digest node through its "## Sources" heading (found by
    test_projects' "source licence" question, which then ranked general nodes first); the links under
    the heading stay searchable."""
    ws.write_text(
        "digest/wiki/editor.md",
        "---\nname: Editor\ndescription: neovim\n---\nThe user's editor is neovim.\n\n## Sources\n- [[daily/2026-06-01/vim.md]]\n",
    )
    ws.write_text("daily/2026-06-01/licence.md", "# Licence\nThe source code is MIT licensed.\n")
    idx.sync()
    assert paths(idx, "source") == ["daily/2026-06-01/licence.md"]
    assert paths(idx, "2026-06-01 vim")[0] == "digest/wiki/editor.md"


def test_two_words_find_them_written_as_one(ws, idx):
    """'ice cream' finds 'icecream' (the query's adjacent words joined); 'icecream' finding 'ice cream'
    would need a word list to split it, and is left to the vector half."""
    ws.write_text("daily/2026-06-01/dessert.md", "# Dessert\nMy favourite icecream is pistachio.\n")
    ws.write_text("daily/2026-06-01/weather.md", "# Weather\nIce on the road this morning.\n")
    idx.sync()
    assert paths(idx, "ice cream")[0] == "daily/2026-06-01/dessert.md"
    assert keyword.query_terms("ice cream") == ["ice", "cream", "icecream"]
    assert keyword.query_terms("ice, cream") == ["ice", "cream"]  # not adjacent words of one phrase


def test_identifiers_are_never_stemmed_or_lost(ws, idx):
    toks = keyword.tokens("sha256 a3f9c2e v2.10.1 user_sessions data/dev.db src/handlers.py SQLiteCaches café")
    # digits: as written; snake_case and paths split into words first, each word stemmed the same way
    # in the text and in the query; non-ASCII words as written
    assert toks == ["sha256", "a3f9c2e", "v2", "10", "1", "user", "session", "data", "dev", "db", "src", "handler"] + [
        "py",
        "sqlitecach",
        "café",
    ]
    ids = ["deadbeef42", "build_artifacts_v3", "ProcessingQueues", "k8s-ingress.yaml", "a1b2c3d4e5"]
    for i, ident in enumerate(ids):
        ws.write_text(f"daily/2026-06-03/id{i}.md", f"# Note {i}\nThe fix touched {ident} yesterday.\n")
    for i in range(20):
        ws.write_text(f"daily/2026-06-04/filler{i}.md", f"# Filler {i}\nThe fix touched something yesterday.\n")
    idx.sync()
    for i, ident in enumerate(ids):
        assert paths(idx, ident, limit=3)[0] == f"daily/2026-06-03/id{i}.md", ident


def test_chinese_stays_jieba_and_mixed_text_keeps_both(ws, idx):
    assert keyword.tokens("宁德时代的电池 recorded") == ["宁德", "时代", "电池", "record"]
    ws.write_text("digest/wiki/catl.md", note("宁德时代", "电池", "# 宁德时代\n动力电池 suppliers recorded in 2023.\n"))
    ws.write_text("digest/wiki/fox.md", note("Fox", "en", "# Fox\nThe quick brown fox.\n"))
    idx.sync()
    assert paths(idx, "宁德 supplier")[0] == "digest/wiki/catl.md"


def test_stdlib_fallback_finds_the_stored_form(ws, idx):
    """Without the stemmer (a hook under python3 -S) a word's stored form is the longest of its
    candidate forms that the index holds."""
    ws.write_text(
        "daily/2026-06-01/a.md",
        "# Notes\nLocally we studied the happiness of organizations; hoping for recorded databases and "
        "possibility of running ponies.\n",
    )
    idx.sync()
    conn = sqlite3.connect(ws.metadata / DB_NAME)
    try:
        words = [
            "locally",
            "studies",
            "happy",
            "organization",
            "hoped",
            "records",
            "database",
            "possible",
            "runs",
            "pony",
        ]
        exists = terms.fts_exists(conn)
        for w in words:
            assert terms.stored_form(w, exists) == keyword.stem(w), w
        assert terms.query_terms_stdlib(conn, "Which databases do we use, locally?") == ["databas", "use", "local"]
    finally:
        conn.close()


def test_terms_module_is_standard_library_only():
    from test_stdlib_only import FOREIGN, REPO, run_blocked  # the suite's import blocker

    code = (
        "sys.path.insert(0, sys.argv[1])\nimport json\nfrom reme_cc.index import readonly, terms\n"
        f"print(json.dumps([terms.candidates('happy')[:2], {FOREIGN}]))\n"
    )
    proc = run_blocked(code, str(REPO))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == '[["happy", "happi"], []]'


def test_index_of_the_older_tokenizer_is_retokenised_on_open(ws):
    ws.write_text("daily/2026-06-01/a.md", "# Meeting\nWe recorded the decisions.\n")
    ws.write_text("digest/wiki/records.md", note("Recording rules", "how decisions are recorded", "# Rules\n"))
    idx = Index(ws, Config.load(ws.root))
    idx.sync()
    idx.close()
    # make it look like an index written before stemming: words as written, no tokenizer version
    conn = sqlite3.connect(ws.metadata / DB_NAME)
    with conn:
        conn.execute("UPDATE chunks_fts SET tokens = 'meeting we recorded the decisions'")
        conn.execute("UPDATE nodes_fts SET tokens = 'recording rules'")
        conn.execute("DELETE FROM meta WHERE key = 'tokenizer'")
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
    conn.close()
    idx = Index(ws, Config.load(ws.root))
    try:
        conn = sqlite3.connect(ws.metadata / DB_NAME)
        assert get_meta(conn, "tokenizer") == str(terms.TOKENIZER_VERSION)
        assert [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")] == ids  # same chunks, same ids
        stored = {r[0] for r in conn.execute("SELECT tokens FROM chunks_fts")}
        assert "meet record decis" in stored
        conn.close()
        assert paths(idx, "record decision")[0] == "daily/2026-06-01/a.md"
        assert [h.path for h in idx.node_search("recorded rule", 3)] == ["digest/wiki/records.md"]
        assert "re-tokenised" in (ws.metadata / "logs" / "index.log").read_text()
    finally:
        idx.close()
    # a current index is left alone on open
    conn = sqlite3.connect(ws.metadata / DB_NAME)
    with conn:
        set_meta(conn, "tokenizer", str(terms.TOKENIZER_VERSION))
        gen = get_meta(conn, "generation")
    conn.close()
    Index(ws, Config.load(ws.root)).close()
    conn = sqlite3.connect(ws.metadata / DB_NAME)
    assert get_meta(conn, "generation") == gen
    conn.close()


def test_a_big_index_is_retokenised_in_a_process_pool_with_the_same_tokens():
    from reme_cc.index import sync

    texts = [f"Locally recorded 宁德时代的电池 note {i}: running databases, sha256 v2" for i in range(50)]
    with sync._tokenizer(10**6) as tokenize_all:  # as many chunks as a big workspace's: the pool
        assert tokenize_all(texts) == [keyword.tokenize(t) for t in texts]
