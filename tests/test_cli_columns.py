"""Every command names its columns one way: `--policy NAME` and that policy's sizes."""

from __future__ import annotations

import pytest

from explorer import Settings, load_documents, make_config, parse_manifest
from explorer.pipeline import compare
from explorer.sources.loading import DirectoryReader
from tests.conftest import MANIFEST, ManifestBuilder, run_cli

NINE_COLUMNS = [a for n in range(1, 10) for a in ("--policy", "fixed-char", "--max-chars", str(n))]


def fixture_report(settings: Settings) -> object:
    manifest = parse_manifest(MANIFEST.read_bytes())
    return compare(
        load_documents(manifest, DirectoryReader(MANIFEST.parent)), manifest.span_checks, settings
    )


def test_compare_takes_the_columns_named_in_order() -> None:
    result = run_cli(
        "compare", MANIFEST,
        "--policy", "heading-aware", "--max-chars", "500",
        "--policy", "fixed-char",
        "--policy", "heading-aware", "--max-chars", "100",
    )  # fmt: skip
    assert result.code == 0, result.err
    report = result.json()
    assert [p["name"] for p in report["policies"]] == [
        "heading-aware@500",
        "fixed-char",
        "heading-aware@100",
    ]
    assert list(report["indexes"]) == ["heading-aware@500", "fixed-char", "heading-aware@100"]
    expected = Settings(
        (
            make_config("heading-aware", 500),
            make_config("fixed-char"),
            make_config("heading-aware", 100),
        )
    )
    assert report == fixture_report(expected)


def test_a_size_before_its_policy_belongs_to_it() -> None:
    before = run_cli("index", MANIFEST, "--max-chars", "300", "--policy", "heading-aware")
    after = run_cli("index", MANIFEST, "--policy", "heading-aware", "--max-chars", "300")
    assert before.code == after.code == 0
    assert before.json() == after.json()
    assert before.json()["config"] == {"strategy": "heading-aware", "version": 1, "max_chars": 300}


def test_compare_without_policies_is_every_registered_policy_and_the_shorthands_set_sizes() -> None:
    result = run_cli("compare", MANIFEST, "--fixed-chars", "50", "--target-chars", "400")
    assert result.code == 0, result.err
    assert result.json() == fixture_report(
        Settings.from_sizes({"fixed-char": 50, "heading-aware": 400})
    )


@pytest.mark.parametrize(
    ("args", "detail"),
    [
        (["index", "--policy", "fixed-char", "--max-chars", "9", "--max-chars", "10"], "twice"),
        (["index", "--policy", "fixed-char", "--policy", "paragraph"], "one --policy"),
        (["compare", "--max-chars", "9"], "needs a --policy"),
        (["compare", "--policy", "fixed-char", "--fixed-chars", "9"], "not both"),
        (["compare", *["--policy", "paragraph"] * 2], "twice"),
        (["compare", *NINE_COLUMNS], "1 to 8"),
    ],
)  # fmt: skip
def test_column_options_that_make_no_sense_are_usage_errors(args: list[str], detail: str) -> None:
    result = run_cli(args[0], MANIFEST, *args[1:])
    assert result.code == 2
    assert result.err.startswith("error: usage: "), result.err
    assert detail in result.err


def test_documents_load_under_the_grammar_every_column_cuts_with(
    make_manifest: ManifestBuilder,
) -> None:
    manifest = make_manifest({"page.md": b"---\ntitle: T\n---\n\nIntro.\n\n# H\n\nBody.\n"})
    markdown = ("--policy", "heading-aware", "--grammar", "markdown")
    result = run_cli(
        "compare", manifest, *markdown, "--policy", "paragraph", "--grammar", "markdown"
    )
    assert result.code == 0, result.err
    assert result.json()["documents"][0]["status"] == "ok"
    # a column under grammar v1 needs a leading heading: reading none, it is refused, saying so
    mixed = run_cli("compare", manifest, *markdown, "--policy", "paragraph")
    assert mixed.code == 2
    assert "heading_required" in mixed.err and "the markdown grammar reads" in mixed.err
