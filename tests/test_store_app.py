"""The Persistent index tab is safe by default: a scratch index per session; a shared
index only by server setting, with its tenants and deletions bounded by settings too."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from explorer import ErrorCode, ExplorerError
from explorer.store import SearchMode
from explorer.store.scratch import require_room
from tests.conftest import ROOT, open_tab
from tests.test_app import errors as shown_errors
from ui import index_tab
from ui.index_tab import IndexSettings, index_settings

APP = str(ROOT / "app.py")
LIBRARY = ROOT / "fixtures" / "library"


def library_upload(at: AppTest, manifest: str) -> None:
    files = [("manifest.json", (LIBRARY / manifest).read_bytes(), "application/json")]
    files += [
        (p.name, p.read_bytes(), "text/markdown") for p in sorted((LIBRARY / "docs").iterdir())
    ]
    at.radio(key="source").set_value("Upload files").run()
    at.file_uploader(key="upload").set_value(files).run()


def start() -> AppTest:
    """The app with its Persistent index tab open."""
    return open_tab(AppTest.from_file(APP, default_timeout=60), "Persistent index").run()


def unset_index_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EXPLORER_DB", "EXPLORER_TENANTS", "EXPLORER_ALLOW_DELETIONS"):
        monkeypatch.delenv(name, raising=False)


def start_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tenants: str) -> AppTest:
    """A session on the server's shared index, which may change `tenants`."""
    monkeypatch.setenv("EXPLORER_DB", str(tmp_path / "shared.db"))
    monkeypatch.setenv("EXPLORER_TENANTS", tenants)
    return start()


def ingest(at: AppTest, manifest: str | None = None) -> None:
    """Ingest the library's `manifest`, uploaded first (None: the documents shown now)."""
    if manifest is not None:
        library_upload(at, manifest)
    at.button(key="ingest").click().run()


def test_settings_default_to_a_scratch_index_with_every_power_inside_it() -> None:
    assert index_settings({}) == IndexSettings(None, None, True)


def test_a_shared_index_opens_only_the_default_tenant_and_no_deletions() -> None:
    shared = index_settings({"EXPLORER_DB": "/srv/index.db"})
    assert shared == IndexSettings(Path("/srv/index.db"), frozenset({"default"}), False)
    opened = index_settings(
        {
            "EXPLORER_DB": "/srv/index.db",
            "EXPLORER_TENANTS": "acme, beta",
            "EXPLORER_ALLOW_DELETIONS": "true",
        }
    )
    assert opened == IndexSettings(Path("/srv/index.db"), frozenset({"acme", "beta"}), True)
    every = index_settings({"EXPLORER_DB": "/srv/index.db", "EXPLORER_TENANTS": "*"})
    assert every.tenants is None
    with pytest.raises(ExplorerError) as refused:
        index_settings({"EXPLORER_DB": "x.db", "EXPLORER_ALLOW_DELETIONS": "maybe"})
    assert refused.value.code is ErrorCode.USAGE


def test_each_session_gets_its_own_scratch_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unset_index_settings(monkeypatch)
    monkeypatch.setattr(index_tab, "SCRATCH_ROOT", tmp_path / "scratch")
    (tmp_path / "scratch").mkdir(0o700)
    stale, fresh = tmp_path / "scratch" / "session-stale", tmp_path / "scratch" / "session-fresh"
    other = tmp_path / "scratch" / "not-a-session"
    for folder in (stale, fresh, other):
        folder.mkdir()
    day_old = time.time() - 25 * 3600
    for folder in (stale, other):
        os.utime(folder, (day_old, day_old))
    first, second = start(), start()
    assert "scratch_index" not in first.session_state  # a page view makes no folder
    ingest(first)
    assert not stale.exists() and fresh.exists()  # untouched for a day: removed
    assert other.exists()  # not one this program made
    assert first.success[0].value.startswith("run 1: added 2")
    ingest(second)
    assert second.success[0].value.startswith("run 1: added 2")  # not run 2: its own index
    paths = {Path(at.session_state["scratch_index"]) for at in (first, second)}
    assert len(paths) == 2 and all(path.is_file() for path in paths)
    assert all(path.parent.parent == tmp_path / "scratch" for path in paths)
    assert not any(str(path) in " ".join(m.value for m in first.markdown) for path in paths)


def test_a_scratch_run_stops_at_the_cap_and_keeps_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #37 item 24: the cap holds during a run, and the refusal does not send the
    visitor to a new tab for another index."""
    unset_index_settings(monkeypatch)
    root = tmp_path / "scratch"
    root.mkdir(0o700)
    monkeypatch.setattr(index_tab, "SCRATCH_ROOT", root)
    cap = 250_000  # an empty index and its WAL: about 130 KB; each document ~50 KB more

    def small(scratch: Path, session: Path) -> None:
        require_room(scratch, session, session_bytes=cap)

    monkeypatch.setattr(index_tab, "require_room", small)
    at = start()
    ingest(at, "manifest.json")  # the library: six documents
    [error] = shown_errors(at)
    assert error.startswith("**scratch_full**") and "The run stopped there" in error
    assert "new tab" not in error
    [run] = table_with(at, "Started").to_dict("records")
    added = int(run["Added"])
    assert 0 < added < 6 and int(run["Failed"]) == 6 - added
    session = Path(at.session_state["scratch_index"]).parent
    assert sum(p.stat().st_size for p in session.iterdir()) < cap + 200_000


def test_a_shared_index_shows_and_changes_only_the_allowed_tenants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = start_shared(tmp_path, monkeypatch, "default")
    ingest(at)  # the bundled fixture: tenant default
    assert at.success[0].value.startswith("run 1: added 2")
    ingest(at, "manifest.json")  # tenant acme
    assert any("not_allowed" in e and "belongs to tenant 'acme'" in e for e in shown_errors(at)), (
        shown_errors(at)
    )
    assert at.selectbox(key="tenant").options == ["default"]


def test_deletions_are_refused_unless_the_server_allows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = start_shared(tmp_path, monkeypatch, "acme")
    ingest(at, "manifest.json")
    assert at.success[0].value.startswith("run 1: added 6")
    ingest(at, "manifest-run2.json")
    assert any(
        "not_allowed" in e and "deletions are not allowed here" in e for e in shown_errors(at)
    ), shown_errors(at)


def test_the_secrets_file_can_name_the_shared_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unset_index_settings(monkeypatch)
    shared = tmp_path / "from-secrets.db"
    at = open_tab(AppTest.from_file(APP, default_timeout=60), "Persistent index")
    at.secrets["EXPLORER_DB"] = str(shared)
    at.run()
    ingest(at)
    assert at.success[0].value.startswith("run 1: added 2")
    assert shared.is_file()
    assert "scratch_index" not in at.session_state


def table_with(at: AppTest, column: str) -> Any:
    """The one table on the page that has `column`, each cell as it reads (the tab writes
    cells as Markdown with every punctuation mark escaped, and ':' as a reference)."""
    [table] = [t.value for t in at.table if column in t.value.columns]
    return table.map(lambda cell: re.sub(r"\\(.)", r"\1", cell).replace("&#58;", ":"))


def test_the_tab_shows_vectors_per_run_the_search_mode_and_citations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = start_shared(tmp_path, monkeypatch, "acme")
    ingest(at, "manifest.json")
    assert any(c.value.startswith("vectors: computed 10, reused 2 (wordllama-") for c in at.caption)
    ingest(at)
    runs = table_with(at, "Vectors")
    assert list(runs["Vectors"]) == ["10 new, 2 reused", "0 new, 0 reused"]
    at.radio(key="search_mode").set_value(SearchMode.VECTOR).run()
    at.text_input(key="query").set_value("cash reimbursement timeframe").run()
    hits = table_with(at, "Section")
    first = hits.iloc[0]
    assert (first["Source"], first["Version"], first["Section"]) == (
        "refund-policy",
        "1",
        "Eligibility",
    )
    assert first["Offsets"].startswith("[") and first["Lines"] and float(first["Score"]) > 0
    at.radio(key="search_mode").set_value(SearchMode.BM25).run()
    assert any("No active chunk" in info.value for info in at.info)


def test_a_session_limited_to_a_tenant_sees_only_its_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #37 item 26: another tenant's run totals never reach the history table."""
    acme = start_shared(tmp_path, monkeypatch, "acme")
    ingest(acme, "manifest.json")  # run 1: six documents of acme
    assert acme.success[0].value.startswith("run 1: added 6")
    visitor = start_shared(tmp_path, monkeypatch, "default")
    ingest(visitor)  # run 2: the bundled fixture, tenant default
    assert visitor.success[0].value.startswith("run 2: added 2")
    runs = table_with(visitor, "Started")
    assert list(runs["Run"]) == ["2"]
    assert list(runs["Documents"]) == ["0 → 2"]  # not 6 → 8: acme's documents uncounted
    every = start_shared(tmp_path, monkeypatch, "*")
    assert list(table_with(every, "Started")["Run"]) == ["1", "2"]


def test_the_tab_lists_what_each_tenant_is_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = start_shared(tmp_path, monkeypatch, "acme")
    ingest(at, "manifest.json")
    served = table_with(at, "Revision")
    assert list(served["Source"]) == sorted(served["Source"])
    assert "refund-policy" in list(served["Source"])
    assert set(served["Run"]) == {"1"} and set(served["Version"]) >= {"1"}
    assert all(embedder.startswith("wordllama-") for embedder in served["Embedder"])
