"""The form in which a word is stored in the keyword index, standard library only.

English words are stored by their Snowball (Porter2) stem, so ``locally`` finds ``local`` and
``record`` finds ``recorded``; function words (STOPWORDS) are never stored nor searched. The stemmer
(the ``snowballstemmer`` package) is passed in by keyword.py; a process without it (a hook run with
``python3 -S``) uses ``stored_form`` with an ``exists`` look-up instead: the word's stem is one of a
few forms derived from the word itself (``candidates``: Porter2 cuts suffixes, adds an e or turns a
y into i), and the longest of them that the index holds is taken (bench/stem_fallback.py measures
how often that differs from the stem).

What is never stemmed, so identifiers are matched exactly: a word holding a digit (``sha256``,
``v2``, ``a3f9c2``), a word with any letter outside ASCII, and every CJK token (jieba's). Paths,
snake_case and dotted names are split into their words before (the same split for text and query),
so each part is matched by its stored form.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable

# Stored in the index's meta ('tokenizer'): an index made by another version re-tokenises its chunks
# when it is opened for writing (keyword.upgrade_tokens). 1: words as written; 2: English stems;
# 3: a chunk's Sources heading is not stored (keyword.chunk_tokens).
TOKENIZER_VERSION = 3

# Only CJK runs go through jieba (keyword.py); everything else is split into letter/digit runs, which
# is exactly what FTS5's unicode61 tokenizer would keep.
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
WORD = re.compile(r"[^\W_]+")
_STEMMABLE = re.compile(r"[a-z]{3,}")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
SCRIPT_CHARS = (
    600  # a chunk's script is read from its start (for all but 1 of 2,710 bench chunks the same as the whole)
)


def dominant_script(text: str) -> str:
    """``cjk`` when the text has at least as many CJK characters as Latin-letter words, else ``latin``
    (a Chinese note quoting commands and package names is still Chinese prose)."""
    cjk = sum(len(m) for m in CJK.findall(text))
    return "cjk" if cjk and cjk >= len(_LATIN_WORD.findall(text)) else "latin"


# Function words carry no topic: matching them lets BM25 push noise above vector hits in the fusion
# ("which database do we use" must not find every note saying "we use").
STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being it its this that "
    "these those i me my myself we our ours ourselves you your yours he him she they them their theirs his her hers "
    "what which who whom how when where why am do does did doing done have has had having not no nor so than then "
    "there here can could will would should may might must shall about into over under after before above below "
    "up down out off again further once very just also too any all both each few more most other some such only "
    "own same because until while against between through during "
    "的 了 是 在 和 与 及 或 也 都 就 而 把 被 让 给 对 从 向 着 过 吗 呢 吧 啊 之 其 这 那 我 你 他 她 它 们 个 有 为 以 于 并 等 中".split()
)

Stem = Callable[[str], str]


def stemmable(word: str) -> bool:
    """A lower-case English word (ASCII letters only, three or more): stored by its stem."""
    return _STEMMABLE.fullmatch(word) is not None


def store_form(word: str, stem: Stem) -> str:
    """The stored term of one lower-case word, with the real stemmer."""
    return stem(word) if stemmable(word) else word


def candidates(word: str) -> list[str]:
    """The forms a word's stem can take, longest first (the fallback without the stemmer): the word cut
    back to no shorter than its R1 region (Porter2 cuts suffixes inside it), an e where -ing/-ed was
    cut (hop|ing -> hope), an i for a cut y (happ|y -> happi), and -ies/-ied -> -i."""
    if not stemmable(word):
        return [word]
    out: list[str] = []
    for n in range(len(word), max(2, min(_r1(word), len(word))) - 1, -1):
        head, cut = word[:n], word[n:]
        if cut.startswith(("ing", "ed")):
            out.append(head + "e")
        if cut.startswith("y"):
            out.append(head + "i")
        out.append(head)
    if word.endswith(("ies", "ied")):
        out.append(word[:-2])
    if "bilit" in word:  # -bility -> -bl (possibility -> possibl)
        out.append(word[: word.rindex("bilit")] + "bl")
    return list(dict.fromkeys(out))


_R1_PREFIXES = ("gener", "commun", "arsen", "past", "univers", "later", "emerg", "organ")  # Porter2's exceptions


def _r1(word: str) -> int:
    """Where Porter2's R1 starts: after the first non-vowel that follows a vowel."""
    for prefix in _R1_PREFIXES:
        if word.startswith(prefix):
            return len(prefix)
    vowel = [ch in "aeiou" or (ch == "y" and i > 0 and word[i - 1] not in "aeiou") for i, ch in enumerate(word)]
    for i in range(1, len(word)):  # a y at the start or after a vowel is a consonant
        if vowel[i - 1] and not vowel[i]:
            return i + 1
    return len(word)


def stored_form(word: str, exists: Callable[[str], bool]) -> str:
    """The stored term of one lower-case word without the stemmer: the longest candidate the index
    holds (``exists``), else the word as written (it then matches nothing, as the stem would not)."""
    for form in candidates(word):
        if exists(form):
            return form
    return word


def english_words(query: str) -> list[str]:
    """The distinct lower-case Latin words of a query, function words dropped, in order."""
    return list(dict.fromkeys(w for w in WORD.findall(CJK.sub(" ", query.lower())) if w not in STOPWORDS))


def fts_exists(conn: sqlite3.Connection, table: str = "chunks_fts") -> Callable[[str], bool]:
    """``exists`` for ``stored_form``: does a term occur in an FTS5 table of the index (chunks_fts or
    nodes_fts; one index look-up each)."""
    if table not in ("chunks_fts", "nodes_fts"):
        raise ValueError(f"not an FTS5 table of the index: {table}")

    def exists(term: str) -> bool:
        phrase = '"' + term.replace('"', '""') + '"'
        return conn.execute(f"SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT 1", (phrase,)).fetchone() is not None

    return exists


def query_terms_stdlib(conn: sqlite3.Connection, query: str, table: str = "chunks_fts") -> list[str]:
    """A query's English/Latin words in their stored form, standard library only (hooks): the Snowball
    stem where the index shows it, else the word. CJK runs are left out (they need jieba)."""
    exists = fts_exists(conn, table)
    return list(dict.fromkeys(stored_form(w, exists) for w in english_words(query)))
