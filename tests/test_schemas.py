"""The checked-in JSON Schemas are current, and real artifacts satisfy them."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter

from explorer.checking.report import Report
from explorer.schema import json_schemas
from tests.conftest import MANIFEST, POLICY_SIZES, ROOT, golden_index, run_cli

SCHEMAS = ROOT / "schemas"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMAS / name).read_text("utf-8"))
    return data


def test_checked_in_schemas_are_generated_from_the_models() -> None:
    generated = json_schemas()
    assert sorted(p.name for p in SCHEMAS.glob("*.json")) == sorted(generated)
    for name, schema in generated.items():
        assert load(name) == schema, f"{name} is stale: run `make schemas`"


def test_fixture_manifest_satisfies_its_schema() -> None:
    jsonschema.validate(json.loads(MANIFEST.read_text("utf-8")), load("manifest.schema.json"))


@pytest.mark.parametrize("policy", list(POLICY_SIZES))
def test_recorded_indexes_satisfy_the_index_schema(policy: str) -> None:
    jsonschema.validate(golden_index(policy), load("index.schema.json"))


def test_report_satisfies_its_model_and_schema() -> None:
    report = run_cli("compare", MANIFEST).json()
    TypeAdapter(Report).validate_python(report)
    jsonschema.validate(report, load("report.schema.json"))


def test_schema_refuses_what_the_model_refuses() -> None:
    manifest = json.loads(MANIFEST.read_text("utf-8"))
    manifest["documents"][0]["title"] = None
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(manifest, load("manifest.schema.json"))
    manifest = json.loads(MANIFEST.read_text("utf-8"))
    manifest["span_checks"][0]["spans"][0] = {"label": "x", "start": 1}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(manifest, load("manifest.schema.json"))
