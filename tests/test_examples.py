"""The scripts of examples/: each runs as the README says (a subprocess, PYTHONPATH=.) on
the bundled fixtures, and prints what it claims."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, f"examples/{script}", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": "."},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_compare_folder_reads_a_manifest_and_cuts_both_columns() -> None:
    out = run("compare_folder.py")
    assert out.splitlines()[0] == "20 documents, both columns at 800 characters"
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:4]}
    assert set(rows) == {"langchain-recursive", "heading-aware"}
    for chunks, _mean, largest, _mid, _code in rows.values():
        assert int(chunks) > 20 and int(largest) <= 800  # every chunk within the size
    assert re.fullmatch(
        r"boundaries: \d+ shared, \d+ only langchain-recursive, \d+ only heading-aware",
        out.splitlines()[4],
    )


def test_compare_folder_builds_a_manifest_for_plain_files(tmp_path: Path) -> None:
    for name in ("cors.md", "middleware.md"):
        shutil.copy(ROOT / "fixtures/markdown-docs/fastapi" / name, tmp_path / name)
    out = run("compare_folder.py", str(tmp_path), "--library", "semchunk", "--max-chars", "300")
    assert out.splitlines()[0] == "2 documents, both columns at 300 characters"
    assert out.splitlines()[2].split()[0] == "semchunk"
    assert all(int(line.split()[3]) <= 300 for line in out.splitlines()[2:4])


def test_evaluate_csv_reads_chunking_evaluations_csv_and_decides() -> None:
    out = run("evaluate_csv.py").splitlines()
    assert out[0] == "12 questions from questions.csv, BM25, top 5"
    assert [line.split()[0] for line in out[1:3]] == ["heading-aware@800", "fixed-char@800"]
    for line in out[1:3]:
        mean, low, high = (float(x) for x in re.findall(r"recall (\S+) \[(\S+), (\S+)\]", line)[0])
        assert 0 <= low <= mean <= high <= 1  # the mean within its 95 % interval
    assert out[3] in ("choice: heading-aware@800", "choice: fixed-char@800")
    assert "12 questions" in out[4]


def test_export_langchain_loads_every_chunk_and_checks_its_text(tmp_path: Path) -> None:
    out_file = tmp_path / "chunks.jsonl"
    out = run("export_langchain.py", "--out", str(out_file)).splitlines()
    count = len(out_file.read_text(encoding="utf-8").splitlines())
    assert out[0] == f"{count} LangChain Documents from 20 documents"
    assert out[1] == f"{count} of {count} texts equal their document's slice [start, end)"
    assert out[2].startswith("first: fastapi/background-tasks [")
