"""Bilingual set: the sections of the Debian Reference (Osamu Aoki; GPL-2+, see the package's
copyright file), English original and its Simplified Chinese translation, as Debian ships them
(debian-reference-en and debian-reference-zh-cn, version 2.100 in bookworm). Nothing of it is kept in
this repository: the set is built at bench time from the packages' HTML, offline once they are there:

    apt-get download debian-reference-en debian-reference-zh-cn      # no root needed
    for f in debian-reference-*.deb; do dpkg-deb -x "$f" /work/bench-debref; done
    # (or apt-get install both: then they are read from /usr/share/debian-reference)

Both languages are generated from one DocBook source by po4a, so a section has the same anchor id in
both trees: that id pairs an English section with its Chinese one (435 pairs in 2.100).

How the notes and questions are made (one workspace, both directions):
  * each section is one note, ``# <its title without the number>`` then its text (paragraphs, list
    items, table rows as ``a | b | c``), cut at BODY_CHARS; paths are neutral (``digest/debref/s0042.md``, both
    languages in one folder), so neither the anchor's words nor the language reach the index;
  * a section is kept when its title is unique in both languages (lower-cased), the Chinese title has
    Chinese characters and differs from the English one, and the Chinese text is translated (a fifth
    of its letters are Chinese);
  * the kept sections are split in two by a hash of their id: half A is in the workspace in Chinese
    only, half B in English only (so every question has its own language's distractors too);
  * en->zh questions: the English title of each section of A (its English text is not in the
    workspace); zh->en: the Chinese title of each section of B. One relevant note per question.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
from html.parser import HTMLParser
from pathlib import Path

BODY_CHARS = 1800  # about one chunk and a bit: long tables would otherwise dominate the embedding time
ROOTS = ("/work/bench-debref/usr/share/debian-reference", "/usr/share/debian-reference")
BLOCKS = {"p", "li", "dt", "dd", "pre", "tr", "h1", "caption"}
CELLS = {"td", "th"}


class _Sections(HTMLParser):
    """[(anchor id, title, [text blocks])] of one chapter page: a section runs from its h2..h5 title
    to the next title of any level (a subsection is its own section)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[tuple[str, str, list[str]]] = []
        self.heading: str | None = None
        self.anchor = ""
        self.text: list[str] = []
        self.row: list[str] | None = None
        self.in_pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if re.fullmatch(r"h[2-5]", tag) and a.get("class") == "title":
            self._flush()
            self.heading, self.anchor = tag, ""
        elif self.heading and tag == "a" and a.get("id"):
            self.anchor = a["id"] or ""
        elif tag == "tr":
            self._flush()
            self.row = []
        elif tag in CELLS and self.row is not None:
            self._flush_cell()
        elif tag in BLOCKS:
            self._flush()
        self.in_pre += tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        if tag == self.heading:
            title = _clean("".join(self.text))
            self.sections.append((self.anchor, re.sub(r"^[A-Z0-9]+(\.\d+)*\.\s*", "", title), []))
            self.text, self.heading = [], None
        elif tag in CELLS and self.row is not None:
            self._flush_cell()
        elif tag == "tr" and self.row is not None:
            cells, self.row = [c for c in self.row if c], None
            if cells and self.sections:
                self.sections[-1][2].append(" | ".join(cells))
        elif tag in BLOCKS:
            self._flush()
        self.in_pre -= tag == "pre"

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def _flush_cell(self) -> None:
        if self.row is not None:
            self.row.append(_clean("".join(self.text)))
        self.text = []

    def _flush(self) -> None:
        if self.heading:
            return
        if self.row is not None:  # text between cells belongs to the row
            return
        block = "".join(self.text) if self.in_pre else _clean("".join(self.text))
        if block.strip() and self.sections:
            self.sections[-1][2].append(block.strip("\n"))
        self.text = []


def _clean(text: str) -> str:
    """One line: a wrapped Chinese line joins without the space the wrap left, other text with one."""
    text = re.sub(r"(?<=[\u3000-\u9fff\uff00-\uffef])\s*\n\s*(?=[\u3000-\u9fff\uff00-\uffef])", "", text)
    return re.sub(r"\s+", " ", text).strip()


def _chinese_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum("\u4e00" <= c <= "\u9fff" for c in letters) / max(1, len(letters))


def find_root() -> Path:
    for root in (os.environ.get("REME_DEBREF", ""), *ROOTS):
        if root and list(Path(root).glob("ch*.zh-cn.html")) and list(Path(root).glob("ch*.en.html")):
            return Path(root)
    raise FileNotFoundError(
        "no Debian Reference HTML (en and zh-cn); get it with: apt-get download debian-reference-en "
        "debian-reference-zh-cn && for f in debian-reference-*.deb; do dpkg-deb -x $f /work/bench-debref; done "
        "(or set REME_DEBREF to a folder holding ch01.en.html and ch01.zh-cn.html)"
    )


def version(root: Path) -> str:
    log = root.parent / "doc" / "debian-reference-en" / "changelog.gz"
    if not log.exists():
        return "unknown"
    first = gzip.decompress(log.read_bytes()).decode("utf-8", "replace").splitlines()[0]
    return re.search(r"\(([^)]+)\)", first).group(1) if "(" in first else "unknown"  # type: ignore[union-attr]


def sections(root: Path, lang: str) -> dict[str, tuple[str, str]]:
    """{anchor: (title, text)} over every chapter and appendix of one language."""
    out: dict[str, tuple[str, str]] = {}
    for page in sorted(root.glob(f"*.{lang}.html")):
        if page.name.startswith(("index.", "pr01.")):
            continue
        parser = _Sections()
        parser.feed(page.read_text(encoding="utf-8"))
        parser.close()
        for anchor, title, blocks in parser.sections:
            if anchor:
                out[anchor] = (title, "\n\n".join(blocks))
    return out


def pairs(root: Path) -> list[tuple[str, tuple[str, str], tuple[str, str]]]:
    """[(anchor, (en title, en text), (zh title, zh text))] of the sections kept (see the module doc)."""
    en, zh = sections(root, "en"), sections(root, "zh-cn")
    count = lambda titles: {t: titles.count(t) for t in titles}  # noqa: E731
    en_titles = count([t.lower() for t, _ in en.values()])
    zh_titles = count([t.lower() for t, _ in zh.values()])
    kept = []
    for anchor in sorted(en.keys() & zh.keys()):
        (et, etext), (zt, ztext) = en[anchor], zh[anchor]
        if en_titles[et.lower()] > 1 or zh_titles[zt.lower()] > 1 or et.lower() == zt.lower():
            continue
        if _chinese_share(zt) == 0 or _chinese_share(ztext) < 0.2 or not etext.strip():
            continue
        kept.append((anchor, (et, etext), (zt, ztext)))
    return kept


def half(anchor: str) -> str:
    return "A" if hashlib.sha256(("bilingual:" + anchor).encode()).digest()[0] % 2 == 0 else "B"


def note(title: str, text: str) -> str:
    return f"# {title}\n\n{text[:BODY_CHARS].rstrip()}\n"


def generate(direction: str) -> tuple[dict[str, str], list[tuple[str, set[str]]]]:
    """direction "en-zh" or "zh-en": the same workspace, the questions of that direction."""
    if direction not in ("en-zh", "zh-en"):
        raise ValueError(f"direction must be en-zh or zh-en, not {direction!r}")
    files: dict[str, str] = {}
    queries: list[tuple[str, set[str]]] = []
    for i, (anchor, (et, etext), (zt, ztext)) in enumerate(pairs(find_root())):
        if half(anchor) == "A":  # in Chinese; asked in English
            path = f"digest/debref/s{i:04d}.md"
            files[path] = note(zt, ztext)
            if direction == "en-zh":
                queries.append((et, {path}))
        else:
            path = f"digest/debref/s{i:04d}.md"
            files[path] = note(et, etext)
            if direction == "zh-en":
                queries.append((zt, {path}))
    return files, queries
