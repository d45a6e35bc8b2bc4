"""Streamed output: the same values as the in-memory builders, and `--out` that is safe."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from explorer import POLICIES, build_index, load_documents, make_config
from explorer.chunking.index import write_index
from explorer.cli.files import _write_atomically
from explorer.errors import ErrorCode, ExplorerError
from explorer.pipeline import Settings, compare, write_comparison
from explorer.sources.loading import DirectoryReader, LoadResult
from explorer.sources.manifest import Manifest, parse_manifest
from tests.conftest import MANIFEST, ROOT, ManifestBuilder, run_cli, run_module

GOOD = b"# Title\n\nBody text.\n"
LIBRARY = ROOT / "fixtures" / "library" / "manifest.json"
# Text that a JSON writer must escape or keep exactly: quotes, controls, non-ASCII, emoji.
AWKWARD = (
    '# Ti"tle \\ é\n\nA line\twith "quotes", \\ and \x01\x1f controls.\n\n'
    "## 二 章\n\nCafé ☕ and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u2028 separators\u2029.\n\n" + "Long paragraph. " * 40 + "\n"
).encode()


def loaded(manifest: Path) -> tuple[Manifest, LoadResult]:
    parsed = parse_manifest(manifest.read_bytes())
    return parsed, load_documents(parsed, DirectoryReader(manifest.parent), 1024 * 1024)


def streamed(produce: Callable[[Callable[[bytes], object]], object]) -> bytes:
    pieces: list[bytes] = []
    produce(pieces.append)
    return b"".join(pieces)


@pytest.fixture
def awkward(make_manifest: ManifestBuilder) -> Path:
    return make_manifest({"b.md": AWKWARD, "a.md": GOOD, "c.md": b"# Only a heading\n"})


def manifests(awkward: Path) -> Iterator[Path]:
    yield MANIFEST
    yield LIBRARY
    yield awkward


@pytest.mark.parametrize("policy", list(POLICIES))
def test_streamed_index_loads_as_build_index(policy: str, awkward: Path) -> None:
    config = make_config(policy)
    for manifest in manifests(awkward):
        _, load = loaded(manifest)
        data = streamed(partial(write_index, load.documents, config))
        expected = build_index(load.documents, config)
        assert json.loads(data) == expected
        assert list(json.loads(data)) == list(expected)  # the same key order, index_id last


def test_streamed_index_reports_its_id_and_count(awkward: Path) -> None:
    _, load = loaded(awkward)
    config = make_config("fixed-char", 10)
    summary = write_index(load.documents, config, lambda piece: None)
    index = build_index(load.documents, config)
    assert summary == (index["index_id"], len(index["chunks"]))


def test_streamed_index_keeps_what_it_is_asked_to_keep() -> None:
    _, load = loaded(LIBRARY)
    config = make_config("paragraph")
    kept: list[Any] = []
    write_index(load.documents, config, lambda piece: None, lambda d, rs: kept.extend(rs))
    assert kept == build_index(load.documents, config)["chunks"]


def test_streamed_index_refuses_no_documents_before_writing() -> None:
    pieces: list[bytes] = []
    with pytest.raises(ExplorerError) as refused:
        write_index([], make_config("paragraph"), pieces.append)
    assert refused.value.code == ErrorCode.NO_DOCUMENTS
    assert pieces == []


def test_streamed_report_loads_as_compare(awkward: Path) -> None:
    for manifest in (MANIFEST, LIBRARY):
        parsed, load = loaded(manifest)
        for settings in (
            Settings.default(),
            Settings.from_sizes({"fixed-char": 33, "heading-aware": 500}),
            Settings((make_config("heading-aware", 100), make_config("heading-aware", 900))),
        ):
            data = streamed(partial(write_comparison, load, parsed.span_checks, settings))
            assert json.loads(data) == compare(load, parsed.span_checks, settings)


def test_index_command_output_is_validated_and_equals_build_index(
    awkward: Path, tmp_path: Path
) -> None:
    _, load = loaded(awkward)
    for policy in POLICIES:
        out = tmp_path / f"{policy}.json"
        assert run_cli("index", awkward, "--policy", policy, "--out", out).code == 0
        expected = build_index(load.documents, make_config(policy))
        assert json.loads(out.read_bytes()) == expected
        checked = run_cli("validate", out)
        assert (checked.code, checked.out) == (0, f"valid {expected['index_id']}\n")


def test_index_to_standard_output_of_a_real_process(awkward: Path) -> None:
    process = run_module("index", awkward, "--policy", "heading-aware")
    assert process.returncode == 0, process.stderr
    _, load = loaded(awkward)
    assert json.loads(process.stdout) == build_index(load.documents, make_config("heading-aware"))


def test_compare_command_equals_compare(tmp_path: Path) -> None:
    parsed, load = loaded(MANIFEST)
    printed = run_cli("compare", MANIFEST)
    assert printed.code == 0
    assert printed.json() == compare(load, parsed.span_checks)
    out = tmp_path / "report.json"
    assert run_cli("compare", MANIFEST, "--fixed-chars", "50", "--out", out).code == 0
    assert json.loads(out.read_bytes()) == compare(
        load, parsed.span_checks, Settings.from_sizes({"fixed-char": 50})
    )


def test_standard_output_with_a_binary_buffer_gets_the_bytes(awkward: Path) -> None:
    from explorer.cli import main

    raw = io.BytesIO()
    text = io.TextIOWrapper(raw, encoding="utf-8")
    assert main(["index", str(awkward), "--policy", "paragraph"], text, io.StringIO()) == 0
    text.flush()
    _, load = loaded(awkward)
    assert json.loads(raw.getvalue()) == build_index(load.documents, make_config("paragraph"))


# --out: regular files only, written whole or not at all, with the umask's permissions


def refused_out(manifest: Path, out: Path) -> str:
    result = run_cli("index", manifest, "--policy", "paragraph", "--out", out)
    assert result.code == 2, result.err
    assert result.err.startswith("error: io_error: "), result.err
    assert "Traceback" not in result.err
    return result.err


def no_temporary_files(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_out_refuses_a_character_device(make_manifest: ManifestBuilder, tmp_path: Path) -> None:
    manifest = make_manifest({"doc.md": GOOD})
    device = tmp_path / "null"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs privileges")
    assert "not a regular file" in refused_out(manifest, device)
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert no_temporary_files(tmp_path)


@pytest.mark.parametrize("target", ["/proc/self/fd/1", "/dev/null", "elsewhere.json"])
def test_out_refuses_a_symbolic_link(
    make_manifest: ManifestBuilder, tmp_path: Path, target: str
) -> None:
    manifest = make_manifest({"doc.md": GOOD})
    link = tmp_path / "stdout"
    link.symlink_to(target)
    assert "symbolic link" in refused_out(manifest, link)
    assert link.is_symlink() and os.readlink(link) == target
    assert not (tmp_path / "elsewhere.json").exists()
    assert no_temporary_files(tmp_path)


def test_out_refuses_a_pipe_and_a_folder(make_manifest: ManifestBuilder, tmp_path: Path) -> None:
    manifest = make_manifest({"doc.md": GOOD})
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "device, pipe or socket" in refused_out(manifest, fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    folder = tmp_path / "folder"
    folder.mkdir()
    assert "folder" in refused_out(manifest, folder)
    assert folder.is_dir()


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    previous = os.umask(0o022)

    def set_mask(mask: int) -> None:
        os.umask(mask)

    yield set_mask
    os.umask(previous)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_file_respects_the_umask(
    make_manifest: ManifestBuilder,
    tmp_path: Path,
    umask: Callable[[int], None],
    mask: int,
    mode: int,
) -> None:
    manifest = make_manifest({"doc.md": GOOD})
    umask(mask)
    for command, extra in (("index", ["--policy", "paragraph"]), ("compare", [])):
        out = tmp_path / f"{command}.json"
        assert run_cli(command, manifest, *extra, "--out", out).code == 0
        assert stat.S_IMODE(out.stat().st_mode) == mode


def test_a_replaced_file_keeps_its_permissions(
    make_manifest: ManifestBuilder, tmp_path: Path, umask: Callable[[int], None]
) -> None:
    manifest = make_manifest({"doc.md": GOOD})
    out = tmp_path / "index.json"
    out.write_text("old")
    out.chmod(0o640)
    assert run_cli("index", manifest, "--policy", "paragraph", "--out", out).code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert json.loads(out.read_bytes())["index_id"]


def test_a_failure_while_streaming_leaves_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "index.json"
    out.write_text("old")

    def fails_midway(write: Callable[[bytes], object]) -> None:
        write(b'{"partial": ')
        raise ExplorerError(ErrorCode.UNSUPPORTED_CHUNK_CONFIG, "too many chunks")

    with pytest.raises(ExplorerError):
        _write_atomically(out, fails_midway)
    assert out.read_text() == "old"
    assert no_temporary_files(tmp_path)
    with pytest.raises(ExplorerError):
        _write_atomically(tmp_path / "new.json", fails_midway)
    assert not (tmp_path / "new.json").exists()
    assert no_temporary_files(tmp_path)


# Chunking in worker processes: the same bytes as the plain loop


def test_a_reader_that_leaves_early_gets_no_traceback(make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest({"doc.md": b"# Title\n\n" + b"word " * 100_000 + b"\n"})
    process = subprocess.Popen(
        [sys.executable, "-m", "explorer", "index", str(manifest), "--policy", "paragraph"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(10) == b'{"schema_v'
    process.stdout.close()  # as `| head -c 10` does
    errors = process.stderr.read().decode()
    assert process.wait() == 2
    assert errors == (
        "error: io_error: standard output was closed before all the JSON was written\n"
    )


def test_the_commands_hold_the_limits_given(awkward: Path) -> None:
    for command, extra in (("index", ["--policy", "fixed-char"]), ("compare", [])):
        result = run_cli(command, awkward, *extra, "--max-document-chunks", "3")
        assert result.code == 2
        assert result.err.startswith("error: too_many_chunks: document "), result.err
