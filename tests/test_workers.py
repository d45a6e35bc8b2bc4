"""`--workers N`: documents cut in forked processes give the very bytes one process
writes, refuse as one process refuses, and leave no process behind."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from explorer.chunking import index as index_module
from explorer.chunking.config import ChunkConfig
from explorer.chunking.index import write_index
from explorer.chunking.policies import make_config
from explorer.errors import ErrorCode, ExplorerError
from explorer.limits import Limits
from explorer.sources.documents import DocumentRecord, document_record
from explorer.workers import IN_TURN, Failed, Spread

from .conftest import ROOT, ManifestBuilder, run_cli, run_module


def children() -> set[int]:
    """This process's children now, ended or not (Linux's /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        found.update(int(pid) for pid in (task / "children").read_text().split())
    return found


@pytest.fixture(autouse=True)
def no_children_left() -> Iterator[None]:
    """Every worker a test starts is gone (killed and reaped) when the test ends (a
    library's serving child, started by an earlier test, may stay)."""
    before = children()
    yield
    assert children() <= before


def squares(item: int) -> bytes:
    return bytes([item % 256]) * (item * 1000)  # results of many sizes, some past a pipe's


def test_results_come_in_order_whatever_the_workers() -> None:
    expected = [squares(item) for item in range(23)]
    for workers in (1, 2, 3, 8, 40):
        assert list(Spread(workers)(squares, 23)) == expected
    assert list(Spread(2)(squares, 0)) == []


def slow_pid(item: int) -> int:
    time.sleep(0.05)  # long enough that the other child, free, takes the next item
    return os.getpid()


def test_work_runs_in_other_processes() -> None:
    parent = os.getpid()
    pids = set(Spread(2)(slow_pid, 6))
    assert len(pids) == 2 and parent not in pids
    assert set(IN_TURN(lambda item: os.getpid(), 3)) == {parent}


def first_slow(item: int) -> int:
    time.sleep(0.5 if item == 0 else 0.01)
    return os.getpid()


def test_a_slow_item_holds_up_one_child_not_a_share_of_the_items() -> None:
    """A large document keeps one worker busy while the others take what follows (a
    fixed share each would leave the others idle at the end)."""
    pids = list(Spread(2)(first_slow, 10))
    slow = pids[0]
    assert pids.count(slow) <= 3, pids
    assert len(set(pids)) == 2


def refuse_at_five(item: int) -> int:
    if item == 5:
        raise ExplorerError(ErrorCode.TOO_MANY_CHUNKS, f"item {item} is too many")
    return item


def test_a_refusal_is_raised_in_order_after_the_results_before_it() -> None:
    taken: list[int] = []
    with pytest.raises(ExplorerError) as raised:
        for value in Spread(3)(refuse_at_five, 12):
            taken.append(value)
    assert raised.value.code is ErrorCode.TOO_MANY_CHUNKS
    assert raised.value.detail == "item 5 is too many"
    assert taken == [0, 1, 2, 3, 4]


class Odd(Exception):
    """Not one of Python's own: its pickling is not trusted across processes."""


def fail_at_two(item: int) -> int:
    if item == 2:
        raise KeyError("no such thing")
    if item == 3:
        raise Odd("an odd one")
    return item


def test_pythons_own_exceptions_come_back_as_they_were_and_others_as_failed() -> None:
    """As in one process, a `ValueError` (a lone surrogate) or a `KeyError` can be caught
    by its type; another exception is `Failed`, naming its type."""
    with pytest.raises(KeyError, match="no such thing"):
        list(Spread(2)(fail_at_two, 3))
    with pytest.raises(Failed, match=r"tests\.test_workers\.Odd: an odd one"):
        list(Spread(2)(lambda item: fail_at_two(item + 1 if item == 2 else item), 4))


def touch(item: int) -> int:
    (MARKS / f"started.{item}").touch()
    return item


MARKS = Path("/nonexistent")


def test_workers_are_at_work_before_the_first_result_is_asked_for(tmp_path: Path) -> None:
    """`write_index` starts its workers, then writes the documents: they cut meanwhile."""
    global MARKS
    MARKS = tmp_path
    results = Spread(2)(touch, 6)
    deadline = time.monotonic() + 5
    while len(list(tmp_path.iterdir())) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(list(tmp_path.iterdir())) == 6  # before a single result was taken
    assert list(results) == list(range(6))


def refuse_from_two(item: int) -> int:
    if item == 0:
        time.sleep(0.3)
    if item >= 2:
        raise ExplorerError(ErrorCode.TOO_MANY_CHUNKS, f"item {item}")
    return item


def test_results_sent_before_every_worker_stopped_are_still_taken() -> None:
    """Both workers stop at a refusal while a slow consumer is still at item 0: items 0
    and 1, then the refusal of item 2, as in one process."""
    taken: list[int] = []
    with pytest.raises(ExplorerError) as raised:
        for value in Spread(2)(refuse_from_two, 20):
            taken.append(value)
            time.sleep(0.1)  # a consumer that writes each result
    assert taken == [0, 1]
    assert (raised.value.code, raised.value.detail) == (ErrorCode.TOO_MANY_CHUNKS, "item 2")


def die_at_three(item: int) -> int:
    if item == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's out-of-memory killer does
    return item


def test_a_worker_that_dies_is_worker_lost() -> None:
    with pytest.raises(ExplorerError) as raised:
        list(Spread(2)(die_at_three, 8))
    assert raised.value.code is ErrorCode.WORKER_LOST
    assert "killed by signal 9" in raised.value.detail
    assert "--workers 1" in raised.value.detail


def test_a_worker_that_cannot_start_is_worker_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    real_fork = os.fork
    forks: list[int] = []

    def fork_once() -> int:  # the second fork fails, as at a process limit
        if forks:
            raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
        forks.append(real_fork())
        return forks[-1]

    monkeypatch.setattr(os, "fork", fork_once)
    with pytest.raises(ExplorerError) as raised:
        list(Spread(2)(squares, 8))
    assert raised.value.code is ErrorCode.WORKER_LOST
    assert "could not start (Resource temporarily unavailable)" in raised.value.detail


def test_closing_early_ends_the_workers() -> None:
    results = Spread(2)(squares, 50)
    assert next(results) == b""
    results.close()


def corpus(count: int = 40) -> list[DocumentRecord]:
    """Real Markdown pages (the repository's fixtures), each under its own source_id."""
    pages = sorted((ROOT / "fixtures" / "markdown-docs").rglob("*.md"))
    assert len(pages) >= 10
    return [
        document_record(
            {"source_id": f"page-{n:03}", "version": "1", "path": f"page-{n:03}.md"},
            page.read_text("utf-8"),
        )
        for n, page in enumerate(pages * (count // len(pages) + 1))
    ][:count]


CONFIGS = [
    make_config("heading-aware", max_tokens=256, grammar="markdown"),
    make_config("fixed-char", 300, overlap=40, grammar="markdown"),
    make_config("paragraph", grammar="markdown"),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.strategy)
def test_workers_write_the_bytes_one_process_writes(
    config: ChunkConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents = corpus()
    monkeypatch.setattr(index_module, "BATCH_CHARS", 4096)  # many batches of this corpus
    one: list[bytes] = []
    alone = write_index(documents, config, one.append)
    spread: list[bytes] = []
    assert write_index(documents, config, spread.append, spread=Spread(3)) == alone
    assert b"".join(spread) == b"".join(one)


def test_workers_refuse_as_one_process_does(monkeypatch: pytest.MonkeyPatch) -> None:
    documents = corpus()
    monkeypatch.setattr(index_module, "BATCH_CHARS", 4096)
    config = make_config("fixed-char", 50, grammar="markdown")
    limits = Limits(chunks_per_document=100_000, chunks_per_index=1_000)
    refusals = []
    for spread in (IN_TURN, Spread(2)):
        with pytest.raises(ExplorerError) as raised:
            write_index(documents, config, lambda piece: None, limits=limits, spread=spread)
        refusals.append((raised.value.code, raised.value.detail))
    assert refusals[0] == refusals[1]
    assert refusals[0][0] is ErrorCode.TOO_MANY_CHUNKS


def big_manifest(make_manifest: ManifestBuilder) -> Path:
    """Three batches of real Markdown: the fixtures' pages, over and over."""
    pages = sorted((ROOT / "fixtures" / "markdown-docs").rglob("*.md"))
    files: dict[str, bytes] = {}
    while sum(map(len, files.values())) < 3 * index_module.BATCH_CHARS:
        for page in pages:
            files[f"copy{len(files)}-{page.name}"] = page.read_bytes()
    return make_manifest(files)


def test_the_command_writes_the_same_file_with_any_workers(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = big_manifest(make_manifest)
    policy = ["--policy", "heading-aware", "--max-tokens", "256", "--grammar", "markdown"]
    written = []
    for workers in ("1", "2", "5"):
        out = tmp_path / f"w{workers}.json"
        ran = run_module("index", manifest, *policy, "--workers", workers, "--out", out)
        assert ran.returncode == 0, ran.stderr
        written.append(out.read_bytes())
    assert written[0] == written[1] == written[2]
    for workers in ("1", "2"):
        checked = run_cli("validate", tmp_path / "w2.json", "--workers", workers)
        assert checked.code == 0 and checked.out.startswith("valid "), checked.err


def test_validate_with_workers_still_names_what_was_edited(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = big_manifest(make_manifest)
    out = tmp_path / "index.json"
    assert run_cli("index", manifest, "--policy", "paragraph", "--grammar", "markdown",
                   "--out", out).code == 0  # fmt: skip
    data = out.read_bytes()
    last = data.rindex(b'"text":"') + len(b'"text":"')
    out.write_bytes(data[:last] + b"X" + data[last + 1 :])
    checked = run_cli("validate", out, "--workers", "2")
    assert checked.code == 1
    assert checked.err.startswith("error: invalid_chunk_index: chunks[")


@pytest.mark.parametrize("given", ["0", "-1", "x", "65"])
def test_workers_must_be_a_sensible_count(make_manifest: ManifestBuilder, given: str) -> None:
    ran = run_cli("index", make_manifest(), "--workers", given)
    assert ran.code == 2
    assert "--workers" in ran.err


def ended(pid: int) -> bool:
    """Gone, or dead and waiting to be reaped by whoever adopted it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_workers_end_with_a_command_that_is_killed(
    make_manifest: ManifestBuilder, tmp_path: Path, how: signal.Signals
) -> None:
    """A command killed outright runs none of its cleanup: the kernel ends its workers
    (PR_SET_PDEATHSIG), so none goes on cutting, nor holds the command's output open."""
    # Two documents of 12 MB: each keeps a worker busy for seconds.
    pages = sorted((ROOT / "fixtures" / "markdown-docs").rglob("*.md"))
    text = b"\n\n".join(page.read_bytes() for page in pages)
    manifest = make_manifest({f"big{n}.md": text * 42 for n in range(2)})
    policy = ["--policy", "heading-aware", "--max-tokens", "64", "--grammar", "markdown"]
    out = ["--out", str(tmp_path / "index.json"), "--max-document-bytes", str(32 * 2**20)]
    command = [sys.executable, "-m", "explorer", "index", str(manifest), *policy, *out]
    command += ["--workers", "2", "--max-document-chunks", "1000000"]
    running = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    workers: set[int] = set()
    deadline = time.monotonic() + 30
    while len(workers) < 2 and running.poll() is None and time.monotonic() < deadline:
        tasks = Path(f"/proc/{running.pid}/task")
        with suppress(OSError):
            for task in tasks.iterdir():
                workers.update(int(pid) for pid in (task / "children").read_text().split())
        time.sleep(0.005)
    assert len(workers) == 2, "the command ended before its workers were seen"
    running.send_signal(how)
    running.wait(timeout=30)
    deadline = time.monotonic() + 1
    while not all(map(ended, workers)) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert all(map(ended, workers))
    running.communicate(timeout=1)  # its output closed: no worker holds it open


def test_ray_takes_no_workers(make_manifest: ManifestBuilder) -> None:
    ran = run_cli("index", make_manifest(), "--engine", "ray", "--workers", "2")
    assert ran.code == 2
    assert ran.err.startswith("error: usage: --workers is for --engine local")
