"""Uploads: archives and loose files become bundles, or are refused with a reason."""

from __future__ import annotations

import contextlib
import io
import json
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from explorer import ErrorCode, ExplorerError, MappingReader, load_documents
from explorer.digests import sha_bytes
from explorer.sources import uploads
from explorer.sources.drafts import failure_advice
from explorer.sources.uploads import (
    bundle_from_files,
    bundle_from_uploads,
    bundle_from_zip,
    bundle_zip,
    pasted_bundle,
)
from tests.conftest import FIXTURE, MANIFEST, run_module, zipped


def fixture_entries(prefix: str = "") -> dict[str, bytes]:
    entries = {f"{prefix}manifest.json": MANIFEST.read_bytes()}
    for doc in (FIXTURE / "docs").iterdir():
        entries[f"{prefix}docs/{doc.name}"] = doc.read_bytes()
    return entries


@dataclass
class Loose:
    """An uploaded file that records whether its bytes were read."""

    name: str
    data: bytes
    read: bool = False

    @property
    def size(self) -> int:
        return len(self.data)

    def getvalue(self) -> bytes:
        self.read = True
        return self.data


def refused(call: object, *args: object, detail: str) -> None:
    with pytest.raises(ExplorerError) as caught:
        call(*args)  # type: ignore[operator]
    assert caught.value.code is ErrorCode.INVALID_UPLOAD
    assert detail in caught.value.detail


@pytest.mark.parametrize("prefix", ["", "aster/", "a/b/"])
def test_zip_with_the_manifest_at_any_depth_loads_like_the_folder(prefix: str) -> None:
    bundle = bundle_from_zip(zipped(fixture_entries(prefix)))
    result = load_documents(bundle.manifest, MappingReader(bundle.files))
    assert [s.status for s in result.statuses] == ["ok", "ok"]


def test_the_shallowest_manifest_wins() -> None:
    entries = {**fixture_entries(), "nested/manifest.json": b"{}"}
    bundle = bundle_from_zip(zipped(entries))
    assert len(bundle.manifest.documents) == 2


def test_too_many_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uploads, "MAX_FILES", 2)
    refused(bundle_from_zip, zipped(fixture_entries()), detail="3 files is more than the 2")
    loose = [Loose(name.rsplit("/", 1)[-1], data) for name, data in fixture_entries().items()]
    refused(bundle_from_uploads, loose, detail="3 files is more than the 2")


def test_too_many_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uploads, "MAX_TOTAL_BYTES", 1000)
    refused(bundle_from_zip, zipped(fixture_entries()), detail="more than 1,000 bytes")


def test_an_archive_that_understates_its_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    data = zipped({"manifest.json": b"{}", "big.md": b"x" * 5000})
    lying = data.replace((5000).to_bytes(4, "little"), (10).to_bytes(4, "little"))
    monkeypatch.setattr(uploads, "MAX_TOTAL_BYTES", 1000)
    with pytest.raises(ExplorerError) as caught:
        bundle_from_zip(lying)
    assert caught.value.code is ErrorCode.INVALID_UPLOAD


def test_link_entries_are_refused() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("manifest.json", b"{}")
        link = zipfile.ZipInfo("docs/link.md")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    refused(bundle_from_zip, buffer.getvalue(), detail="is a link")


@pytest.mark.parametrize("name", ["../x.md", "/abs.md", "a\\..\\b.md", "C:/x.md", "a/../../x.md"])
def test_entries_that_escape_are_refused(name: str) -> None:
    refused(bundle_from_zip, zipped({"manifest.json": b"{}", name: b"# A"}), detail="escapes")


def test_pasted_text_round_trips_through_its_zip() -> None:
    bundle = pasted_bundle("# Mine\n\nText é.\n")
    again = bundle_from_zip(bundle_zip(bundle))
    assert again.manifest == bundle.manifest
    assert dict(again.files) == dict(bundle.files)
    assert again.key == bundle.key
    [status] = load_documents(again.manifest, MappingReader(again.files)).statuses
    assert status.status == "ok"


def test_bundle_key_changes_with_any_byte() -> None:
    assert pasted_bundle("# A\n\nx\n").key != pasted_bundle("# A\n\ny\n").key


def never_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail if `zipfile` is asked to read the archive's table of contents."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the archive was parsed before its limits were checked")

    monkeypatch.setattr(zipfile, "ZipFile", refuse)


def test_an_archive_listing_too_many_entries_is_refused_before_it_is_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = zipped({f"docs/{n}.md": b"" for n in range(uploads.MAX_ENTRIES + 1)})
    never_parsed(monkeypatch)
    refused(bundle_from_zip, data, detail="the archive lists 1,001 entries, more than the 1,000")


def test_an_oversized_table_of_contents_is_refused_before_it_is_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = zipped({"manifest.json": b"{}", "x" * 60_000 + ".md": b"", "y" * 60_000: b""})
    monkeypatch.setattr(uploads, "MAX_DIRECTORY_BYTES", 100_000)
    never_parsed(monkeypatch)
    refused(bundle_from_zip, data, detail="table of contents takes 120,")


def zip64(entries: dict[str, bytes], monkeypatch: pytest.MonkeyPatch) -> bytes:
    """An archive with ZIP64 end records, as tools write them past 65,535 entries."""
    with monkeypatch.context() as patch:
        patch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 1)
        return zipped(entries)


def test_a_zip64_archive_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    data = zip64(fixture_entries(), monkeypatch)
    assert b"PK\x06\x06" in data
    assert len(bundle_from_zip(data).files) == 2


def test_a_zip64_count_is_the_one_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """`zipfile` believes the ZIP64 record over the classic one, so the check does too."""
    data = bytearray(zip64(fixture_entries(), monkeypatch))
    record = data.rfind(b"PK\x06\x06")
    data[record + 32 : record + 40] = (700_000).to_bytes(8, "little")  # entries in all
    never_parsed(monkeypatch)
    refused(bundle_from_zip, bytes(data), detail="lists 700,000 entries")


@pytest.mark.parametrize("twin", ["docs/a.md", "./docs/a.md", "docs//a.md"])
def test_two_entries_with_one_path_are_refused(twin: str) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("manifest.json", MANIFEST.read_bytes())
        archive.writestr("docs/a.md", b"# First\n")
        with pytest.warns(UserWarning) if twin == "docs/a.md" else contextlib.nullcontext():
            archive.writestr(twin, b"# Second\n")
    refused(bundle_from_zip, buffer.getvalue(), detail="'docs/a.md' appears more than once")


@pytest.mark.parametrize("zip_name", [None, "big.zip"])
def test_uploads_are_measured_before_any_is_read(
    monkeypatch: pytest.MonkeyPatch, zip_name: str | None
) -> None:
    monkeypatch.setattr(uploads, "MAX_TOTAL_BYTES", 1000)
    files = (
        [Loose(zip_name, b"x" * 1001)]
        if zip_name
        else [Loose(f"{n}.md", b"x" * 400) for n in range(3)]
    )
    refused(bundle_from_uploads, files, detail="more than 1,000 bytes")
    assert not any(upload.read for upload in files)


# -- files without a manifest: one is built -------------------------------------------------


def test_plain_files_get_a_manifest_with_their_digests() -> None:
    files = [("b.txt", b"# B\n"), ("a.md", b"# A\n"), ("a.MD", b"# A2\n")]
    bundle = bundle_from_files(files)
    assert bundle.drafted
    assert [(d["source_id"], d["path"], d["sha256"]) for d in bundle.manifest.documents] == [
        ("a", "a.MD", sha_bytes(b"# A2\n")),
        ("a-2", "a.md", sha_bytes(b"# A\n")),
        ("b", "b.txt", sha_bytes(b"# B\n")),
    ]
    assert bundle.files == {"b.txt": b"# B\n", "a.md": b"# A\n", "a.MD": b"# A2\n"}


def test_a_json_file_still_means_a_manifest() -> None:
    with pytest.raises(ExplorerError) as caught:
        bundle_from_files([("notes.json", b"{}"), ("a.md", b"# A\n")])
    assert caught.value.code is ErrorCode.INVALID_MANIFEST


def test_two_plain_files_of_one_name_are_refused() -> None:
    refused(
        bundle_from_files,
        [("x/a.md", b"# A\n"), ("y/a.md", b"# B\n")],
        detail="'a.md' appears more than once",
    )


def test_a_zip_without_a_manifest_gets_one_for_its_text_files() -> None:
    bundle = bundle_from_zip(zipped({"d/a b.md": b"# A\n", "pic.png": b"\x89"}))
    assert bundle.drafted and bundle.files == {"d/a b.md": b"# A\n"}
    assert bundle.manifest.documents[0]["source_id"] == "d-a-b"


def test_the_manifest_command_writes_a_manifest_that_compare_loads(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_bytes(b"# A\n\nalpha\n")
    (tmp_path / "sub" / "b.txt").write_bytes(b"# B\n\nbeta\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.md").write_bytes(b"# C\n")
    (tmp_path / "data.json").write_bytes(b"{}")
    out = tmp_path / "manifest.json"
    made = run_module("manifest", tmp_path, "--out", out)
    assert made.returncode == 0, made.stderr
    manifest = json.loads(out.read_text())
    assert [d["path"] for d in manifest["documents"]] == ["a.md", "sub/b.txt"]
    assert manifest["documents"][1]["sha256"] == sha_bytes(b"# B\n\nbeta\n")
    compared = run_module("compare", out)
    assert compared.returncode == 0, compared.stderr
    statuses = [d["status"] for d in json.loads(compared.stdout)["documents"]]
    assert statuses == ["ok", "ok"]


def test_the_manifest_command_refuses_a_folder_without_text_files(tmp_path: Path) -> None:
    made = run_module("manifest", tmp_path)
    assert made.returncode == 2
    assert "invalid_upload" in made.stderr and "no manifest.json and no .md" in made.stderr


CONTROL_NAMES = ["tab\there.md", "x\n# injected heading.md", "bell\x07.txt", "c1\x85.md"]


@pytest.mark.parametrize("name", CONTROL_NAMES)
def test_a_file_name_with_a_control_character_is_an_invalid_upload(name: str) -> None:
    detail = f"the file name {name!r} holds a control character"
    refused(bundle_from_files, [(name, b"# A\n")], detail=detail)
    refused(bundle_from_zip, zipped({name: b"# A\n", "ok.md": b"# B\n"}), detail=detail)
    refused(bundle_from_uploads, [Loose(name, b"# A\n")], detail=detail)


def test_the_manifest_command_refuses_a_control_character_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_bytes(b"# A\n")
    (tmp_path / "tab\there.md").write_bytes(b"# B\n")
    made = run_module("manifest", tmp_path)
    assert made.returncode == 2 and made.stdout == ""
    assert made.stderr == (
        "error: invalid_manifest: the file name 'tab\\there.md' holds a control character, "
        "which a manifest's path cannot: rename the file\n"
    )


def test_failure_advice_names_what_to_change() -> None:
    assert "put its SHA-256" in failure_advice("source_digest_mismatch")
    assert "heading" in failure_advice("heading_required")
    # The app's own limit, and where a larger document can go.
    too_large = failure_advice("document_too_large")
    assert "up to 1 MiB" in too_large and "--max-document-bytes" in too_large
    assert "64 MiB" in too_large
    assert failure_advice("not_a_code") == "Fix what the detail says, then load it again."


@pytest.mark.parametrize("code", ["not_utf8", "nul_byte", "heading_required"])
def test_a_built_manifest_asks_for_the_file_again_never_for_its_digest(code: str) -> None:
    # issue 37, item 14: under a manifest built for the files, nothing is pinned by hand
    assert failure_advice(code).endswith("then pin its new SHA-256 in the manifest.")
    built = failure_advice(code, drafted=True)
    assert built.endswith("then upload it again.") and "SHA-256" not in built
