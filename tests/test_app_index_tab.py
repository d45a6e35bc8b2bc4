"""The persistent index tab after a deleting run: no warning of what was already done, and
receipts in words and numbers, not Python values."""

from __future__ import annotations

import pytest

from tests.conftest import open_tab
from tests.test_app import UPLOAD, start, table_rows
from tests.test_app_daily import PLAIN

pytestmark = pytest.mark.usefixtures("private_index")


def test_after_the_deleting_run_no_warning_stays_and_the_receipt_is_in_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EXPLORER_ALLOW_DELETIONS", "true")
    at = start()
    at.radio(key="source").set_value(UPLOAD).run()
    at.file_uploader(key="upload").set_value(PLAIN)
    open_tab(at, "Persistent index").run()
    at.button(key="ingest").click().run()
    at.file_uploader(key="upload").set_value(PLAIN[:2]).run()
    at.checkbox(key="whole_set").check().run()
    assert [w for w in at.warning if "will delete" in w.value]
    at.button(key="ingest").click().run()
    assert any("deleted 1" in s.value for s in at.success)
    assert not [w for w in at.warning if "will delete" in w.value]
    assert any("will delete nothing" in c.value for c in at.caption)
    receipts = next(t for t in at.table if "Cleared from" in t.value.columns)
    [receipt] = table_rows(receipts)
    assert receipt["Source"] == "c" and receipt["Tenant"] == "default"
    assert receipt["Removed"] == "1 stored version, 1 chunk"
    assert "(" not in receipt["Cleared from"] and "'" not in receipt["Cleared from"]


def test_each_served_document_has_a_delete_action_with_its_receipt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EXPLORER_ALLOW_DELETIONS", "true")
    at = start()
    at.radio(key="source").set_value(UPLOAD).run()
    at.file_uploader(key="upload").set_value(PLAIN)
    open_tab(at, "Persistent index").run()
    at.button(key="ingest").click().run()
    at.button(key="delete_default_b").click().run()  # asks first
    assert not [t for t in at.table if "Cleared from" in t.value.columns]
    at.button(key="delete_yes_default_b").click().run()
    assert not at.exception
    assert any("deleted 1" in s.value for s in at.success)
    served = next(t for t in at.table if "Revision" in t.value.columns)
    assert [row["Source"] for row in table_rows(served)] == ["a", "c"]
    receipts = next(t for t in at.table if "Cleared from" in t.value.columns)
    [receipt] = table_rows(receipts)
    assert (receipt["Source"], receipt["Removed"]) == ("b", "1 stored version, 1 chunk")


def test_no_delete_action_where_deletions_are_off() -> None:
    at = start()  # a shared index: deletions off unless the server allows them
    at.radio(key="source").set_value(UPLOAD).run()
    at.file_uploader(key="upload").set_value(PLAIN)
    open_tab(at, "Persistent index").run()
    at.button(key="ingest").click().run()
    assert not [b for b in at.button if b.key and b.key.startswith("delete_")]
