"""Documents as users have them, made here: PDFs (with a text layer, encrypted, scanned),
a Word file and an HTML page. Built by libraries of requirements-dev.txt, byte for byte
the same on every run, so no binary needs committing."""

from __future__ import annotations

import datetime
import io
from collections.abc import Sequence

from docx import Document
from fpdf import FPDF
from PIL import Image, ImageDraw

# A page is a list of blocks: ("h1" | "h2" | "p", text).
Page = Sequence[tuple[str, str]]
_FIXED_DATE = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
_SIZES = {"h1": 20, "h2": 15, "p": 11}

HANDBOOK_PAGES: tuple[Page, ...] = (
    (
        ("h1", "Field Guide to Harbour Cranes"),
        ("p", "Harbour cranes lift containers from ships onto the quay."),
        ("h2", "Daily Checks"),
        ("p", "Inspect the wire ropes before the first lift of the day."),
    ),
    (
        ("h2", "Wind Limits"),
        ("p", "Stop lifting when the wind gusts above twenty metres per second."),
        ("p", "Park the boom in its storm position and lock the travel brakes."),
    ),
    (
        ("h2", "Handing Over"),
        ("p", "Write every fault in the log book before the shift ends."),
    ),
)


def pdf_bytes(
    pages: Sequence[Page] = HANDBOOK_PAGES,
    owner_password: str | None = None,
    user_password: str | None = None,
) -> bytes:
    """A PDF with a text layer, one block a line; headings in larger bold type."""
    pdf = FPDF()
    pdf.set_creation_date(_FIXED_DATE)
    pdf.set_auto_page_break(False)
    if owner_password is not None:
        pdf.set_encryption(owner_password=owner_password, user_password=user_password)
    for page in pages:
        pdf.add_page()
        for kind, text in page:
            pdf.set_font("helvetica", "B" if kind != "p" else "", _SIZES[kind])
            pdf.multi_cell(0, _SIZES[kind] * 0.6, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    return bytes(pdf.output())


def scanned_pdf_bytes() -> bytes:
    """A PDF whose one page is a picture of text, as a scanner makes: no text layer."""
    image = Image.new("L", (400, 120), 255)
    ImageDraw.Draw(image).text((10, 40), "A scanned page of text", fill=0)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    pdf = FPDF()
    pdf.set_creation_date(_FIXED_DATE)
    pdf.add_page()
    pdf.image(io.BytesIO(buffer.getvalue()), x=10, y=10, w=180)
    return bytes(pdf.output())


def docx_bytes() -> bytes:
    """A Word handbook: heading styles, paragraphs, a list and a table."""
    document = Document()
    document.core_properties.created = _FIXED_DATE.replace(tzinfo=None)
    document.core_properties.modified = _FIXED_DATE.replace(tzinfo=None)
    document.add_heading("Staff Handbook", level=1)
    document.add_paragraph("Welcome to the harbour office. Read this before your first shift.")
    document.add_heading("Working Hours", level=2)
    document.add_paragraph("The office opens at seven and closes at six.")
    document.add_paragraph("Bring your badge every day.", style="List Bullet")
    document.add_paragraph("Sign in at the gate.", style="List Bullet")
    document.add_heading("Leave", level=2)
    document.add_paragraph("Ask for leave two weeks ahead.")
    table = document.add_table(rows=2, cols=2)
    for cell, text in zip(
        (c for row in table.rows for c in row.cells), ("Kind", "Days", "Annual", "25"), strict=True
    ):
        cell.text = text
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


HTML_FAQ = """<!doctype html>
<html><head><title>Harbour FAQ</title><style>p { color: red }</style>
<script>alert("never run")</script></head>
<body>
<nav><a href="/">Home</a></nav>
<h1>Harbour FAQ</h1>
<p>Answers to what visitors ask most.</p>
<h2>When is the harbour open?</h2>
<p>Every day from <b>six</b> in the morning to ten at night.</p>
<h2>Can I park at the quay?</h2>
<ul><li>Cars park behind the office.</li><li>Bicycles park by the gate.</li></ul>
</body></html>
"""
