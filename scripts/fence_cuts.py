"""How often chunking cuts a fenced code block, under grammar v1 and the markdown grammar.

    PYTHONPATH=. .venv/bin/python scripts/fence_cuts.py [CORPUS_DIR]

CORPUS_DIR defaults to ../shared/corpora/markdown-docs. Every .md file is read and
normalized as the loader does (BOM dropped, CR LF and lone CR to LF). Then, with the
real policies and the real build (`explorer.chunking.index.document_chunks`):

1. Loading: which files each grammar admits (v1 refuses those without a leading
   heading, `heading_required`), and how many section titles come from a line inside a
   code block (fenced or indented, at any depth, as markdown-it-py sees them).
2. For sizes in characters and in tokens, the fenced code blocks (at any depth) that a
   heading-aware chunk boundary falls strictly inside: under grammar v1 on the files v1
   loads, under the markdown grammar on those files and on all files; and, under the
   markdown grammar, how many of the cut fences fit in the size (the grammar promises
   none), and how many chunks measure more than the size.
3. Throughput, best of several runs: the markdown grammar alone, cl100k_base counting of
   whole documents, and whole builds (ids included) of heading-aware in tokens under the
   markdown grammar and, for reference, of grammar v1 in characters; the time ratio of
   4 MiB to 1 MiB documents (4.0 is linear).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from explorer import make_config
from explorer.chunking.config import ChunkConfig
from explorer.chunking.index import build_index, document_chunks
from explorer.chunking.tokens import count_tokens
from explorer.errors import ExplorerError
from explorer.grammars import GRAMMARS
from explorer.grammars.markdown import sections as markdown_sections
from explorer.limits import MAX_CHUNKS_LIMIT, Limits
from explorer.sources.documents import DocumentRecord, document_record

Span = tuple[int, int]
CHAR_SIZES = (100, 220, 500, 1000)
TOKEN_SIZES = (64, 256)
BENCH_TOKENS = 256
REPEATS = 3
MIB = 1024 * 1024
NO_LIMITS = Limits(chunks_per_document=MAX_CHUNKS_LIMIT, chunks_per_index=MAX_CHUNKS_LIMIT)
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "markdown-docs"

# A parser of its own, so the measure does not trust the grammar it measures.
_PARSER = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")


def normalized(path: Path) -> str:
    text = path.read_bytes().decode("utf-8")
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def record(name: str, text: str) -> DocumentRecord:
    fields = {"source_id": name, "version": "1", "path": name, "sha256": "0" * 64}
    return document_record(fields, text)


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


def cut_fences(fences: list[Span], chunks: Iterable[Span]) -> list[Span]:
    """Fences with a chunk's start or end strictly inside them."""
    boundaries = sorted({b for chunk in chunks for b in chunk})
    cut = []
    index = 0
    for start, end in fences:  # in document order
        while index < len(boundaries) and boundaries[index] <= start:
            index += 1
        if index < len(boundaries) and boundaries[index] < end:
            cut.append((start, end))
    return cut


def measure(config: ChunkConfig, text: str) -> int:
    return count_tokens(text) if config.unit == "tokens" else len(text)


def best_seconds(work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        began = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - began)
    return best


def main(corpus: Path) -> None:
    paths = sorted(p for p in corpus.rglob("*.md") if p.parent != corpus)
    records = [record(str(p.relative_to(corpus)), normalized(p)) for p in paths]
    v1_loadable = []
    for document in records:
        try:
            GRAMMARS["v1"].admit(document["text"])
        except ExplorerError:
            continue
        v1_loadable.append(document)
    megabytes = sum(len(d["text"].encode()) for d in records) / 1e6

    titles_in_code = {"v1": 0, "markdown": 0}
    fences: dict[str, list[Span]] = {}
    for document in records:
        text = document["text"]
        fenced, code_lines = code_blocks(text)
        fences[document["source_id"]] = fenced

        def in_code(offset: int, text: str = text, code_lines: list[Span] = code_lines) -> bool:
            line = text.count("\n", 0, offset)
            return any(first <= line < stop for first, stop in code_lines)

        for name, grammar in GRAMMARS.items():
            if name == "v1" and document not in v1_loadable:
                continue
            titled = [s for s in grammar.sections(text) if s.title]
            titles_in_code[name] += sum(in_code(s.heading_start) for s in titled)

    print(f"corpus: {corpus} ({len(records)} files, {megabytes:.2f} MB)")
    print(f"grammar v1 loads {len(v1_loadable)}, refuses {len(records) - len(v1_loadable)}")
    markdown_empty = sum(not markdown_sections(d["text"]) for d in records)
    print(f"markdown grammar loads {len(records)}; files without a section: {markdown_empty}")
    print(
        f"section titles from a line inside a code block: grammar v1 {titles_in_code['v1']}, "
        f"markdown {titles_in_code['markdown']}"
    )
    v1_fences = sum(len(fences[d["source_id"]]) for d in v1_loadable)
    all_fences = sum(len(f) for f in fences.values())
    print()
    print("Fenced code blocks cut strictly inside by a heading-aware chunk boundary, and in")
    print("brackets the chunks that measure more than the size (v1 keeps a large paragraph")
    print("whole: its size is a target). 'fit' counts cut fences that fit in the size.")
    print(
        f"| size | v1 ({len(v1_loadable)} files, {v1_fences} fences) "
        f"| markdown (same files) | markdown (all {len(records)} files, {all_fences} fences) "
        "| markdown: cut fences that fit |"
    )
    print("|---:|---:|---:|---:|---:|")
    sizes = [make_config("heading-aware", n) for n in CHAR_SIZES]
    sizes += [make_config("heading-aware", max_tokens=n) for n in TOKEN_SIZES]
    for v1_config in sizes:
        markdown_config = v1_config.model_copy(update={"grammar": "markdown"})
        cells = []
        fitting = 0
        for documents, config in (
            (v1_loadable, v1_config),
            (v1_loadable, markdown_config),
            (records, markdown_config),
        ):
            cut = longer = 0
            for document in documents:
                chunks = document_chunks(document, config, NO_LIMITS)
                spans = [(c["start"], c["end"]) for c in chunks]
                found = cut_fences(fences[document["source_id"]], spans)
                cut += len(found)
                longer += sum(measure(config, c["text"]) > config.size() for c in chunks)
                if documents is records:
                    fitting += sum(
                        measure(config, document["text"][a:b]) <= config.size() for a, b in found
                    )
            cells.append(f"{cut} ({longer})")
        label = f"{v1_config.size()} {'tokens' if v1_config.unit else 'chars'}"
        print(f"| {label} | {' | '.join(cells)} | {fitting} |")

    texts = [d["text"] for d in records]
    config = make_config("heading-aware", max_tokens=BENCH_TOKENS, grammar="markdown")
    v1_config = make_config("heading-aware")
    v1_megabytes = sum(len(d["text"].encode()) for d in v1_loadable) / 1e6
    figures = {
        "markdown grammar (parse, sections, blocks)": (
            megabytes,
            best_seconds(lambda: [markdown_sections(t) for t in texts]),
        ),
        "cl100k_base count, whole documents": (
            megabytes,
            best_seconds(lambda: [count_tokens(t) for t in texts]),
        ),
        f"build: heading-aware, markdown, {BENCH_TOKENS} tokens": (
            megabytes,
            best_seconds(lambda: build_index(records, config, NO_LIMITS)),
        ),
        "build: heading-aware, v1, 220 chars (reference)": (
            v1_megabytes,
            best_seconds(lambda: build_index(v1_loadable, v1_config, NO_LIMITS)),
        ),
    }
    print()
    print(f"Throughput on the corpus (best of {REPEATS}):")
    for label, (size, seconds) in figures.items():
        print(f"  {label:<48} {size / seconds:6.2f} MB/s")

    # Linear time: one document of 1 and of 4 MiB cut from the corpus (4.0 is linear).
    joined = "\n\n".join(texts)
    joined *= 1 + 4 * MIB // len(joined)
    print()
    one, four = (
        best_seconds(partial(build_index, [record("big", joined[: n * MIB])], config, NO_LIMITS))
        for n in (1, 4)
    )
    print(f"  the same build of one document: 1 MiB in {one:.2f} s, 4 MiB / 1 MiB {four / one:.2f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CORPUS)
