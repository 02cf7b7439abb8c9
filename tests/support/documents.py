"""Real documents made in the tests: PDFs with reportlab (its built-in Adobe CJK font STSong-Light,
so no font file is needed), Word files with python-docx, and hostile variants."""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path

SECRET = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3


def report_pdf(path: Path, pages: int = 3, *, secret_on: int | None = None, encrypt: str | None = None) -> Path:
    """A research report: per page a Chinese/English heading, a paragraph and a figures table.
    Page N mentions '第N章' and 'page N'; page 2 is about 钠离子电池 (sodium-ion)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Table

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    h = ParagraphStyle("h", fontName="STSong-Light", fontSize=16, leading=20)
    b = ParagraphStyle("b", fontName="STSong-Light", fontSize=10, leading=14)
    story = []
    for i in range(1, pages + 1):
        topic = "钠离子电池量产进度 sodium-ion ramp" if i == 2 else "宁德时代动力电池研究 battery research"
        story.append(Paragraph(f"第{i}章 {topic}", h))
        text = f"宁德时代是全球动力电池出货量第一的企业，第{i}页讨论{topic}。The market grew 38% in 2025 (page {i})."
        if i == secret_on:
            text += f" API key: {SECRET}"
        story.append(Paragraph(text, b))
        story.append(
            Table(
                [
                    ["指标 Metric", "2024", "2025"],
                    ["出货量 GWh", "321", str(400 + i)],
                    ["毛利率 margin", "22.4%", "24.1%"],
                ],
                style=[("FONT", (0, 0), (-1, -1), "STSong-Light")],
            )
        )
        story.append(PageBreak())
    kwargs = {}
    if encrypt:
        from reportlab.lib.pdfencrypt import StandardEncryption

        kwargs["encrypt"] = StandardEncryption(encrypt, canPrint=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    SimpleDocTemplate(str(path), pagesize=A4, **kwargs).build(story)
    return path


def image_only_pdf(path: Path) -> Path:
    """A 'scan': one page that is only a picture (no text layer)."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    im = Image.new("RGB", (400, 200), "white")
    ImageDraw.Draw(im).rectangle((20, 20, 380, 180), outline="black", width=5)
    path.parent.mkdir(parents=True, exist_ok=True)
    c = canvas.Canvas(str(path))
    c.drawImage(ImageReader(im), 50, 500, width=400, height=200)
    c.showPage()
    c.save()
    return path


def report_docx(path: Path) -> Path:
    import docx

    d = docx.Document()
    d.add_heading("光伏产业链研究 Solar supply chain", level=0)
    d.add_heading("硅料 Polysilicon", level=1)
    d.add_paragraph("多晶硅价格在 2025 年回落到 60 元/公斤。Polysilicon fell to 60 CNY/kg in 2025.")
    d.add_paragraph("# not a heading: a paragraph that starts with a hash")
    d.add_heading("组件 Modules", level=1)
    d.add_paragraph("TOPCon 组件效率 22.8%", style="List Bullet")
    t = d.add_table(rows=2, cols=2)
    t.cell(0, 0).text, t.cell(0, 1).text = "环节 Stage", "毛利率 Margin"
    t.cell(1, 0).text, t.cell(1, 1).text = "组件|Modules", "12%"
    path.parent.mkdir(parents=True, exist_ok=True)
    d.save(str(path))
    return path


def fake_docx(path: Path) -> Path:
    """A .docx that is really a zip of something else."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("readme.txt", "just a zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())
    return path


def raw_pdf(objects: list[bytes]) -> bytes:
    """Bytes of a PDF made of these objects (1-based numbers, object 1 the catalog) with a correct
    xref table: used for hostile files no PDF library would write."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def bomb_pdf(path: Path, megabytes: int = 600) -> Path:
    """One page whose content stream inflates from ~0.6 MB to ``megabytes`` MB (a decompression bomb)."""
    comp = zlib.compressobj(1)
    block = b" " * (1 << 20)
    data = b"".join(comp.compress(block) for _ in range(megabytes)) + comp.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw_pdf(objects))
    return path


def nested_pdf(path: Path, depth: int = 200_000) -> Path:
    """A page dictionary holding an array nested ``depth`` levels deep."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Junk " + b"[" * depth + b"]" * depth + b" >>",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw_pdf(objects))
    return path
