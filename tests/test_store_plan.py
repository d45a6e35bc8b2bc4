"""The plan of a run, without a database: what it adds, updates, skips, deletes, refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from explorer import ErrorCode, ExplorerError, MappingReader, load_documents, parse_manifest
from explorer.store import Outcome, Plan, plan_run
from explorer.store.plan import Served, check_scope
from tests.conftest import sha256_hex

FILES = {"a.md": b"# A\n\nalpha\n", "b.md": b"# B\n\nbeta\n", "c.md": b"   \n"}
CONFIG = "config-digest"


def plan(served: dict[tuple[str, str], Served], **manifest: Any) -> Plan:
    documents = [
        {
            "source_id": name[0],
            "version": "1",
            "path": name,
            "sha256": sha256_hex(data),
            "access_scope": "t",
        }
        for name, data in FILES.items()
    ]
    raw = {"manifest_version": 1, "documents": documents, **manifest}
    parsed = parse_manifest(json.dumps(raw).encode())
    load = load_documents(parsed, MappingReader(FILES))
    return plan_run(parsed, load, CONFIG, served)


def revision(source_id: str) -> str:
    empty = plan({})
    step = next(s for s in empty.steps if s.source_id == source_id)
    assert step.document is not None
    return step.document["document_revision"]


def test_a_new_index_adds_every_loaded_document_and_logs_the_failure() -> None:
    first = plan({})
    assert [(s.source_id, s.outcome) for s in first.steps] == [
        ("a", Outcome.ADDED),
        ("b", Outcome.ADDED),
    ]
    assert first.failed == 1
    assert [(s.tenant, s.source_id, s.status) for s in first.statuses] == [
        ("t", "a", "ok"),
        ("t", "b", "ok"),
        ("t", "c", "empty_document"),
    ]


def test_unchanged_updated_and_deleted_are_told_apart() -> None:
    served = {
        ("t", "a"): Served(revision("a"), CONFIG),  # the same revision and config
        ("t", "b"): Served(revision("b"), "another config"),
        ("t", "z"): Served("old", CONFIG),  # not listed
        ("u", "z"): Served("old", CONFIG),  # another tenant: never touched by `complete`
    }
    steps = plan(served, complete=True).steps
    assert [(s.tenant, s.source_id, s.outcome) for s in steps] == [
        ("t", "a", Outcome.UNCHANGED),
        ("t", "b", Outcome.UPDATED),
        ("t", "z", Outcome.DELETED),
    ]
    assert [s.document is None for s in steps] == [True, False, True]


def test_deleting_what_the_index_does_not_serve_is_refused() -> None:
    with pytest.raises(ExplorerError) as refused:
        plan({}, deleted=[{"source_id": "ghost", "access_scope": "t"}])
    assert refused.value.code is ErrorCode.DELETE_UNKNOWN_DOCUMENT


def test_a_scope_bounds_tenants_and_deletions() -> None:
    check_scope(plan({}), frozenset({"t"}), allow_deletions=False)
    with pytest.raises(ExplorerError) as other_tenant:
        check_scope(plan({}), frozenset({"u"}), allow_deletions=True)
    assert other_tenant.value.code is ErrorCode.NOT_ALLOWED
    assert other_tenant.value.detail == (
        "'a' belongs to tenant 't', which this session may not change"
    )
    deleting = plan({("t", "z"): Served("old", CONFIG)}, complete=True)
    check_scope(deleting, None, allow_deletions=True)
    with pytest.raises(ExplorerError) as deletion:
        check_scope(deleting, None, allow_deletions=False)
    assert deletion.value.code is ErrorCode.NOT_ALLOWED
    assert "deletions are not allowed here" in deletion.value.detail
