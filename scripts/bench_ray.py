"""Throughput of `index --engine local` against `--engine ray` on one corpus, the runs
interleaved (local, ray, local, ray…) so both see the same load on a shared machine:
each run is the command a person types, timed end to end (Ray's start included), with
its driver's peak RSS (VmHWM, polled) and the machine's 1-minute load average as it
started, and the two engines' outputs compared byte for byte. The local engine runs in
one process (`--workers 1` where `index` has that option).

    python scripts/make_corpus.py /tmp/corpus --size-gb 0.3
    python scripts/bench_ray.py /tmp/corpus/manifest.json --runs 3 [--address HOST:PORT]

Both paths: the fast one (grammar v1, heading-aware 220 characters, the seed's
configuration) and the markdown grammar's (heading-aware 1200 characters); `--path`
times one of them. With `--address`, the ray runs join that running cluster (`ray start
--head`) instead of starting one each.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = {
    "fast (v1, heading-aware 220)": ["--policy", "heading-aware", "--max-chars", "220"],
    "markdown (heading-aware 1200)": [
        *("--policy", "heading-aware", "--max-chars", "1200", "--grammar", "markdown"),
    ],
}
LIMITS = ["--max-total-bytes", str(4 * 2**30), "--max-chunks", "10000000"]
# As a person's shell runs them: Python keeps compiled modules (this sandbox's
# PYTHONDONTWRITEBYTECODE would make the driver and every Ray worker compile afresh).
ENVIRONMENT = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _peak_rss(pid: int) -> int:
    """The process's peak resident set so far, in bytes (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _one_process() -> list[str]:
    """What makes the local engine one process: `--workers 1` where `index` has it."""
    command = [sys.executable, "-m", "explorer", "index", "--help"]
    listed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    return ["--workers", "1"] if re.search(r"[\s\[]--workers\b", listed.stdout) else []


def run(
    manifest: Path,
    engine: str,
    out: Path,
    policy: list[str],
    address: str | None,
    one_process: list[str],
) -> tuple[float, int]:
    """Seconds and the driver's peak RSS of one `index` run."""
    command = [sys.executable, "-m", "explorer", "index", str(manifest), *policy, *LIMITS]
    command += ["--engine", engine, "--out", str(out)]
    if engine == "ray" and address:
        command += ["--address", address]
    if engine == "local":
        command += one_process
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, env=ENVIRONMENT)
    peak = 0
    while process.poll() is None:
        peak = max(peak, _peak_rss(process.pid))
        time.sleep(0.1)
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        assert process.stderr is not None
        raise SystemExit(f"{engine} failed: {process.stderr.read().decode()[-2000:]}")
    return seconds, peak


def _sha(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while piece := handle.read(2**20):
            digest.update(piece)
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifest", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scratch", type=Path, default=Path("/tmp"))
    parser.add_argument("--address", help="a running Ray cluster to join (ray start --head)")
    parser.add_argument("--path", choices=["fast", "markdown"], help="time this path only")
    args = parser.parse_args()
    one_process = _one_process()
    entries = json.loads(args.manifest.read_text("utf-8"))["documents"]
    size = sum(os.path.getsize(args.manifest.parent / e["path"]) for e in entries)
    where = args.address or "a new cluster per run"
    print(f"corpus: {len(entries):,} documents, {size / 1e6:,.1f} MB; ray at {where}")
    print(f"local: index … --engine local {' '.join(one_process)}".rstrip())
    for path, policy in PATHS.items():
        if args.path is None or path.startswith(args.path):
            compare(args, size, path, policy, one_process)


def compare(
    args: argparse.Namespace, size: int, path: str, policy: list[str], one_process: list[str]
) -> None:
    outs = {engine: args.scratch / f"bench-{engine}.json" for engine in ("local", "ray")}
    timings: dict[str, list[tuple[float, int]]] = {"local": [], "ray": []}
    print(f"\n## {path}: index {' '.join(policy)}")
    for number in range(args.runs):
        for engine in ("local", "ray"):
            load = os.getloadavg()[0]
            seconds, peak = run(
                args.manifest, engine, outs[engine], policy, args.address, one_process
            )
            timings[engine].append((seconds, peak))
            print(
                f"run {number + 1} {engine:>5}: {seconds:7.2f} s  {size / seconds / 1e6:6.2f} MB/s"
                f"  driver peak RSS {peak / 2**20:6.0f} MiB  load {load:.2f}",
                flush=True,
            )
    same = _sha(outs["local"]) == _sha(outs["ray"])
    index_id = json.loads(outs["ray"].read_bytes()[-80:].split(b'"index_id":')[1][:-2])
    best = {engine: min(t for t, _ in runs) for engine, runs in timings.items()}
    print(f"index_id {index_id}; identical index files (local, ray): {same}")
    for engine in ("local", "ray"):
        peak = max(p for _, p in timings[engine])
        print(
            f"best of {args.runs} {engine:>5}: {best[engine]:7.2f} s  "
            f"{size / best[engine] / 1e6:6.2f} MB/s  driver peak RSS {peak / 2**20:.0f} MiB"
        )
    print(f"ray / local throughput: {best['local'] / best['ray']:.2f}x")
    for out in outs.values():
        out.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
