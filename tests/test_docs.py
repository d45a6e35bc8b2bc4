"""The documentation: docs/cli.md is what the parser gives now, and every relative link and
anchor of README.md and docs/*.md leads somewhere (as a code host and MkDocs resolve it)."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from explorer import cli
from explorer.errors import ErrorCode

ROOT = Path(__file__).resolve().parent.parent
CLI_MD = ROOT / "docs" / "cli.md"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1", re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
IMG_SRC = re.compile(r"<img\s[^>]*\bsrc=\"([^\"]+)\"")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The text without its fenced blocks and code spans, where links are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def _heading_text(raw: str) -> str:
    """A heading as it reads: links by their text, no backticks or emphasis marks."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    return re.sub(r"[`*]", "", text)


def _github_slug(heading: str) -> str:
    kept = re.sub(r"[^\w\- ]", "", heading.lower())
    return kept.replace(" ", "-")


def _mkdocs_slug(heading: str) -> str:
    """Python-Markdown's `toc` slugify, as MkDocs computes an anchor."""
    ascii_text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_text).strip().lower())


def _anchors(page: Path) -> set[str]:
    """Anchors both a code host and MkDocs give the page's headings (where they differ,
    neither may be linked: a link must work in both)."""
    found = set()
    for match in HEADING.finditer(FENCE.sub("", page.read_text(encoding="utf-8"))):
        text = _heading_text(match.group(2))
        if _github_slug(text) == _mkdocs_slug(text):
            found.add(_github_slug(text))
    return found


def _links_in(text: str) -> list[str]:
    prose = _prose(text)
    return LINK.findall(prose) + IMG_SRC.findall(prose)


def _links(page: Path) -> list[str]:
    return _links_in(page.read_text(encoding="utf-8"))


def test_cli_md_is_what_the_parser_gives_now(tmp_path: Path) -> None:
    now = tmp_path / "cli.md"
    subprocess.run(
        [sys.executable, "scripts/cli_docs.py", "--out", str(now)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "40"},  # a narrow terminal
        check=True,
        capture_output=True,
    )
    assert CLI_MD.read_text(encoding="utf-8") == now.read_text(encoding="utf-8"), (
        "docs/cli.md differs from the parser and error codes: run make docs"
    )


def test_cli_md_names_every_command_option_and_error_code() -> None:
    text = CLI_MD.read_text(encoding="utf-8")

    def walk(parser: argparse.ArgumentParser, names: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):  # in every --help block
                continue
            for option in action.option_strings:
                assert f"`{option}" in text, f"{' '.join(names)} {option}: run make docs"
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    assert f"\n## {' '.join((*names, name))}\n" in text, "run make docs"
                    walk(sub, (*names, name))

    walk(cli._parser(), ())
    for code in ErrorCode:
        assert f"`{code.value}`" in text, f"{code.value}: run make docs"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for link in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", link):  # http:, https:, mailto:
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no file {os.path.relpath(target, ROOT)}")
        elif anchor and target.suffix != ".md":
            broken.append(f"{link}: an anchor into a file that is not a page")
        elif anchor and anchor not in _anchors(target):
            broken.append(f"{link}: no heading of {target.name} has the anchor #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_check_sees_links_and_their_anchors() -> None:
    """The checker itself: it finds a broken anchor, and skips code."""
    page = ROOT / "README.md"
    assert "docs/cli.md" in _links(page)
    assert "getting-started" not in _anchors(page)
    assert "the-guides" in _anchors(page)
    assert _links_in("see [a](b.md#c) and `[x](y.md)`\n```\n[p](q.md)\n```\n") == ["b.md#c"]
    assert _mkdocs_slug("5c. Other pipelines: imported") == "5c-other-pipelines-imported"
    assert _github_slug("a — b") != _mkdocs_slug("a — b")  # such a heading cannot be linked
