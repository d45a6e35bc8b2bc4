"""Markdown in tokens: the explorer's commands beside the chunkers people use, one run.

    PYTHONPATH=. .venv/bin/python scripts/bench_peers.py [CORPUS_DIR] [--repeats N]

On the real corpus (default ../shared/corpora/markdown-docs, 267 files), each contender
reads every file from disk and cuts it in 256 cl100k_base tokens:

- ours: `python -m explorer index MANIFEST --policy P --max-tokens 256 --grammar markdown
  --out FILE` for heading-aware, fixed-char and paragraph, run by `explorer.cli.main` in
  its process (the command whole: manifest, digests, grammar, chunks, ids, the file),
  and `validate FILE` of the heading-aware index, each with its default `--workers` (the
  machine's CPUs: forked processes cut the documents), and heading-aware with
  `--workers 1` (its process alone);
- chonkie's `RecursiveChunker(tokenizer=<cl100k_base>, chunk_size=256)`;
- LangChain's `MarkdownTextSplitter.from_tiktoken_encoder(encoding_name=<cl100k_base>,
  chunk_size=256)`;
- semchunk's `chunkerify(<cl100k_base count>, 256)(text, offsets=True)`;
- and two floors, what the build cannot do without: markdown-it.rs's blocks of every
  file, and riptoken's count of every file whole.

Each contender runs in a process of its own, which imports only what it needs (no
library's memory weighs on another, nor on the forks of `--workers`). Start-up is taken
out for everyone: imports, the tokenizer's loading and a first run happen before any
timing. The contenders take turns round after round (a busy machine
slows each alike) and each keeps its best round; CPU seconds (the workers' included) are
printed beside the wall seconds. The peers count with tiktoken (offline cl100k_base), as
their documentation shows; the explorer counts the same tokens with riptoken.
"""

from __future__ import annotations

import os
import subprocess
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
    """Each peer as a user calls it on every file, read from disk as text, its library
    imported at its first run (in its own serving process). Each run builds its chunker
    afresh (cheap: the encoding is loaded once), so that no count memoized by an earlier
    run (semchunk's) is reused."""

    def chonkie() -> Callable[[str], Any]:
        from chonkie import RecursiveChunker

        tokenizer: Any = encoding()  # chonkie takes a tiktoken Encoding as it is
        return RecursiveChunker(tokenizer=tokenizer, chunk_size=SIZE).chunk

    def langchain() -> Callable[[str], Any]:
        from langchain_text_splitters import MarkdownTextSplitter

        splitter = MarkdownTextSplitter.from_tiktoken_encoder(
            encoding_name=encoding().name, chunk_size=SIZE, disallowed_special=()
        )
        return splitter.split_text

    def semchunk() -> Callable[[str], Any]:
        from semchunk.semchunk import chunkerify

        cl100k = encoding()

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


def contenders(folder: Path, where: Path) -> dict[str, Callable[[], object]]:
    """Every contender by name, each a run over the corpus (built lazily: a serving
    process imports only its own contender's libraries)."""
    paths, _ = corpus(folder)
    manifest = where / "manifest.json"
    made: dict[str, Callable[[], object]] = {}
    for policy in ("heading-aware", "fixed-char", "paragraph"):
        made[f"explorer index {policy}"] = ours(manifest, policy, where / f"{policy}.json")
    # One process alone: what the app's columns and a one-CPU machine get.
    made["explorer index heading-aware -w 1"] = ours(
        manifest, "heading-aware", where / "one.json", "--workers", "1"
    )
    index = where / "validated.json"
    build = ours(manifest, "heading-aware", index)
    check = validate(index)

    def validated() -> object:
        if not index.exists():
            build()  # the index that validate reads, before its first run
        return check()

    made["explorer validate (heading-aware)"] = validated
    made.update(peers(paths))
    made.update(floors(paths))
    return made


def serve(name: str, folder: Path, where: Path) -> int:
    """A contender in a process of its own: a first run, untimed, then one timed run per
    line read, its wall and CPU seconds printed."""
    work = contenders(folder, where)[name]
    work()
    print("ready", flush=True)
    for _ in sys.stdin:
        began, cpu = time.perf_counter(), cpu_seconds()
        work()
        print(f"{time.perf_counter() - began} {cpu_seconds() - cpu}", flush=True)
    return 0


def rounds(names: list[str], folder: Path, where: Path, repeats: int) -> dict[str, Timing]:
    """Every contender in a process of its own (no library's memory weighs on another's,
    nor on the forks of `--workers`), started and run once before any timing; then each
    runs once per round, in turn; the best round of each."""
    best = {name: Timing(float("inf"), float("inf")) for name in names}
    servers = {
        name: subprocess.Popen(
            [sys.executable, __file__, "--serve", name, str(folder), str(where)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in names
    }
    try:
        for name, server in servers.items():
            assert server.stdout is not None
            if server.stdout.readline().strip() != "ready":
                raise SystemExit(f"{name} did not start")
        for _ in range(repeats):
            for name, server in servers.items():
                assert server.stdin is not None and server.stdout is not None
                server.stdin.write("go\n")
                server.stdin.flush()
                seconds, used = map(float, server.stdout.readline().split())
                best[name] = Timing(min(best[name].seconds, seconds), min(best[name].cpu, used))
    finally:
        for server in servers.values():
            assert server.stdin is not None
            server.stdin.close()
            server.wait()
    return best


def main(argv: list[str]) -> int:
    if argv[:1] == ["--serve"]:
        return serve(argv[1], Path(argv[2]), Path(argv[3]))
    repeats = 5
    if "--repeats" in argv:
        at = argv.index("--repeats")
        repeats = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2 :]
    folder = Path(argv[0]).resolve() if argv else DEFAULT
    if not folder.is_dir():
        print(f"error: io_error: no corpus folder at {folder}", file=sys.stderr)
        return 2
    paths, size = corpus(folder)
    with tempfile.TemporaryDirectory(prefix="explorer-peers-") as temporary:
        where = Path(temporary)
        write_manifest(folder, paths, where)
        names = list(contenders(folder, where))
        best = rounds(names, folder, where, repeats)
    load = os.getloadavg()
    print(
        f"\n## Markdown in {SIZE} cl100k_base tokens: {len(paths)} files, {size:.2f} MB; "
        f"best of {repeats} interleaved rounds; {os.cpu_count()} CPUs, load average "
        f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
    )
    print(
        "ours: python -m explorer index MANIFEST --policy P --max-tokens 256 "
        "--grammar markdown --out FILE (in a serving process, after a first run)"
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
