"""Uploads: archives and loose files become bundles, or are refused with a reason."""

from __future__ import annotations

import io
import stat
import zipfile

import pytest

from explorer import ErrorCode, ExplorerError, MappingReader, load_documents, uploads
from explorer.uploads import bundle_from_uploads, bundle_from_zip, bundle_zip, pasted_bundle
from tests.conftest import FIXTURE, MANIFEST, zipped


def fixture_entries(prefix: str = "") -> dict[str, bytes]:
    entries = {f"{prefix}manifest.json": MANIFEST.read_bytes()}
    for doc in (FIXTURE / "docs").iterdir():
        entries[f"{prefix}docs/{doc.name}"] = doc.read_bytes()
    return entries


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
    loose = [(name.rsplit("/", 1)[-1], data) for name, data in fixture_entries().items()]
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
