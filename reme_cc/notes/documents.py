"""Documents a user drops in (PDF, Word .docx) -> a text view that search, `read` and the resource
agent share; images -> their size and dimensions.

The text view is Markdown-like and line-numbered like any note:

* PDF: one ``## Page N`` header line per page, then that page's text (pypdfium2, PDFium's text layer).
  Search hits point at lines of this view; ``read`` with ``pages`` returns whole pages.
* .docx: headings (``Heading N``/``Title`` styles) as ``#`` lines, paragraphs, lists and tables as
  Markdown (python-docx), in document order.

Extraction runs in a child process with a CPU, memory and wall-clock bound (a PDF bomb, a 300-page
report or a file still being written can cost at most that, never hang or crash the MCP server, a
hook or the dream). Its result -- text or the reason there is none (encrypted, no text layer,
damaged, not a Word document, too slow, too big) -- is cached in the workspace's metadata folder
(``<metadata>/extract/``; a team memory's is in the personal workspace, never the repository) keyed by
the content hash, so an unchanged file is never extracted twice, whoever asks first, and pruned when
a sync changes or removes documents (``prune_cache``). The cache holds the raw text; ``text_view``
redacts secrets on the way out (before any text reaches the index, a tool result or a model), so a
change of the redaction patterns needs no re-extraction.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..base.bootstrap import TRUSTED_CWD, module_argv
from .formats import DOCUMENT_EXTS, IMAGE_EXTS, format_of

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024  # larger files are listed, not extracted
MAX_TEXT_CHARS = 4_000_000  # extracted text beyond this is cut (with a note in the view)
TIMEOUT_S = 30.0  # wall clock per extraction
CPU_S = 30  # RLIMIT_CPU of the child
MEMORY_BYTES = 1024 * 1024 * 1024  # RLIMIT_AS of the child (address space, incl. Python itself)
CACHE_DIR = "extract"  # in the workspace's metadata folder (Workspace.metadata)
_VERSION = 1  # bump when the view format changes: old cache entries are then re-extracted
PAGE_HEADER_RE = re.compile(r"^## Page (\d+)$")


@dataclass(frozen=True)
class Extraction:
    kind: str  # pdf | docx
    text: str  # the raw text view ("" when error)
    pages: int  # PDF pages (0 for .docx)
    error: str | None  # why there is no text (listed with this reason)


def is_document(path: str) -> bool:
    return path.lower().endswith(DOCUMENT_EXTS)


def is_image(path: str) -> bool:
    return path.lower().endswith(IMAGE_EXTS)


# ---- the cached, bounded extraction ---------------------------------------------------------------
def extract(metadata: Path, path: str, data: bytes, sha256: str | None = None) -> Extraction:
    """The extraction of ``data`` (the bytes of ``path``), from the cache in ``metadata`` (the
    workspace's derived-state folder, ``Workspace.metadata``) or a bounded child process."""
    fmt = format_of(path)
    if fmt is None or not fmt.extracted:
        raise ValueError(f"{path} is not a PDF or .docx")
    kind = fmt.kind
    sha256 = sha256 or hashlib.sha256(data).hexdigest()
    cache = Path(metadata) / CACHE_DIR / f"{sha256}.json"
    try:
        entry = json.loads(cache.read_text(encoding="utf-8"))
        if entry.get("v") == _VERSION:
            return Extraction(entry["kind"], entry["text"], entry["pages"], entry["error"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if len(data) > MAX_DOCUMENT_BYTES:
        result = Extraction(kind, "", 0, f"larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MB; not extracted")
    else:
        result = _run_child(kind, data)
    from ..base.workspace import atomic_write

    payload = {"v": _VERSION, "kind": result.kind, "text": result.text, "pages": result.pages, "error": result.error}
    try:
        atomic_write(cache, json.dumps(payload, ensure_ascii=False).encode("utf-8"))
    except OSError:
        pass  # a read-only workspace still gets the text, only not cached
    return result


def prune_cache(metadata: Path, keep: set[str], min_age_s: float = 600.0) -> int:
    """Delete cached extractions of content no file has any more (``keep``: the documents' current
    hashes), so the cache follows the documents instead of growing with every version. Entries younger
    than ``min_age_s`` stay: another process may have just extracted a file it has not indexed yet."""
    removed, now = 0, time.time()
    try:
        entries = list(os.scandir(Path(metadata) / CACHE_DIR))
    except OSError:
        return 0
    for entry in entries:
        sha, ext = os.path.splitext(entry.name)
        try:
            if ext == ".json" and sha not in keep and now - entry.stat().st_mtime > min_age_s:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue  # gone already, or a read-only workspace
    return removed


def _run_child(kind: str, data: bytes) -> Extraction:
    env = dict(os.environ)
    pkg_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        proc = subprocess.run(
            module_argv(sys.executable, "reme_cc.notes.documents", kind, str(MEMORY_BYTES), str(CPU_S)),
            input=data,
            capture_output=True,
            cwd=TRUSTED_CWD,
            timeout=TIMEOUT_S,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return Extraction(
            kind, "", 0, f"extraction took longer than {TIMEOUT_S:.0f} s (a very large or hostile file); not extracted"
        )
    except OSError as exc:
        return Extraction(kind, "", 0, f"cannot start the extractor: {exc}")
    try:
        out = json.loads(proc.stdout.decode("utf-8"))
        return Extraction(kind, out["text"], out["pages"], out["error"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        pass
    if proc.returncode < 0:
        import signal

        sig = -proc.returncode
        bound = {getattr(signal, "SIGXCPU", -1): f"its {CPU_S} s CPU bound"}.get(
            sig, f"its {MEMORY_BYTES // (1024 * 1024)} MB memory bound"
        )
        return Extraction(
            kind,
            "",
            0,
            f"the extractor stopped on signal {sig} (out of {bound}, or a crash on a hostile file); not extracted",
        )
    tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
    return Extraction(kind, "", 0, f"the extractor failed: {tail[0][:300]}")


# ---- the view -------------------------------------------------------------------------------------
def text_view(metadata: Path, path: str, data: bytes, sha256: str | None = None) -> Extraction:
    """The extraction with secrets redacted: what the index, `read` and the resource agent see."""
    from .redact import redact

    ex = extract(metadata, path, data, sha256)
    return Extraction(ex.kind, redact(ex.text), ex.pages, ex.error) if ex.text else ex


def page_lines(text: str) -> dict[int, int]:
    """{page number: 1-based line of its ``## Page N`` header} in a PDF text view."""
    out: dict[int, int] = {}
    want = 1
    for n, line in enumerate(text.split("\n"), 1):
        m = PAGE_HEADER_RE.match(line)
        if m and int(m.group(1)) == want:  # a page's own text saying "## Page 9" cannot shift pages
            out[want] = n
            want += 1
    return out


# ---- images ---------------------------------------------------------------------------------------
def image_info(path: Path) -> tuple[str, int, int] | None:
    """(format, width, height) read from the image's header (Pillow opens lazily: pixels are never
    decoded, so a decompression bomb costs nothing here), or None when it is not a readable image."""
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:  # a dependency; only a broken env lacks it, and then the image is just listed
        return None
    try:
        with Image.open(path) as im:
            return str(im.format or "image"), int(im.width), int(im.height)
    except (OSError, ValueError, UnidentifiedImageError, Image.DecompressionBombError):
        return None


# ---- the child: runs the libraries under resource limits ------------------------------------------
def _limit(memory: int, cpu: int) -> None:
    try:
        import resource
    except ImportError:  # Windows: the wall-clock timeout still bounds the child
        return
    for what, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CPU, cpu)):
        try:
            soft, hard = resource.getrlimit(what)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(what, (value, hard))
        except (ValueError, OSError):
            pass


def _cut(parts: list[str], total: int) -> tuple[list[str], bool]:
    if total <= MAX_TEXT_CHARS:
        return parts, False
    out, used = [], 0
    for p in parts:
        if used + len(p) > MAX_TEXT_CHARS:
            break
        out.append(p)
        used += len(p)
    return out, True


def _pdf(data: bytes) -> tuple[str, int, str | None]:
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        msg = str(exc)
        if "password" in msg.lower():
            return "", 0, "encrypted (password protected); save an unprotected copy to make it searchable"
        detail = msg.rsplit(":", 1)[-1].strip(" .()") or msg
        return "", 0, f"damaged or not a PDF ({detail}); not extracted"
    pages: list[str] = []
    total = 0
    with doc:
        n = len(doc)
        for i in range(n):
            page = doc[i]
            try:
                textpage = page.get_textpage()
                try:
                    text = textpage.get_text_bounded()
                finally:
                    textpage.close()
            finally:
                page.close()
            text = "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
            text = text.replace("\x00", "").replace("\ufffe", "").strip("\n")
            pages.append(text)
            total += len(text)
            if total > MAX_TEXT_CHARS:
                break
    if not any(p.strip() for p in pages):
        return "", n, "no text layer (a scanned or image-only PDF); run OCR on it to make it searchable"
    kept, cut = _cut(pages, total)
    view = "\n\n".join(f"## Page {k}\n\n{text}".rstrip("\n") for k, text in enumerate(kept, 1)) + "\n"
    if cut or len(kept) < n:
        view += f"\n[text cut after page {len(kept)} of {n}: over {MAX_TEXT_CHARS:,} characters]\n"
    return view, n, None


_MD_LINE_START = re.compile(r"^(\s*)(#|```|~~~|>|[-*+] |\d+[.)] |\||---|===)")


def _escape_md(line: str) -> str:
    """A paragraph's own text must not turn into a heading, fence or table in the view."""
    return _MD_LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _docx(data: bytes) -> tuple[str, int, str | None]:
    import io
    import zipfile

    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        return "", 0, f"not a Word .docx document ({type(exc).__name__}: {str(exc)[:120]}); not extracted"
    # with a Title paragraph as "#", Heading 1 becomes "##" so the title stays the one top heading
    shift = int(any(p.style is not None and p.style.name == "Title" for p in document.paragraphs))
    blocks: list[str] = []
    total = 0
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            rows = [[_cell(c.text) for c in row.cells] for row in item.rows]
            if not rows:
                continue
            width = max(len(r) for r in rows)
            rows = [r + [""] * (width - len(r)) for r in rows]
            lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
            lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
            block = "\n".join(lines)
        else:
            text = item.text.strip()
            if not text:
                continue
            style = (item.style.name if item.style is not None else "") or ""
            m = re.match(r"Heading (\d)", style)
            if style == "Title":
                block = "# " + " ".join(text.split())
            elif m:
                block = "#" * min(6, int(m.group(1)) + shift) + " " + " ".join(text.split())
            elif style.startswith("List"):
                block = "- " + " ".join(text.split())
            else:
                block = "\n".join(_escape_md(line) for line in text.split("\n"))
        blocks.append(block)
        total += len(block) + 2
        if total > MAX_TEXT_CHARS:
            blocks.append(f"[text cut: over {MAX_TEXT_CHARS:,} characters]")
            break
    if not blocks:
        return "", 0, "no text (an empty document or only images)"
    return "\n\n".join(blocks) + "\n", 0, None


def _child_main(kind: str, memory: int, cpu: int) -> int:
    _limit(memory, cpu)
    data = sys.stdin.buffer.read()
    try:
        text, pages, error = (_pdf if kind == "pdf" else _docx)(data)
    except MemoryError:
        text, pages, error = "", 0, f"extraction needed more than {memory // (1024 * 1024)} MB of memory; not extracted"
    except RecursionError:
        text, pages, error = "", 0, "too deeply nested (a hostile or broken file); not extracted"
    except Exception as exc:  # the libraries raise many kinds on broken input; report, never crash the caller
        text, pages, error = "", 0, f"damaged ({type(exc).__name__}: {str(exc)[:200]}); not extracted"
    sys.stdout.write(json.dumps({"text": text, "pages": pages, "error": error}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
