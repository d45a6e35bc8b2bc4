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
--head`) instead of starting one each; when nothing answers there, the Ray figure is
skipped with a note (`make bench` runs the fast path so, docs/performance.md#ray). Each
run also prints the CPU seconds it took (the command's, its `--workers`' and, on a
cluster running on this machine, its Ray workers'), which the machine's load changes
far less than the wall time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
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


TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[str, int, float]:
    """A process's name, parent and CPU seconds so far (user and system)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (
        text[text.index("(") + 1 : text.rindex(")")],
        int(fields[1]),
        (int(fields[11]) + int(fields[12])) / TICKS,
    )


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def raylets(address: str | None) -> set[int]:
    """This machine's raylets of the cluster at `address` (its GCS port), whose children
    are the cluster's workers: none when the cluster runs elsewhere."""
    if not address:
        return set()
    port = address.rpartition(":")[2]
    found = set()
    for pid in _pids():
        try:
            arguments = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if arguments[0].endswith(b"/raylet") and any(
            a.startswith(b"--gcs-address=") and a.endswith(b":" + port.encode()) for a in arguments
        ):
            found.add(pid)
    return found


def workers_cpu(parents: set[int], before: set[int], seen: dict[int, float]) -> None:
    """The CPU seconds so far of each Ray worker (`ray::…`) of `parents` not running
    `before` the run (its job's workers), kept in `seen` (a worker's last reading)."""
    for pid in _pids():
        if pid in before:
            continue
        try:
            name, parent, cpu = _stat(pid)
        except (OSError, ValueError):
            continue
        if parent in parents and name.startswith("ray::"):
            seen[pid] = cpu


# The local engine alone in one process, the same on this machine's CPUs (`--workers`,
# default), and Ray.
ENGINES = {
    "local": ["--engine", "local", "--workers", "1"],
    "workers": ["--engine", "local"],
    "ray": ["--engine", "ray"],
}


def run(
    manifest: Path, engine: str, out: Path, policy: list[str], address: str | None
) -> tuple[float, int, float]:
    """Seconds, the driver's peak RSS and the CPU seconds of one `index` run: the
    command's, its children's (`--workers`' processes) and, on a cluster whose raylet
    runs on this machine, its job's workers' (read every 50 ms until the command
    exits, so a worker's last instants may be missed)."""
    command = [sys.executable, "-m", "explorer", "index", str(manifest), *policy, *LIMITS]
    command += [*ENGINES[engine], "--out", str(out)]
    if engine == "ray" and address:
        command += ["--address", address]
    parents = raylets(address) if engine == "ray" else set()
    before = set(_pids())
    workers: dict[int, float] = {}
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, env=ENVIRONMENT)
    peak = 0
    while True:
        peak = max(peak, _peak_rss(process.pid))
        workers_cpu(parents, before, workers)
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, with its rusage
    if process.returncode != 0:
        assert process.stderr is not None
        raise SystemExit(f"{engine} failed: {process.stderr.read().decode()[-2000:]}")
    return seconds, peak, usage.ru_utime + usage.ru_stime + sum(workers.values())


def reachable(address: str) -> bool:
    """Whether `HOST:PORT` takes a TCP connection (a running cluster's head)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), 5).close()
    except (OSError, ValueError):
        return False
    return True


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
    engines = list(ENGINES)
    if args.address and not reachable(args.address):
        print(
            f"ray: skipped, no Ray cluster answers at {args.address}; start one with "
            f"RAY_AUTH_MODE=disabled .venv/bin/ray start --head --port "
            f"{args.address.rpartition(':')[2]} --num-cpus {os.cpu_count()}"
        )
        engines.remove("ray")
    entries = json.loads(args.manifest.read_text("utf-8"))["documents"]
    size = sum(os.path.getsize(args.manifest.parent / e["path"]) for e in entries)
    where = args.address or "a new cluster per run"
    print(f"corpus: {len(entries):,} documents, {size / 1e6:,.1f} MB; ray at {where}")
    for engine in engines:
        print(f"{engine}: index … {' '.join(ENGINES[engine])}")
    for path, policy in PATHS.items():
        if args.path is None or path.startswith(args.path):
            compare(args, size, path, policy, engines)


def compare(
    args: argparse.Namespace, size: int, path: str, policy: list[str], engines: list[str]
) -> None:
    outs = {engine: args.scratch / f"bench-{engine}.json" for engine in engines}
    timings: dict[str, list[tuple[float, int, float]]] = {engine: [] for engine in engines}
    print(f"\n## {path}: index {' '.join(policy)}")
    for number in range(args.runs):
        for engine in engines:
            load = os.getloadavg()[0]
            seconds, peak, cpu = run(args.manifest, engine, outs[engine], policy, args.address)
            timings[engine].append((seconds, peak, cpu))
            print(
                f"run {number + 1} {engine:>7}: {seconds:7.2f} s  {size / seconds / 1e6:6.2f} MB/s"
                f"  CPU {cpu:5.2f} s  driver peak RSS {peak / 2**20:6.0f} MiB  load {load:.2f}",
                flush=True,
            )
    same = len({_sha(out) for out in outs.values()}) == 1
    last = outs[engines[-1]].read_bytes()[-80:]
    index_id = json.loads(last.split(b'"index_id":')[1][:-2])
    best = {engine: min(t for t, _, _ in runs) for engine, runs in timings.items()}
    print(f"index_id {index_id}; identical index files ({', '.join(engines)}): {same}")
    for engine in engines:
        peak = max(p for _, p, _ in timings[engine])
        cpu = min(c for _, _, c in timings[engine])
        print(
            f"best of {args.runs} {engine:>7}: {best[engine]:7.2f} s  "
            f"{size / best[engine] / 1e6:6.2f} MB/s  CPU {cpu:.2f} s  "
            f"driver peak RSS {peak / 2**20:.0f} MiB"
        )
    for engine in engines[1:]:
        print(f"{engine} / local (one process) throughput: {best['local'] / best[engine]:.2f}x")
    for out in outs.values():
        out.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
