"""Files -> search chunks with exact line ranges (document 000, "Memory Chunking").

Markdown (`.md`, `.markdown`): frontmatter is split off (its lines still count), the body is parsed
with mistletoe into blocks, blocks are grouped into a heading tree, and then:

1. a whole section (heading + everything under it) is one chunk when it fits the budget;
2. otherwise its own intro blocks are packed greedily into chunks and each subsection recurses;
   small sibling sections are NOT merged (a chunk never mixes two headings' content);
3. an oversized table is split by rows with the header + delimiter rows repeated;
4. an oversized fenced code block is split by lines with the opening and closing fence repeated;
5. an oversized list is packed by top-level item;
6. anything else (or an oversized single item/row/line) is split line-greedily, then at sentence ends
   (。！？；.!?), then at spaces/characters; each such piece is marked `[Part X/N]`.
   A cut never falls inside a `[[wikilink]]`.

Chunk text = the note's context line + ancestor headings + (own heading) + fragment + a trailing
skeleton of the headings that follow (children of the section for intro pieces, then following
siblings of the section and of each ancestor; at most _TRAILING of them), as in document 003's
example. The context line (``text.note_context``: the frontmatter's name and description, which no body
line holds) is what the whole note is about: every chunk is found by it, by both halves. The budget
(max_chars) applies to the context line + ancestor headings + fragment; the trailing skeleton is extra.

start_line/end_line are 1-based inclusive lines of the ORIGINAL file covering the fragment (the
first chunk of a section also covers its heading line). Lines are split on "\\n" after CRLF is
normalized to "\\n" (a lone CR is not a line break, as in `read` and the link parser).

Above _AST_LIMIT characters the mistletoe parse is skipped for a line scanner (ATX headings and
code fences only; tables/lists become plain text blocks), which keeps 50 MB files fast.
Other text files: line-packed chunks with a small overlap. `.jsonl`: whole records grouped.
Documents arrive as their text view (notes/documents.py): a `.docx` view is Markdown; a PDF view is
chunked page by page, each chunk headed by its `## Page N` line.
Binary data (NUL bytes) yields no chunks.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import re
import threading
from array import array
from dataclasses import dataclass, field
from collections.abc import Iterable

from ..base.errors import InvalidInputError
from .formats import format_of
from .frontmatter import split_frontmatter
from .text import closes_fence, fence_opening, split_lines, text_hash
from .wikilinks import link_spans

__all__ = ["Chunk", "chunk_file", "decode_text", "normalize_newlines"]

log = logging.getLogger("reme_cc.index")
_AST_LIMIT = 1_000_000  # characters of Markdown body parsed with mistletoe
_TRAILING = 6  # max headings in the trailing skeleton
_MIN_MAX_CHARS = 80
_MISTLETOE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Chunk:
    text: str
    start_line: int
    end_line: int
    headings: tuple[str, ...]
    hash: str


def _make(text: str, start: int, end: int, headings: Iterable[str] = ()) -> Chunk:
    return Chunk(text, start, end, tuple(headings), text_hash(text))


# ---------------------------------------------------------------------------------------------
# decoding


def normalize_newlines(text: str) -> str:
    """CRLF -> LF. A lone CR is left alone: `read` and the link parser split on LF only, and line
    numbers must agree everywhere."""
    return text.replace("\r\n", "\n")


def decode_text(data: bytes, invalid_encoding_policy: str = "replace") -> str:
    if invalid_encoding_policy not in ("replace", "strict"):
        raise InvalidInputError(
            f"invalid_encoding_policy must be 'replace' or 'strict', not {invalid_encoding_policy!r}"
        )
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8", errors=invalid_encoding_policy)
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"file is not valid UTF-8 (byte {exc.start}); fix the encoding or use invalid_encoding_policy='replace'"
        ) from None
    return normalize_newlines(text)


def chunk_file(
    path: str, data: bytes, *, max_chars: int = 1500, invalid_encoding_policy: str = "replace", context: str = ""
) -> list[Chunk]:
    """``context``: a Markdown note's context line (note_context of its frontmatter), which the
    caller has parsed already; other formats have none."""
    if max_chars < _MIN_MAX_CHARS:
        raise InvalidInputError(f"max_chars must be at least {_MIN_MAX_CHARS}, got {max_chars}")
    if b"\x00" in data[:8192]:
        return []  # binary: nothing to index as text
    text = decode_text(data, invalid_encoding_policy)
    fmt = format_of(path)  # a document arrives as its text view (notes/documents.py)
    how = fmt.chunker if fmt else "plain"
    if how == "markdown":
        return _MarkdownChunker(text, max_chars, path, context).run()
    if how == "pages":
        return _chunk_pages(text, max_chars)
    if how == "jsonl":
        return _chunk_jsonl(text, max_chars)
    return _chunk_plain(text, max_chars)


# ---------------------------------------------------------------------------------------------
# low-level splitting shared by all chunkers

_SENTENCE_END_RE = re.compile(r"[。！？；!?;…]+[”’」』）)\"']*|\.(?=\s)")


def _split_long(s: str, limit: int) -> list[str]:
    """Split one line into pieces <= limit chars: at sentence ends, then spaces, then characters.

    Never cuts inside a `[[...]]` (a link longer than the limit stays whole, oversized)."""
    if len(s) <= limit:
        return [s]
    spans = link_spans(s)  # sorted, non-overlapping
    span_starts = [a for a, _ in spans]
    sentence_cuts = [m.end() for m in _SENTENCE_END_RE.finditer(s)]  # ascending

    def inside_link(pos: int) -> tuple[int, int] | None:
        k = bisect.bisect_left(span_starts, pos) - 1  # last span starting before pos
        if k >= 0 and spans[k][1] > pos:
            return spans[k]
        return None

    pieces: list[str] = []
    pos = 0
    n = len(s)
    while n - pos > limit:
        hard = pos + limit
        floor = pos + limit // 3  # never make a piece shorter than a third of the limit
        cut = -1
        # prefer the last sentence end in the window
        k = bisect.bisect_right(sentence_cuts, hard) - 1
        while k >= 0 and sentence_cuts[k] > floor:
            if not inside_link(sentence_cuts[k]):
                cut = sentence_cuts[k]
                break
            k -= 1
        if cut == -1:
            sp = s.rfind(" ", floor, hard)
            if sp != -1 and not inside_link(sp + 1):
                cut = sp + 1
        if cut == -1:
            cut = hard
            link = inside_link(cut)
            if link:
                cut = link[0] if link[0] > pos else link[1]
        pieces.append(s[pos:cut])
        pos = cut
    if pos < n:
        pieces.append(s[pos:])
    return pieces


class _Lines:
    """Lines plus prefix sums so span lengths are O(1) on huge files."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        # cum[i] = characters before line i (each line + its "\n"); an int64 array keeps 50 MB
        # files (millions of lines) cheap
        self.cum = array("q", itertools.accumulate((len(line) + 1 for line in lines), initial=0))

    def span_len(self, s: int, e: int) -> int:
        """Length of "\\n".join(lines[s:e+1])."""
        return self.cum[e + 1] - self.cum[s] - 1

    def text(self, s: int, e: int) -> str:
        return "\n".join(self.lines[s : e + 1])

    def blank(self, i: int) -> bool:
        return not self.lines[i].strip()


@dataclass(slots=True)
class _Piece:
    start: int  # 0-based line index, inclusive
    end: int
    body: str
    marker: str | None = None


def _line_greedy(L: _Lines, s: int, e: int, limit: int) -> list[_Piece]:
    """Pack lines s..e into pieces <= limit; lines longer than limit are split within the line.
    Blank-only pieces are dropped."""
    out: list[_Piece] = []
    cur_s = -1
    for i in range(s, e + 1):
        n = len(L.lines[i])
        if cur_s != -1 and L.span_len(cur_s, i) <= limit:
            continue
        if cur_s != -1:
            out.append(_Piece(cur_s, i - 1, L.text(cur_s, i - 1)))
            cur_s = -1
        if n <= limit:
            cur_s = i
        else:
            out.extend(_Piece(i, i, part) for part in _split_long(L.lines[i], limit))
    if cur_s != -1:
        out.append(_Piece(cur_s, e, L.text(cur_s, e)))
    return [p for p in out if p.body.strip()]


def _mark(pieces: list[_Piece]) -> list[_Piece]:
    if len(pieces) > 1:
        for k, p in enumerate(pieces, 1):
            p.marker = f"[Part {k}/{len(pieces)}]"
    return pieces


# ---------------------------------------------------------------------------------------------
# plain text and JSONL


def _chunk_plain(text: str, max_chars: int) -> list[Chunk]:
    """Line-packed chunks; the next chunk repeats the previous chunk's last lines (<= overlap)."""
    L = _Lines(split_lines(text))
    overlap = min(200, max_chars // 5)
    chunks: list[Chunk] = []
    i, n = 0, len(L.lines)
    while i < n:
        if L.blank(i):
            i += 1
            continue
        if len(L.lines[i]) > max_chars:
            parts = _split_long(L.lines[i], max_chars)
            chunks.extend(_make(p, i + 1, i + 1) for p in parts)
            i += 1
            continue
        j = i
        while j + 1 < n and len(L.lines[j + 1]) <= max_chars and L.span_len(i, j + 1) <= max_chars:
            j += 1
        while j > i and L.blank(j):
            j -= 1
        chunks.append(_make(L.text(i, j), i + 1, j + 1))
        # overlap: the next chunk repeats the last lines of this one (<= overlap chars), only when
        # they fit together with the next line; otherwise it would be a redundant sub-chunk
        nxt = j + 1
        while nxt < n and L.blank(nxt):
            nxt += 1
        if nxt >= n:
            break
        k = j + 1
        if len(L.lines[nxt]) <= max_chars:
            while k - 1 > i and L.span_len(k - 1, j) <= overlap and L.span_len(k - 1, nxt) <= max_chars:
                k -= 1
        i = k if k <= j else nxt
    return chunks


def _chunk_pages(text: str, max_chars: int) -> list[Chunk]:
    """A PDF text view: each page is chunked on its own (line-packed like plain text) and every chunk
    starts with its ``## Page N`` line, so a hit says which page it is on; a chunk never spans pages."""
    from .documents import page_lines

    lines = split_lines(text)
    starts = sorted(page_lines(text).items())
    chunks: list[Chunk] = []
    for k, (_page, header) in enumerate(starts):
        end = starts[k + 1][1] - 1 if k + 1 < len(starts) else len(lines)  # 1-based, inclusive
        heading = lines[header - 1]
        body = "\n".join(lines[header:end])  # the lines after the header
        for i, ch in enumerate(_chunk_plain(body, max(_MIN_MAX_CHARS, max_chars - len(heading) - 1))):
            start = header if i == 0 else header + ch.start_line
            chunks.append(_make(f"{heading}\n{ch.text}", start, header + ch.end_line, (heading,)))
    return chunks


def _chunk_jsonl(text: str, max_chars: int) -> list[Chunk]:
    """One record per line, consecutive records grouped up to max_chars; a huge record is split
    in-line (same line number, `[Part X/N]`)."""
    lines = split_lines(text)
    chunks: list[Chunk] = []
    group: list[int] = []
    size = 0  # chars of "\n".join(records in group)

    def flush() -> None:
        if group:
            chunks.append(_make("\n".join(lines[k] for k in group), group[0] + 1, group[-1] + 1))
            group.clear()

    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if len(line) > max_chars:
            flush()
            parts = _split_long(line, max_chars - 16)
            for k, p in enumerate(parts, 1):
                chunks.append(_make(f"[Part {k}/{len(parts)}]\n{p}", i + 1, i + 1))
            continue
        if group and size + 1 + len(line) > max_chars:
            flush()
        size = len(line) if not group else size + 1 + len(line)
        group.append(i)
    flush()
    return chunks


# ---------------------------------------------------------------------------------------------
# Markdown


@dataclass(slots=True)
class _Block:
    kind: str  # heading | table | code | list | text
    start: int  # 0-based line index in the whole file
    end: int
    level: int = 0  # headings
    units: list[tuple[int, int]] = field(default_factory=list)  # list items
    closed: bool = True  # code fences


@dataclass(slots=True)
class _Section:
    heading: str | None
    level: int
    start: int  # heading line (or -1 for the root)
    heading_end: int
    blocks: list[_Block] = field(default_factory=list)
    children: list[_Section] = field(default_factory=list)
    end: int = -1


_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]|$)")  # the text after it: _atx_text (a regex is quadratic there)
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


_INNER_SPACE_RE = re.compile(r"(?<=\S)[ \t]{2,}")
_MAX_INDENT = 64


def _tame(line: str) -> str:
    """A line as mistletoe sees it: runs of inner whitespace shortened to one space and the indent to
    _MAX_INDENT (neither changes which block a line starts or continues), so regexes such as the ATX
    heading's, quadratic in a run of spaces, stay linear. Chunks keep the original text."""
    body = line.lstrip(" \t")
    indent = line[: min(len(line) - len(body), _MAX_INDENT)]
    return indent + _INNER_SPACE_RE.sub(" ", body)


def _atx_text(rest: str) -> str:
    """An ATX heading's text without its optional closing run of #s."""
    rest = rest.strip(" \t")
    bare = rest.rstrip("#")
    if not bare:
        return ""
    return bare.rstrip(" \t") if bare != rest and bare[-1] in " \t" else rest


def _no_inline(_content: object) -> list[object]:
    return []


class _MarkdownChunker:
    def __init__(self, text: str, max_chars: int, path: str = "<text>", context: str = ""):
        self.path = path
        self.max_chars = max_chars
        self.context = [context] if context else []
        self.L = _Lines(split_lines(text))
        raw, _body, body_start, _ = split_frontmatter(text)
        self.body_off = body_start - 1 if raw is not None else 0
        self.chunks: list[Chunk] = []

    # -- blocks ------------------------------------------------------------------------------
    def _blocks(self) -> list[_Block]:
        n = len(self.L.lines)
        body = self.L.lines[self.body_off :]
        if self.L.cum[n] - self.L.cum[self.body_off] <= _AST_LIMIT:
            try:
                return self._ast_blocks(body)
            except Exception as exc:  # noqa: BLE001 - a mistletoe bug on odd input must not stop indexing
                log.warning(
                    "%s: the Markdown parser failed (%s: %s); chunked by the plain line scan instead",
                    self.path,
                    type(exc).__name__,
                    exc,
                )
        return self._scan_blocks()

    def _ast_blocks(self, body: list[str]) -> list[_Block]:
        from mistletoe import block_token, span_token

        lines = [_tame(line) + "\n" for line in body]
        with _MISTLETOE_LOCK:  # mistletoe keeps the document being parsed in a module global
            # Only the block structure is used: skip inline parsing, whose link and emphasis matching
            # is quadratic in mistletoe 1.6 on inputs such as "[x] " * 6000 (no upstream fix).
            tokenize_inner = span_token.tokenize_inner
            span_token.tokenize_inner = _no_inline
            try:
                doc = block_token.Document(lines)
            finally:
                span_token.tokenize_inner = tokenize_inner
        off = self.body_off
        starts: list[tuple[int, object]] = []
        for tok in doc.children or []:
            ln = getattr(tok, "line_number", None)
            if ln is not None:
                starts.append((ln - 1 + off, tok))
        blocks: list[_Block] = []
        last_content = self._last_nonblank()
        for k, (s, tok) in enumerate(starts):
            e = starts[k + 1][0] - 1 if k + 1 < len(starts) else last_content
            while e > s and self.L.blank(e):
                e -= 1
            name = type(tok).__name__
            if name in ("Heading", "SetextHeading"):
                blocks.append(_Block("heading", s, e, level=getattr(tok, "level", 1)))
            elif name == "Table" and e - s >= 1:
                blocks.append(_Block("table", s, e))
            elif name == "CodeFence":
                closed = e > s and self._closes_fence(s, e)
                blocks.append(_Block("code", s, e, closed=closed))
            elif name == "List":
                items = [getattr(c, "line_number", None) for c in tok.children or []]
                item_starts = [ln - 1 + off for ln in items if ln is not None]
                units = []
                for j, a in enumerate(item_starts):
                    b = item_starts[j + 1] - 1 if j + 1 < len(item_starts) else e
                    while b > a and self.L.blank(b):
                        b -= 1
                    units.append((a, b))
                if not units or units[0][0] != s:
                    units = [(s, e)]
                blocks.append(_Block("list", s, e, units=units))
            else:
                blocks.append(_Block("text", s, e))
        # lines mistletoe keeps out of `children` (link reference definitions) before the first block
        stop = blocks[0].start if blocks else last_content + 1
        first = next((i for i in range(off, stop) if not self.L.blank(i)), None)
        if first is not None:
            blocks.insert(0, _Block("text", first, stop - 1))
        return blocks

    def _closes_fence(self, s: int, e: int) -> bool:
        fence = fence_opening(self.L.lines[s])
        return fence is not None and closes_fence(self.L.lines[e], fence)

    def _last_nonblank(self) -> int:
        i = len(self.L.lines) - 1
        while i >= self.body_off and self.L.blank(i):
            i -= 1
        return i

    def _scan_blocks(self) -> list[_Block]:
        """Fallback for huge files: ATX headings, code fences, and blank-separated text runs."""
        lines = self.L.lines
        blocks: list[_Block] = []
        i, n = self.body_off, len(lines)
        while i < n:
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            fence = fence_opening(line)
            if fence is not None:
                j = i + 1
                while j < n and not closes_fence(lines[j], fence):
                    j += 1
                closed = j < n
                e = j if closed else n - 1
                while e > i and lines[e].strip() == "" and not closed:
                    e -= 1
                blocks.append(_Block("code", i, e, closed=closed))
                i = e + 1
                continue
            hm = _ATX_RE.match(line)
            if hm:
                blocks.append(_Block("heading", i, i, level=len(hm.group(1))))
                i += 1
                continue
            j = i
            while (
                j + 1 < n
                and lines[j + 1].strip()
                and not _ATX_RE.match(lines[j + 1])
                and fence_opening(lines[j + 1]) is None
            ):
                j += 1
            blocks.append(_Block("text", i, j))
            i = j + 1
        return blocks

    # -- tree ----------------------------------------------------------------------------------
    def _heading_text(self, b: _Block) -> str:
        first = self.L.lines[b.start]
        m = _ATX_RE.match(first)
        if m and len(m.group(1)) == b.level:
            content = _atx_text(first[m.end() :])
            header_end = b.start
        else:  # setext: text lines up to the underline
            parts = []
            header_end = b.start
            for i in range(b.start, b.end + 1):
                if i > b.start and _SETEXT_RE.match(self.L.lines[i]):
                    header_end = i
                    break
                parts.append(self.L.lines[i].strip())
                header_end = i
            content = " ".join(parts)
        b.end = max(b.end, header_end)
        return ("#" * b.level + " " + content).rstrip()

    def _tree(self, blocks: list[_Block]) -> _Section:
        root = _Section(None, 0, -1, -1)
        stack = [root]
        for b in blocks:
            if b.kind == "heading":
                sec = _Section(self._heading_text(b), b.level, b.start, b.end)
                while stack[-1].level >= b.level:
                    stack.pop()
                stack[-1].children.append(sec)
                stack.append(sec)
            else:
                stack[-1].blocks.append(b)
        self._ends(root)
        return root

    def _ends(self, sec: _Section) -> int:
        end = sec.heading_end
        if sec.blocks:
            end = max(end, sec.blocks[-1].end)
        for c in sec.children:
            end = max(end, self._ends(c))
        sec.end = end
        return end

    # -- emission ------------------------------------------------------------------------------
    def run(self) -> list[Chunk]:
        root = self._tree(self._blocks())
        self._section(root, [], [])
        self.chunks.sort(key=lambda c: (c.start_line, c.end_line))
        return self.chunks

    def _budget(self, prefix: list[str]) -> int:
        used = sum(len(h) + 1 for h in self.context + prefix) + 14  # + room for a [Part X/N] line
        return max(self.max_chars - used, self.max_chars // 3)

    def _emit(self, prefix: list[str], piece: _Piece, trailing: list[str], headings: list[str]) -> None:
        parts = self.context + prefix
        if piece.marker:
            parts.append(piece.marker)
        parts.append(piece.body)
        parts.extend(trailing[:_TRAILING])
        self.chunks.append(_make("\n".join(parts), piece.start + 1, piece.end + 1, headings))

    def _section(self, sec: _Section, ancestors: list[str], following: list[str]) -> None:
        """Chunk `sec`. `ancestors` are the headings above it, `following` the headings after it."""
        if sec.heading is None and not sec.blocks and len(sec.children) == 1:
            sec = sec.children[0]  # a document that is one section: the root adds nothing
        own = [sec.heading] if sec.heading else []
        L = self.L
        first_line = (
            sec.start
            if sec.heading
            else next((b.start for b in sec.blocks), sec.children[0].start if sec.children else -1)
        )
        if first_line == -1:
            return  # empty document
        # 1. the whole section fits
        if L.span_len(first_line, sec.end) <= self._budget(ancestors):
            body = L.text(first_line, sec.end)
            if body.strip():
                self._emit(ancestors, _Piece(first_line, sec.end, body), following, ancestors + own)
            return
        before = len(self.chunks)
        prefix = ancestors + own
        budget = self._budget(prefix)
        # 2. intro blocks, packed
        child_heads = [c.heading for c in sec.children[:_TRAILING] if c.heading]
        intro_trailing = (child_heads + following)[:_TRAILING]
        pieces = self._pack(sec.blocks, budget)
        if pieces and sec.heading:
            pieces[0].start = sec.start  # the first piece also covers the heading line(s)
        for p in pieces:
            self._emit(prefix, p, intro_trailing, prefix)
        # 3. subsections
        for k, child in enumerate(sec.children):
            # only the first few following headings are ever shown (keeps huge files linear)
            after = ([c.heading for c in sec.children[k + 1 : k + 1 + _TRAILING] if c.heading] + following)[:_TRAILING]
            self._section(child, prefix, after)
        if sec.heading and len(self.chunks) == before:
            # heading only and oversized: emit it alone so its line is still covered
            self._emit(
                ancestors, _Piece(sec.start, sec.heading_end, L.text(sec.start, sec.heading_end)), following, prefix
            )
        elif sec.heading and not pieces and len(self.chunks) > before:
            # no intro: the first subsection chunk also covers this heading's line(s)
            c = self.chunks[before]  # chunks are emitted in document order
            self.chunks[before] = Chunk(c.text, sec.start + 1, c.end_line, c.headings, c.hash)

    def _pack(self, blocks: list[_Block], budget: int) -> list[_Piece]:
        L = self.L
        out: list[_Piece] = []
        cur: list[int] | None = None  # [start, end]
        for b in blocks:
            if cur is not None and L.span_len(cur[0], b.end) <= budget:
                cur[1] = b.end
                continue
            if cur is not None:
                out.append(_Piece(cur[0], cur[1], L.text(cur[0], cur[1])))
                cur = None
            if L.span_len(b.start, b.end) <= budget:
                cur = [b.start, b.end]
            else:
                out.extend(self._split_block(b, budget))
        if cur is not None:
            out.append(_Piece(cur[0], cur[1], L.text(cur[0], cur[1])))
        return [p for p in out if p.body.strip()]

    def _split_block(self, b: _Block, budget: int) -> list[_Piece]:
        L = self.L
        if b.kind == "table" and b.end - b.start >= 2:
            header = [L.lines[b.start], L.lines[b.start + 1]]
            rows = [(i, i) for i in range(b.start + 2, b.end + 1)]
            return self._pack_units(rows, header, [], b, budget)
        if b.kind == "code" and b.end > b.start:
            footer = [L.lines[b.end]] if b.closed else []
            last = b.end - 1 if b.closed else b.end
            if last < b.start + 1:
                return _mark(_line_greedy(L, b.start, b.end, budget))
            rows = [(i, i) for i in range(b.start + 1, last + 1)]
            return self._pack_units(rows, [L.lines[b.start]], footer, b, budget)
        if b.kind == "list" and len(b.units) > 1:
            return self._pack_units(b.units, [], [], b, budget)
        return _mark(_line_greedy(L, b.start, b.end, budget))

    def _pack_units(
        self, units: list[tuple[int, int]], header: list[str], footer: list[str], b: _Block, budget: int
    ) -> list[_Piece]:
        """Pack whole units (rows, code lines, list items); each piece repeats header/footer lines.
        The first piece's range starts at the block start, the last ends at the block end."""
        L = self.L
        extra = sum(len(h) + 1 for h in header) + sum(len(f) + 1 for f in footer)
        avail = max(budget - extra, budget // 3)

        def wrap(body: str) -> str:
            return "\n".join(header + [body] + footer)

        out: list[_Piece] = []
        cur: list[int] | None = None
        for a, z in units:
            if cur is not None and L.span_len(cur[0], z) <= avail:
                cur[1] = z
                continue
            if cur is not None:
                out.append(_Piece(cur[0], cur[1], wrap(L.text(cur[0], cur[1]))))
                cur = None
            if L.span_len(a, z) <= avail:
                cur = [a, z]
            else:
                for p in _mark(_line_greedy(L, a, z, avail)):
                    p.body = wrap(p.body)
                    out.append(p)
        if cur is not None:
            out.append(_Piece(cur[0], cur[1], wrap(L.text(cur[0], cur[1]))))
        if out:
            out[0].start = min(out[0].start, b.start)
            out[-1].end = max(out[-1].end, b.end)
        return out
