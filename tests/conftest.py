"""Shared helpers: paths, an in-process CLI runner, and a manifest builder."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from explorer.cli import main
from ui.common import TAB, TABS

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "aster"
MANIFEST = FIXTURE / "manifest.json"
GOLDEN = ROOT / "tests" / "golden"
SHARED_RECORDED = ROOT.parent / "shared" / "reference" / "aster" / "recorded-result.json"
POLICY_SIZES = {"fixed-char": "80", "paragraph": "none", "heading-aware": "220"}


def golden_index(policy: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (GOLDEN / f"aster_{policy}_{POLICY_SIZES[policy]}.json").read_text("utf-8")
    )
    return data


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run_cli(*args: str | Path) -> CliResult:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in args], stdout=out, stderr=err)
    return CliResult(code, out.getvalue(), err.getvalue())


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run_module(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`python -m explorer …` as a real process, the way a person runs it."""
    return subprocess.run(
        [sys.executable, "-m", "explorer", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def zipped(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


ManifestBuilder = Callable[..., Path]


@pytest.fixture
def make_manifest(tmp_path: Path) -> ManifestBuilder:
    """Write documents and a manifest whose digests match, unless told otherwise.

    `files` maps a manifest path to bytes; `documents` overrides entries (by position);
    `raw` replaces the manifest JSON entirely.
    """

    def build(
        files: dict[str, bytes] | None = None,
        *,
        documents: list[dict[str, Any]] | None = None,
        span_checks: list[dict[str, Any]] | None = None,
        raw: bytes | None = None,
    ) -> Path:
        files = files if files is not None else {"doc.md": b"# Title\n\nBody text.\n"}
        for name, data in files.items():
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        entries = documents or [
            {
                "source_id": Path(name).stem,
                "version": "1.0",
                "path": name,
                "sha256": sha256_hex(data),
            }
            for name, data in files.items()
        ]
        manifest: dict[str, Any] = {"manifest_version": 1, "documents": entries}
        if span_checks is not None:
            manifest["span_checks"] = span_checks
        path = tmp_path / "manifest.json"
        path.write_bytes(raw if raw is not None else json.dumps(manifest).encode())
        return path

    return build


@pytest.fixture
def private_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's persistent index is its own, never the working tree's (modules that
    start the app use it for every test: `pytestmark = usefixtures("private_index")`)."""
    db = tmp_path / "index.db"
    monkeypatch.setenv("EXPLORER_DB", str(db))
    return db


def open_tab(at: AppTest, label: str) -> AppTest:
    """Open the tab `label` for the next run, as a click on it does: the app runs the
    Persistent index and Retrieval tabs only while open."""
    assert label in TABS
    at.session_state[TAB] = label
    return at
