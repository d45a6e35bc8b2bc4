"""How often chunking cuts a fenced code block, under grammar v1 and the markdown grammar.

    PYTHONPATH=. .venv/bin/python scripts/fence_cuts.py [CORPUS_DIR]

CORPUS_DIR defaults to ../shared/corpora/markdown-docs. Every .md file is read and
normalized as the loader does (BOM dropped, CR LF and lone CR to LF). Then:

1. Loading: which files grammar v1 refuses (`heading_required`); that every file gives
   sections under the markdown grammar; and how many section titles come from a line
   inside a code block (fenced or indented, at any depth, as markdown-it-py sees them).
2. For sizes 100, 220, 500 and 1000 characters, the fenced code blocks that a chunk
   boundary falls strictly inside: (a) grammar v1's heading-aware policy (paragraphs
   packed greedily), on the files v1 loads; (b) blocks packed the same greedy way under
   the markdown grammar (a block larger than the size alone, cut at lines by
   `split_block`), on those files and on all files.
3. Throughput, best of several runs: the markdown grammar alone (parse, sections,
   blocks), cl100k_base token counting, and the whole markdown + token-packing pipeline;
   and the time ratio of 4 MiB to 1 MiB documents (4.0 is linear).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from explorer.errors import ExplorerError
from explorer.grammar import require_heading, section_paragraphs
from explorer.grammar import sections as v1_sections
from explorer.markdown_grammar import sections as markdown_sections
from explorer.markdown_grammar import split_block
from explorer.tokens import CHARS, TOKENS, count_tokens, token_windows

Span = tuple[int, int]
SIZES = (100, 220, 500, 1000)
TOKEN_SIZE = 256
REPEATS = 3
MIB = 1024 * 1024
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "markdown-docs"

# A parser of its own, so the measure does not trust the grammar it measures.
_PARSER = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")


def normalized(path: Path) -> str:
    text = path.read_bytes().decode("utf-8")
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def code_blocks(text: str) -> tuple[list[Span], list[Span]]:
    """Fenced code blocks as offsets, and every code block's (fenced or indented) lines."""
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    fences: list[Span] = []
    code_lines: list[Span] = []
    for token in _PARSER.parse(text):
        if token.type in ("fence", "code_block") and token.map is not None:
            first, stop = token.map
            code_lines.append((first, stop))
            if token.type == "fence":
                fences.append((starts[first], min(starts[stop], len(text))))
    return fences, code_lines


def cut_fences(fences: list[Span], chunks: Iterable[Span]) -> int:
    """Fences with a chunk's start or end strictly inside them."""
    boundaries = sorted({b for chunk in chunks for b in chunk})
    cut = 0
    index = 0
    for start, end in fences:  # in document order
        while index < len(boundaries) and boundaries[index] <= start:
            index += 1
        if index < len(boundaries) and boundaries[index] < end:
            cut += 1
    return cut


def pack(spans: Iterable[Span], size: int) -> list[Span]:
    """Grammar v1's heading-aware rule: a unit joins the group while end - start <= size."""
    groups: list[Span] = []
    for start, end in spans:
        if groups and end - groups[-1][0] <= size:
            groups[-1] = (groups[-1][0], end)
        else:
            groups.append((start, end))
    return groups


def v1_chunks(text: str, size: int) -> list[Span]:
    chunks: list[Span] = []
    for section in v1_sections(text):
        chunks.extend(pack(section_paragraphs(text, section), size))
    return chunks


def markdown_chunks(text: str, size: int, split: bool = True) -> list[Span]:
    """Blocks packed like v1's paragraphs; a block larger than the size alone, cut at
    lines (or, with `split` false, kept whole as v1 keeps a large paragraph)."""
    chunks: list[Span] = []
    for section in markdown_sections(text):
        run: list[Span] = []
        for block in section.blocks:
            if split and block[1] - block[0] > size:
                chunks.extend(pack(run, size))
                run = []
                chunks.extend(split_block(text, block, size, CHARS))
            else:
                run.append(block)
        chunks.extend(pack(run, size))
    return chunks


def whole_blocks(text: str, size: int) -> list[Span]:
    return markdown_chunks(text, size, split=False)


def close_group(text: str, run: list[Span], size: int) -> list[Span]:
    """Blocks chosen by their summed counts, checked once as a whole: the text between
    blocks and merges at their edges can add a token or two, and then they are packed
    again, counting each candidate group."""
    if not run:
        return []
    whole = (run[0][0], run[-1][1])
    if len(run) == 1 or count_tokens(text[whole[0] : whole[1]]) <= size:
        return [whole]
    groups: list[Span] = []
    for start, end in run:
        if groups and count_tokens(text[groups[-1][0] : end]) <= size:
            groups[-1] = (groups[-1][0], end)
        else:
            groups.append((start, end))
    return groups


def token_chunks(text: str, size: int) -> list[Span]:
    """The pipeline to come, in tokens: each block counted once, each group once."""
    chunks: list[Span] = []
    for section in markdown_sections(text):
        run: list[Span] = []
        run_tokens = 0
        for start, end in section.blocks:
            tokens = count_tokens(text[start:end])
            if tokens > size:
                chunks.extend(close_group(text, run, size))
                run, run_tokens = [], 0
                chunks.extend(split_block(text, (start, end), size, TOKENS))
            elif run and run_tokens + tokens <= size:
                run.append((start, end))
                run_tokens += tokens
            else:
                chunks.extend(close_group(text, run, size))
                run, run_tokens = [(start, end)], tokens
        chunks.extend(close_group(text, run, size))
    return chunks


def token_windows_of(text: str, size: int) -> list[Span]:
    return token_windows(text, 0, len(text), size)


def best_seconds(work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        began = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - began)
    return best


def main(corpus: Path) -> None:
    paths = sorted(p for p in corpus.rglob("*.md") if p.parent != corpus)
    texts = {str(p.relative_to(corpus)): normalized(p) for p in paths}
    v1_loadable: dict[str, str] = {}
    for name, text in texts.items():
        try:
            require_heading(text)
        except ExplorerError:
            continue
        v1_loadable[name] = text
    megabytes = sum(len(t.encode()) for t in texts.values()) / 1e6

    v1_titles_in_code = markdown_titles_in_code = markdown_sections_total = empty = 0
    fences: dict[str, list[Span]] = {}
    for name, text in texts.items():
        fenced, code_lines = code_blocks(text)
        fences[name] = fenced

        def in_code(offset: int, text: str = text, code_lines: list[Span] = code_lines) -> bool:
            line = text.count("\n", 0, offset)
            return any(first <= line < stop for first, stop in code_lines)

        found = markdown_sections(text)
        markdown_sections_total += len(found)
        empty += not found
        markdown_titles_in_code += sum(
            in_code(s.heading_start) for s in found if s.start != s.heading_start
        )
        if name in v1_loadable:
            v1_titles_in_code += sum(in_code(s.heading_start) for s in v1_sections(text))

    print(f"corpus: {corpus} ({len(texts)} files, {megabytes:.2f} MB)")
    print(f"grammar v1 loads {len(v1_loadable)}, refuses {len(texts) - len(v1_loadable)}")
    print(
        f"markdown grammar: {len(texts) - empty} of {len(texts)} files give sections "
        f"({markdown_sections_total} sections)"
    )
    print(
        f"section titles from a line inside a code block: grammar v1 {v1_titles_in_code}, "
        f"markdown {markdown_titles_in_code}"
    )
    v1_fences = sum(len(fences[name]) for name in v1_loadable)
    all_fences = sum(len(f) for f in fences.values())
    print()
    print("Fenced code blocks cut strictly inside by a chunk boundary, and in brackets the")
    print("chunks longer than the size (v1 keeps a large paragraph whole: N is a target)")
    print(
        f"| size (chars) | v1 heading-aware ({len(v1_loadable)} files, {v1_fences} fences) "
        f"| markdown blocks, large ones cut at lines (same files) "
        f"| same, all {len(texts)} files ({all_fences} fences) "
        f"| markdown blocks, large ones whole (same {len(v1_loadable)} files) |"
    )
    print("|---:|---:|---:|---:|---:|")
    for size in SIZES:
        cells = []
        for corpus_part, chunker in (
            (v1_loadable, v1_chunks),
            (v1_loadable, markdown_chunks),
            (texts, markdown_chunks),
            (v1_loadable, whole_blocks),
        ):
            cut = longer = 0
            for name, text in corpus_part.items():
                chunks = chunker(text, size)
                cut += cut_fences(fences[name], chunks)
                longer += sum(end - start > size for start, end in chunks)
            cells.append(f"{cut} ({longer})")
        print(f"| {size} | {' | '.join(cells)} |")

    corpus_texts = list(texts.values())
    grammar = best_seconds(lambda: [markdown_sections(t) for t in corpus_texts])
    counting = best_seconds(lambda: [count_tokens(t) for t in corpus_texts])
    pipeline = best_seconds(lambda: [token_chunks(t, TOKEN_SIZE) for t in corpus_texts])
    v1_time = best_seconds(lambda: [v1_chunks(t, 220) for t in v1_loadable.values()])
    v1_megabytes = sum(len(t.encode()) for t in v1_loadable.values()) / 1e6
    print()
    print(f"Throughput on the corpus (best of {REPEATS}):")
    print(f"  markdown grammar (parse, sections, blocks)    {megabytes / grammar:6.2f} MB/s")
    print(f"  cl100k_base token count, whole documents      {megabytes / counting:6.2f} MB/s")
    print(
        f"  markdown + heading-aware packing in tokens "
        f"({TOKEN_SIZE}) {megabytes / pipeline:6.2f} MB/s"
    )
    print(f"  for reference, grammar v1 heading-aware 220   {v1_megabytes / v1_time:6.2f} MB/s")

    # Linear time: one document of 1 and of 4 MiB cut from the corpus (4.0 is linear).
    joined = "\n\n".join(corpus_texts)
    joined *= 1 + 4 * MIB // len(joined)
    print()
    for label, work in (
        ("markdown sections", markdown_sections),
        (f"token windows of {TOKEN_SIZE}", partial(token_windows_of, size=TOKEN_SIZE)),
    ):
        one, four = (best_seconds(partial(work, joined[: n * MIB])) for n in (1, 4))
        print(f"  {label}: 1 MiB in {one:.2f} s, 4 MiB / 1 MiB time ratio {four / one:.2f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CORPUS)
