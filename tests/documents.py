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


# Code as pandoc writes it into a .docx: one "Source Code" paragraph a block, its lines
# "Verbatim Char" runs between line breaks, spaces kept.
CODE_LINES = (
    "# Create a sample collection",
    "active_users = [",
    '    {"name": "ada", "role": "admin"},',
    "]",
    "",
    "",
    "def count_admins(users):",
    "    # Count the admins",
    '    return sum(1 for user in users if user["role"] == "admin")',
)


def code_docx_bytes() -> bytes:
    """A Word file with a code block as pandoc makes it, a code word inside a sentence,
    and a second block written the way Word users do: one "Source Code" paragraph a line."""
    from docx.enum.style import WD_STYLE_TYPE

    document = Document()
    document.core_properties.created = _FIXED_DATE.replace(tzinfo=None)
    document.core_properties.modified = _FIXED_DATE.replace(tzinfo=None)
    code = document.styles.add_style("Source Code", WD_STYLE_TYPE.PARAGRAPH)
    verbatim = document.styles.add_style("Verbatim Char", WD_STYLE_TYPE.CHARACTER)
    document.add_heading("Users", level=1)
    sentence = document.add_paragraph("The list ")
    sentence.add_run("active_users", style=verbatim)
    sentence.add_run(" holds every user_id that signed in.")
    block = document.add_paragraph(style=code)
    for number, line in enumerate(CODE_LINES):
        if number:
            block.add_run().add_break()
        if line:
            block.add_run(line, style=verbatim)
    document.add_heading("Shell", level=2)
    for line in ("# List the files", "ls  -l  *_test.py"):
        document.add_paragraph(style=code).add_run(line, style=verbatim)
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


# A page as Sphinx builds Python's documentation (Debian's python3.11-doc,
# library/json.html), cut down: a menu, link bars above and below the text, a sidebar
# with the table of contents, a footer, and a permalink "¶" after each heading and
# definition.
SPHINX_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8" /><title>json — JSON encoder and decoder</title>
<script src="../_static/sidebar.js"></script></head>
<body>
<div class="mobile-nav">
  <nav class="nav-content" role="navigation">
    <a href="https://www.python.org/" class="nav-logo"><img src="../_static/py.svg" alt="Logo"/></a>
    <form role="search" class="search" action="../search.html" method="get">
      <input type="text" name="q" aria-label="Quick search"/><input type="submit" value="Go"/>
    </form>
  </nav>
  <div class="menu-wrapper"><nav class="menu" role="navigation" aria-label="main navigation">
    <h3><a href="../contents.html">Table of Contents</a></h3>
    <ul><li><a class="reference internal" href="#basic-usage">Basic Usage</a></li></ul>
  </nav></div>
</div>
<div class="related" role="navigation" aria-label="related navigation">
  <h3>Navigation</h3>
  <ul>
    <li class="right"><a href="../genindex.html" title="General Index">index</a></li>
    <li class="right"><a href="mailbox.html" title="mailbox">next</a> |</li>
    <li><a href="https://www.python.org/">Python</a> &#187;</li>
    <li class="nav-item nav-item-1"><a href="index.html">The Python Standard Library</a> &#187;</li>
  </ul>
</div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main">
<section id="module-json">
<span id="json-json-encoder-and-decoder"></span><h1><a class="reference internal" href="#module-json" title="json: Encode and decode the JSON format."><code class="xref py py-mod docutils literal notranslate"><span class="pre">json</span></code></a> — JSON encoder and decoder<a class="headerlink" href="#module-json" title="Permalink to this heading">¶</a></h1>
<p><strong>Source code:</strong> <a class="reference external" href="https://github.com/python/cpython/tree/3.11/Lib/json/__init__.py">Lib/json/__init__.py</a></p>
<p>JSON is a lightweight data interchange format inspired by JavaScript object literal syntax.</p>
<div class="highlight-python3 notranslate"><div class="highlight"><pre><span></span><span class="gp">&gt;&gt;&gt; </span><span class="kn">import</span> <span class="nn">json</span>
<span class="gp">&gt;&gt;&gt; </span><span class="n">json</span><span class="o">.</span><span class="n">dumps</span><span class="p">([</span><span class="s1">&#39;foo&#39;</span><span class="p">])</span>
<span class="go">&#39;[&quot;foo&quot;]&#39;</span>
</pre></div></div>
<section id="basic-usage">
<h2>Basic Usage<a class="headerlink" href="#basic-usage" title="Permalink to this heading">¶</a></h2>
<dl class="py function">
<dt class="sig sig-object py" id="json.dump">
<span class="sig-prename descclassname"><span class="pre">json.</span></span><span class="sig-name descname"><span class="pre">dump</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">obj</span></span></em>, <em class="sig-param"><span class="n"><span class="pre">fp</span></span></em><span class="sig-paren">)</span><a class="headerlink" href="#json.dump" title="Permalink to this definition">¶</a></dt>
<dd><p>Serialize <em>obj</em> as a JSON formatted stream to <em>fp</em>.</p></dd>
</dl>
</section>
</section>
<div class="clearer"></div>
</div>
</div></div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation">
<div class="sphinxsidebarwrapper">
  <div><h3><a href="../contents.html">Table of Contents</a></h3>
  <ul><li><a class="reference internal" href="#basic-usage">Basic Usage</a></li></ul></div>
  <div><h4>Previous topic</h4><p class="topless"><a href="email.iterators.html">email.iterators</a></p></div>
  <div role="note" aria-label="source link"><h3>This Page</h3>
  <ul class="this-page-menu"><li><a href="../bugs.html">Report a Bug</a></li></ul></div>
</div></div>
<div class="clearer"></div>
</div>
<div class="related" role="navigation" aria-label="related navigation">
  <h3>Navigation</h3>
  <ul><li><a href="https://www.python.org/">Python</a> &#187;</li></ul>
</div>
<div class="footer">
&copy; <a href="../copyright.html">Copyright</a> 2001-2026, Python Software Foundation.<br />
Created using <a href="https://www.sphinx-doc.org/">Sphinx</a> 5.3.0.
</div>
</body></html>
"""  # noqa: E501 (Sphinx writes these lines as long)


def shared_stream_pdf_bytes(pages: int, lines: int, line: str = "x" * 98) -> bytes:
    """A PDF of `pages` pages that all draw one compressed content stream of `lines`
    lines of text: a small file whose text layer is pages times lines times line long."""
    import zlib

    drawn = "".join(f"({line}) Tj T* " for _ in range(lines))
    content = zlib.compress(f"BT /F1 1 Tf 1 TL 0 0 Td {drawn}ET".encode(), 9)
    kids = " ".join(f"{5 + i} 0 R" for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content)
        + content
        + b"\nendstream",
    ]
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
    page += b"/Resources << /Font << /F1 3 0 R >> >> >>"
    objects += [page] * pages
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def nested_quotes_html(depth: int = 126, breaks: int = 200_000) -> bytes:
    """An HTML page of `depth` nested blockquotes around `breaks` lines of one letter: each line
    gets a quote marker per level, so a 1 MiB page makes tens of millions of characters."""
    return b"<blockquote>" * depth + b"x<br>" * breaks + b"</blockquote>" * depth
