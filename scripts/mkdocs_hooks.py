"""MkDocs hook (mkdocs.yml `hooks:`): the JSON Schemas in schemas/ become files of the site,
so that docs pages link them as `../schemas/NAME.schema.json`, a relative link that also
works on a code host, and the strict build checks those links as it checks the others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


def on_files(files: Files, config: Any) -> Files:
    for schema in sorted(SCHEMAS.glob("*.schema.json")):
        files.append(
            File(
                f"../schemas/{schema.name}",  # as a page in docs/ spells it
                config["docs_dir"],
                config["site_dir"],
                config["use_directory_urls"],
                dest_uri=f"schemas/{schema.name}",
                inclusion=InclusionLevel.NOT_IN_NAV,
            )
        )
    return files
