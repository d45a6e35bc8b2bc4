"""Markdown in tokens: the explorer's commands beside the chunkers people use, one run.

    PYTHONPATH=. .venv/bin/python scripts/bench_peers.py [CORPUS_DIR] [--repeats N]

On the real corpus (default ../shared/corpora/markdown-docs, 267 files), each contender
reads every file from disk and cuts it in 256 cl100k_base tokens:

- ours: `python -m explorer index MANIFEST --policy P --max-tokens 256 --grammar markdown
  --out FILE` for heading-aware, fixed-char and paragraph, run by `explorer.cli.main` in
  this process (the command whole: manifest, digests, grammar, chunks, ids, the file),
  and `validate FILE` of the heading-aware index, each with its default `--workers` (the
  machine's CPUs: forked processes cut the documents), and heading-aware with
  `--workers 1` (this process alone);
- chonkie's `RecursiveChunker(tokenizer=<cl100k_base>, chunk_size=256)`;
- LangChain's `MarkdownTextSplitter.from_tiktoken_encoder(encoding_name=<cl100k_base>,
  chunk_size=256)`;
- semchunk's `chunkerify(<cl100k_base count>, 256)(text, offsets=True)`;
- and two floors, what the build cannot do without: markdown-it.rs's blocks of every
  file, and riptoken's count of every file whole.

Start-up is taken out for everyone: imports, the tokenizer's loading and a first run
happen before any timing. The contenders take turns round after round (a busy machine
slows each alike) and each keeps its best round; CPU seconds (the workers' included) are
printed beside the wall seconds. The peers count with tiktoken (offline cl100k_base), as
their documentation shows; the explorer counts the same tokens with riptoken.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from explorer.chunking.tokens import encoding
from explorer.cli import main as explorer_main
from explorer.digests import sha_bytes
from explorer.jsonio import dump_json

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "corpora" / "markdown-docs"
SIZE = 256
# The goals of issue #26: each policy at least this many times each peer.
GOALS = {"chonkie RecursiveChunker": 1.5, "LangChain MarkdownTextSplitter": 3.0, "semchunk": 3.0}


class Timing(NamedTuple):
    seconds: float
    cpu: float


def corpus(folder: Path) -> tuple[list[Path], float]:
    paths = sorted(p for p in folder.rglob("*.md") if p.parent != folder)
    return paths, sum(p.stat().st_size for p in paths) / 1e6


def write_manifest(folder: Path, paths: list[Path], where: Path) -> Path:
    documents = [
        {
            "source_id": str(p.relative_to(folder)),
            "version": "1",
            "path": str(p.relative_to(folder)),
            "sha256": sha_bytes(p.read_bytes()),
        }
        for p in paths
    ]
    manifest = where / "manifest.json"
    # A copy beside the manifest (the explorer follows no link out of its folder).
    for path in paths:
        copy = where / path.relative_to(folder)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
    manifest.write_text(dump_json({"manifest_version": 1, "documents": documents}), "utf-8")
    return manifest


def ours(manifest: Path, policy: str, out: Path, *more: str) -> Callable[[], object]:
    # paragraph has no size: one chunk per block.
    sized = [] if policy == "paragraph" else ["--max-tokens", str(SIZE)]
    argv = [
        "index",
        str(manifest),
        "--policy",
        policy,
        *sized,
        "--grammar",
        "markdown",
        "--max-chunks",
        "10000000",
        "--out",
        str(out),
        *more,
    ]

    def run() -> object:
        code = explorer_main(argv)
        if code != 0:
            raise SystemExit(f"explorer {' '.join(argv)} exited {code}")
        return code

    return run


def validate(out: Path) -> Callable[[], object]:
    argv = ["validate", str(out), "--max-chunks", "10000000"]

    def run() -> object:
        with open(os.devnull, "w", encoding="utf-8") as sink:
            code = explorer_main(argv, stdout=sink)
        if code != 0:
            raise SystemExit(f"explorer {' '.join(argv)} exited {code}")
        return code

    return run


def peers(paths: list[Path]) -> dict[str, Callable[[], object]]:
    """Each peer as a user calls it on every file, read from disk as text. Each run
    builds its chunker afresh (cheap: the encoding is loaded once), so that no count
    memoized by an earlier run (semchunk's) is reused."""
    from chonkie import RecursiveChunker
    from langchain_text_splitters import MarkdownTextSplitter
    from semchunk.semchunk import chunkerify

    cl100k = encoding()

    def chonkie() -> Callable[[str], Any]:
        tokenizer: Any = cl100k  # chonkie takes a tiktoken Encoding as it is
        return RecursiveChunker(tokenizer=tokenizer, chunk_size=SIZE).chunk

    def langchain() -> Callable[[str], Any]:
        splitter = MarkdownTextSplitter.from_tiktoken_encoder(
            encoding_name=cl100k.name, chunk_size=SIZE, disallowed_special=()
        )
        return splitter.split_text

    def semchunk() -> Callable[[str], Any]:
        # A new counter each run: semchunk memoizes counts per counter, process-wide.
        def count(text: str) -> int:
            return len(cl100k.encode_ordinary(text))

        chunker = chunkerify(count, SIZE)
        return lambda text: chunker(text, offsets=True)

    def each(make: Callable[[], Callable[[str], Any]]) -> Callable[[], object]:
        def run() -> object:
            cut = make()
            return [cut(p.read_text("utf-8")) for p in paths]

        return run

    return {
        "chonkie RecursiveChunker": each(chonkie),
        "LangChain MarkdownTextSplitter": each(langchain),
        "semchunk": each(semchunk),
    }


def floors(paths: list[Path]) -> dict[str, Callable[[], object]]:
    """What the markdown build cannot do without, each on every file read from disk:
    markdown-it.rs's block tree and riptoken's count of the whole text."""
    from explorer.chunking.tokens import count_tokens
    from explorer.grammars.markdown import fast_blocks, line_starts

    def parse() -> object:
        return [fast_blocks(text, line_starts(text)) for text in texts(paths)]

    def count() -> object:
        return [count_tokens(text) for text in texts(paths)]

    return {"floor: parse (markdown-it.rs)": parse, "floor: count (riptoken)": count}


def texts(paths: list[Path]) -> list[str]:
    return [p.read_text("utf-8") for p in paths]


def cpu_seconds() -> float:
    """This process's CPU time and its ended children's (`--workers`' processes)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def rounds(contenders: dict[str, Callable[[], object]], repeats: int) -> dict[str, Timing]:
    """Every contender once per round, in turn; the best round of each."""
    best = {name: Timing(float("inf"), float("inf")) for name in contenders}
    for work in contenders.values():
        work()  # start-up and a first run, untimed
    for _ in range(repeats):
        for name, work in contenders.items():
            began, cpu = time.perf_counter(), cpu_seconds()
            work()
            seconds, used = time.perf_counter() - began, cpu_seconds() - cpu
            best[name] = Timing(min(best[name].seconds, seconds), min(best[name].cpu, used))
    return best


def main(argv: list[str]) -> int:
    repeats = 5
    if "--repeats" in argv:
        at = argv.index("--repeats")
        repeats = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2 :]
    folder = Path(argv[0]) if argv else DEFAULT
    if not folder.is_dir():
        print(f"error: io_error: no corpus folder at {folder}", file=sys.stderr)
        return 2
    paths, size = corpus(folder)
    with tempfile.TemporaryDirectory(prefix="explorer-peers-") as temporary:
        where = Path(temporary)
        manifest = write_manifest(folder, paths, where)
        contenders: dict[str, Callable[[], object]] = {}
        for policy in ("heading-aware", "fixed-char", "paragraph"):
            contenders[f"explorer index {policy}"] = ours(
                manifest, policy, where / f"{policy}.json"
            )
        # One process alone: what the app's columns and a one-CPU machine get.
        contenders["explorer index heading-aware -w 1"] = ours(
            manifest, "heading-aware", where / "one.json", "--workers", "1"
        )
        contenders["explorer validate (heading-aware)"] = validate(where / "heading-aware.json")
        contenders.update(peers(paths))
        contenders.update(floors(paths))
        # validate reads the index that the first contender writes.
        ours(manifest, "heading-aware", where / "heading-aware.json")()
        best = rounds(contenders, repeats)
    load = os.getloadavg()
    print(
        f"\n## Markdown in {SIZE} cl100k_base tokens: {len(paths)} files, {size:.2f} MB; "
        f"best of {repeats} interleaved rounds; {os.cpu_count()} CPUs, load average "
        f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
    )
    print(
        "ours: python -m explorer index MANIFEST --policy P --max-tokens 256 "
        "--grammar markdown --out FILE (in process, after a first run)"
    )
    print(f"{'contender':<38}{'seconds':>8}{'MB/s':>7}{'CPU s':>7}{'MB/CPU s':>9}")
    for name, timing in best.items():
        print(
            f"{name:<38}{timing.seconds:>8.3f}{size / timing.seconds:>7.1f}"
            f"{timing.cpu:>7.3f}{size / timing.cpu:>9.1f}"
        )
    print("\nours / peer (wall seconds; goal in brackets)")
    ours_names = [name for name in best if name.startswith(("explorer", "floor"))]
    print(f"{'':<38}" + "".join(f"{peer[:18]:>20}" for peer in GOALS))
    for name in ours_names:
        cells = []
        for peer, goal in GOALS.items():
            ratio = best[peer].seconds / best[name].seconds
            cells.append(f"{ratio:>6.2f}x [{goal}x] {'met' if ratio >= goal else 'NOT':>4}")
        print(f"{name:<38}" + "".join(f"{cell:>20}" for cell in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
