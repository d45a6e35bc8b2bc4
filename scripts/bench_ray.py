"""Throughput of `index --engine local` in one process (`--workers 1`), on this
machine's CPUs (`--workers`' default) and `--engine ray` on one corpus, the runs
interleaved (local, workers, ray, local…) so all see the same load on a shared machine:
each run is the command a person types, timed end to end (Ray's start included), with
its driver's peak RSS (VmHWM, polled) and the machine's 1-minute load average as it
started, and the outputs compared byte for byte.

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


# The local engine alone in one process, the same on this machine's CPUs (`--workers`,
# default), and Ray.
ENGINES = {
    "local": ["--engine", "local", "--workers", "1"],
    "workers": ["--engine", "local"],
    "ray": ["--engine", "ray"],
}


def run(
    manifest: Path, engine: str, out: Path, policy: list[str], address: str | None
) -> tuple[float, int]:
    """Seconds and the driver's peak RSS of one `index` run."""
    command = [sys.executable, "-m", "explorer", "index", str(manifest), *policy, *LIMITS]
    command += [*ENGINES[engine], "--out", str(out)]
    if engine == "ray" and address:
        command += ["--address", address]
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
    entries = json.loads(args.manifest.read_text("utf-8"))["documents"]
    size = sum(os.path.getsize(args.manifest.parent / e["path"]) for e in entries)
    where = args.address or "a new cluster per run"
    print(f"corpus: {len(entries):,} documents, {size / 1e6:,.1f} MB; ray at {where}")
    for engine, options in ENGINES.items():
        print(f"{engine}: index … {' '.join(options)}")
    for path, policy in PATHS.items():
        if args.path is None or path.startswith(args.path):
            compare(args, size, path, policy)


def compare(args: argparse.Namespace, size: int, path: str, policy: list[str]) -> None:
    outs = {engine: args.scratch / f"bench-{engine}.json" for engine in ENGINES}
    timings: dict[str, list[tuple[float, int]]] = {engine: [] for engine in ENGINES}
    print(f"\n## {path}: index {' '.join(policy)}")
    for number in range(args.runs):
        for engine in ENGINES:
            load = os.getloadavg()[0]
            seconds, peak = run(args.manifest, engine, outs[engine], policy, args.address)
            timings[engine].append((seconds, peak))
            print(
                f"run {number + 1} {engine:>5}: {seconds:7.2f} s  {size / seconds / 1e6:6.2f} MB/s"
                f"  driver peak RSS {peak / 2**20:6.0f} MiB  load {load:.2f}",
                flush=True,
            )
    same = len({_sha(out) for out in outs.values()}) == 1
    index_id = json.loads(outs["ray"].read_bytes()[-80:].split(b'"index_id":')[1][:-2])
    best = {engine: min(t for t, _ in runs) for engine, runs in timings.items()}
    print(f"index_id {index_id}; identical index files ({', '.join(ENGINES)}): {same}")
    for engine in ENGINES:
        peak = max(p for _, p in timings[engine])
        print(
            f"best of {args.runs} {engine:>5}: {best[engine]:7.2f} s  "
            f"{size / best[engine] / 1e6:6.2f} MB/s  driver peak RSS {peak / 2**20:.0f} MiB"
        )
    for engine in ("workers", "ray"):
        print(f"{engine} / local (one process) throughput: {best['local'] / best[engine]:.2f}x")
    for out in outs.values():
        out.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
