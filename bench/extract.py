"""Resource figures: PDF extraction speed (pypdfium2, and pypdf beside it when installed), the bounds
on hostile files, time from dropping a PDF to finding it with the MCP search, and the resource
sync's no-change run stat-first against reading and hashing every file (the earlier behaviour).

    .venv/bin/python bench/extract.py [--pages 300] [--resources 300] [--work /tmp/reme-bench-extract]

Every file is generated here (reportlab, its built-in CJK font); nothing is downloaded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support import documents as make  # noqa: E402


def big_pdf(path: Path, pages: int, image_mb_per_page: float) -> Path:
    """Text pages plus an incompressible picture on each: a scanned-looking 50 MB report."""
    import random

    from PIL import Image
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    side = int((image_mb_per_page * 1024 * 1024 / 3) ** 0.5)
    rnd = random.Random(1)
    c = canvas.Canvas(str(path), pagesize=A4)
    for i in range(pages):
        im = Image.frombytes("RGB", (side, side), rnd.randbytes(side * side * 3))
        c.drawImage(ImageReader(im), 40, 300, width=500, height=500)
        c.setFont("STSong-Light", 12)
        c.drawString(40, 800, f"第{i + 1}页 光伏组件价格 module prices page {i + 1}")
        c.showPage()
    c.save()
    return path


def one_case(kind: str, path: str) -> None:
    """Child mode: extract one file through the bounded extractor; print seconds and the child's peak RSS."""
    import resource

    from reme_cc.notes import documents

    data = Path(path).read_bytes()
    t0 = time.perf_counter()
    ex = documents._run_child(kind, data)
    secs = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "seconds": round(secs, 2),
                "peak_rss_mb": round(rss),
                "pages": ex.pages,
                "chars": len(ex.text),
                "error": ex.error,
            },
            ensure_ascii=False,
        )
    )


def measure_case(kind: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--case", kind, str(path)], capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def libraries(pdf: Path) -> None:
    data = pdf.read_bytes()
    import pypdfium2 as pdfium

    t0 = time.perf_counter()
    doc = pdfium.PdfDocument(data)
    n = len(doc)
    chars = 0
    for i in range(n):
        page = doc[i]
        tp = page.get_textpage()
        chars += len(tp.get_text_bounded())
        tp.close()
        page.close()
    doc.close()
    t = time.perf_counter() - t0
    print(f"pypdfium2  {n} pages in {t:.2f} s = {n / t:,.0f} pages/s ({chars:,} chars)")
    try:
        import pypdf
    except ImportError:
        print("pypdf      not installed (.venv/bin/pip install pypdf to compare)")
        return
    t0 = time.perf_counter()
    reader = pypdf.PdfReader(pdf)
    chars2 = sum(len(p.extract_text() or "") for p in reader.pages)
    t2 = time.perf_counter() - t0
    print(
        f"pypdf      {n} pages in {t2:.2f} s = {n / t2:,.0f} pages/s ({chars2:,} chars); pypdfium2 is {t2 / t:.1f}x faster"
    )


def drop_to_search(work: Path, pages: int) -> None:
    from test_server import start

    root = work / "ws-mcp"
    shutil.rmtree(root, ignore_errors=True)
    src = make.report_pdf(work / "drop.pdf", pages=pages)
    with start(root) as srv:
        srv.initialize()
        srv.call_tool("search", {"query": "钠离子电池量产进度"})  # warm: index open, jieba loaded
        rel = "resource/2026-06-20/catl.pdf"
        (root / "resource/2026-06-20").mkdir(parents=True)
        t0 = time.monotonic()
        shutil.copy(src, root / rel)
        while True:
            out = srv.text(srv.call_tool("search", {"query": "钠离子电池量产进度", "limit": 1}))
            if rel in out:
                break
            if time.monotonic() - t0 > 120:
                raise SystemExit("not found within 120 s")
            time.sleep(0.05)
        found = time.monotonic() - t0
        srv.stop()
    print(f"drop -> searchable over MCP ({pages}-page PDF): {found:.2f} s (incl. the <=1 s freshness interval)")


def resource_sync(work: Path, n: int) -> None:
    from reme_cc.base.config import Config
    from reme_cc.memory import resource
    from reme_cc.tools import Context
    from reme_cc.base.workspace import Workspace

    root = work / "ws-res"
    shutil.rmtree(root, ignore_errors=True)
    ws = Workspace(root)
    blob = os.urandom(1 << 20)
    for i in range(n):
        ws.write_bytes(f"resource/2026-06-20/scan-{i:04d}.bin", blob[:-8] + i.to_bytes(8, "big"))  # 1 MB each
    ctx = Context(ws, Config.load(root))

    async def never(*a, **k):
        raise AssertionError("binary files are listed, not summarised")

    asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=never))
    t0 = time.perf_counter()
    rep = asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=never))
    stat_first = time.perf_counter() - t0
    assert rep.unchanged == n
    # the earlier behaviour: no stat in the catalog, so every file is read and hashed
    cat = json.loads((root / resource.CATALOG).read_text())
    for entry in cat["resources"].values():
        entry.pop("mtime_ns", None)
        entry.pop("size", None)
    t0 = time.perf_counter()
    for _ in range(1):
        (root / resource.CATALOG).write_text(json.dumps(cat))
        asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=never))
    hash_all = time.perf_counter() - t0
    ctx.close()
    print(
        f"resource sync, nothing changed, {n} files x 1 MB: stat first {stat_first * 1000:.0f} ms, "
        f"read+hash all (before) {hash_all * 1000:.0f} ms = {hash_all / stat_first:.0f}x"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--resources", type=int, default=300)
    ap.add_argument("--work", default="/tmp/reme-bench-extract")
    ap.add_argument("--case", nargs=2)
    args = ap.parse_args()
    if args.case:
        return one_case(*args.case)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    report = make.report_pdf(work / "report.pdf", pages=args.pages)
    libraries(report)
    from reme_cc.notes import documents

    print(
        f"bounds: wall {documents.TIMEOUT_S:.0f} s, CPU {documents.CPU_S} s, address space "
        f"{documents.MEMORY_BYTES // (1024 * 1024)} MB"
    )
    cases = [
        (f"{args.pages}-page report (zh/en + tables)", "pdf", report),
        ("50 MB PDF (50 pages, a picture each)", "pdf", big_pdf(work / "big.pdf", 50, 1.0)),
        ("decompression bomb (0.6 MB -> 600 MB)", "pdf", make.bomb_pdf(work / "bomb.pdf", 600)),
        ("arrays nested 200,000 deep", "pdf", make.nested_pdf(work / "nested.pdf")),
        ("encrypted PDF", "pdf", make.report_pdf(work / "enc.pdf", pages=3, encrypt="pw")),
        ("image-only PDF", "pdf", make.image_only_pdf(work / "scan.pdf")),
        ("half-written PDF (first 60% of the report)", "pdf", _half(report, work / "half.pdf")),
        ("Word .docx", "docx", make.report_docx(work / "r.docx")),
        (".docx that is another zip", "docx", make.fake_docx(work / "fake.docx")),
    ]
    for label, kind, path in cases:
        r = measure_case(kind, path)
        size = path.stat().st_size / (1024 * 1024)
        rate = f", {r['pages'] / r['seconds']:,.0f} pages/s" if r["pages"] and not r["error"] else ""
        print(
            f"  {label:<45} {size:7.1f} MB  {r['seconds']:6.2f} s  peak {r['peak_rss_mb']:5d} MB{rate}  "
            f"-> {r['error'] or str(r['chars']) + ' chars'}"
        )
    drop_to_search(work, args.pages)
    resource_sync(work, args.resources)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


def _half(src: Path, dst: Path) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: len(data) * 6 // 10])
    return dst


if __name__ == "__main__":
    main()
