"""The recorded result of the chunking lab this project started from (its "seed",
docs/contract.md), reproduced exactly: every id, every count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GOLDEN, MANIFEST, POLICY_SIZES, SHARED_RECORDED, golden_index, run_cli

RECORDED = json.loads((GOLDEN / "aster_comparisons.json").read_text("utf-8"))["comparisons"]


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    result = run_cli("compare", MANIFEST)
    assert result.code == 0, result.err
    assert result.err == ""
    data: dict[str, Any] = json.loads(result.out)
    return data


@pytest.mark.parametrize("policy", list(POLICY_SIZES))
def test_indexes_identical_to_recorded(report: dict[str, Any], policy: str) -> None:
    assert report["indexes"][policy] == golden_index(policy)


def test_counts_together_and_containing_ids(report: dict[str, Any]) -> None:
    policies = report["policies"]
    assert [p["name"] for p in policies] == ["fixed-char", "paragraph", "heading-aware"]
    assert [p["chunk_count"] for p in policies] == [13, 8, 7]
    assert [p["checks"][0]["together"] for p in policies] == [False, False, True]
    for policy, recorded in zip(policies, RECORDED, strict=True):
        assert recorded["strategy"] == policy["name"]
        instruction, qualifier = policy["checks"][0]["spans"]
        assert [instruction["start"], instruction["end"]] == recorded["instruction_span"]
        assert [qualifier["start"], qualifier["end"]] == recorded["qualifier_span"]
        assert instruction["containing_chunk_ids"] == recorded["instruction_containing_chunk_ids"]
        assert policy["index_id"] == report["indexes"][policy["name"]]["index_id"]
        assert policy["chunk_count"] == recorded["chunk_count"]
        assert policy["checks"][0]["together"] == recorded["instruction_and_qualifier_share_chunk"]


def test_index_command_matches_each_golden_file(tmp_path: Path) -> None:
    for policy in POLICY_SIZES:
        out = tmp_path / f"{policy}.json"
        result = run_cli("index", MANIFEST, "--policy", policy, "--out", out)
        assert result.code == 0, result.err
        assert json.loads(out.read_text("utf-8")) == golden_index(policy)


def test_golden_files_are_the_shared_recording() -> None:
    if not SHARED_RECORDED.exists():
        pytest.skip("../shared is not beside this checkout")
    recorded = json.loads(SHARED_RECORDED.read_text("utf-8"))
    for policy in POLICY_SIZES:
        assert recorded["indexes"][policy] == golden_index(policy)
    assert recorded["comparisons"] == RECORDED


def test_fixture_documents_are_the_shared_bytes() -> None:
    shared_docs = SHARED_RECORDED.parent / "docs"
    if not shared_docs.exists():
        pytest.skip("../shared is not beside this checkout")
    for source in shared_docs.iterdir():
        assert (MANIFEST.parent / "docs" / source.name).read_bytes() == source.read_bytes()
