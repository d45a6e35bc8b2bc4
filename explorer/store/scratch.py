"""The app's scratch indexes: one folder per browser session, under one root folder.

Any local user can write in the temporary folder, so nothing there is trusted: the root
is made with an exclusive `mkdir` (mode 0700) or, if it is there already, used only if it
is a real folder (not a link), owned by this user and closed to others; each session's
folder is made by `mkdtemp` inside it. Clean-up never follows a link and removes only
the session folders this program made (`session-…`, real folders owned by this user)
that nobody touched for `SCRATCH_HOURS`. A session's folder may hold at most
`SESSION_BYTES`, and all of them together `TOTAL_BYTES`: past either, a run is refused
(`scratch_full`) with a sentence that says what to do, and a run that reaches either
stops before its next document (`require_room` is its `room`: explorer/store/apply.py).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

from ..errors import ErrorCode, ExplorerError, io_error

SCRATCH_HOURS = 24
SESSION_BYTES = 256 * 2**20
TOTAL_BYTES = 4 * 2**30
SESSION_PREFIX = "session-"


def default_root() -> Path:
    """`$TMPDIR/explorer-scratch-<uid>`: one root per user of the machine."""
    return Path(tempfile.gettempdir()) / f"explorer-scratch-{os.getuid()}"


def _own_folder(path: Path) -> bool:
    """A real folder (a link is not followed), owned by this user, closed to others."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and stat.S_IMODE(info.st_mode) & 0o077 == 0
    )


def scratch_root(root: Path) -> Path:
    """`root`, made now (0700, exclusively) or checked to be this program's own."""
    try:
        os.mkdir(root, 0o700)
    except FileExistsError:
        if not _own_folder(root):
            raise ExplorerError(
                ErrorCode.IO_ERROR,
                f"the scratch folder {str(root)!r} is not a folder of this user closed to "
                "others (a link, or another user's); remove it, or set EXPLORER_DB",
            ) from None
    except OSError as error:
        raise io_error("make the scratch folder", root, error) from None
    return root


def _sessions(root: Path) -> list[os.DirEntry[str]]:
    """The session folders this program made in `root`, never following a link."""
    with os.scandir(root) as entries:
        return [
            entry
            for entry in entries
            if entry.name.startswith(SESSION_PREFIX)
            and entry.is_dir(follow_symlinks=False)
            and entry.stat(follow_symlinks=False).st_uid == os.getuid()
        ]


def sweep(root: Path, hours: float = SCRATCH_HOURS) -> int:
    """Remove the session folders untouched for `hours`; how many were removed.
    `shutil.rmtree` works through file descriptors here, so a link swapped in on the
    way is removed as a link, never followed."""
    stale = time.time() - hours * 3600
    removed = 0
    for entry in _sessions(root):
        if entry.stat(follow_symlinks=False).st_mtime < stale:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed += 1
    return removed


def new_session(root: Path) -> Path:
    """A new session folder (0700, made by `mkdtemp`), after a sweep of stale ones."""
    scratch_root(root)
    sweep(root)
    try:
        return Path(tempfile.mkdtemp(prefix=SESSION_PREFIX, dir=root))
    except OSError as error:
        raise io_error("make a scratch folder in", root, error) from None


def _size(folder: str) -> int:
    """The bytes of the files directly in a session folder (it holds no folder)."""
    with os.scandir(folder) as entries:
        return sum(
            entry.stat(follow_symlinks=False).st_size
            for entry in entries
            if entry.is_file(follow_symlinks=False)
        )


def require_room(
    root: Path, session: Path, session_bytes: int = SESSION_BYTES, total_bytes: int = TOTAL_BYTES
) -> None:
    """Refuse (`scratch_full`) a run into `session` once it holds `session_bytes`, or
    all sessions together `total_bytes`; mark the session as in use (its clock for the
    sweep starts again)."""
    sizes = {entry.path: _size(entry.path) for entry in _sessions(root)}
    mine = sizes.get(str(session), 0)
    if mine >= session_bytes:
        raise ExplorerError(
            ErrorCode.SCRATCH_FULL,
            f"this session's scratch index holds {mine / 2**20:,.0f} MiB, its limit of "
            f"{session_bytes // 2**20:,} MiB; a run that deletes documents makes room, "
            "and `python -m explorer ingest` on your own machine indexes more",
        )
    total = sum(sizes.values())
    if total >= total_bytes:
        raise ExplorerError(
            ErrorCode.SCRATCH_FULL,
            f"the scratch indexes of all sessions hold {total / 2**20:,.0f} MiB, the "
            f"server's limit of {total_bytes // 2**20:,} MiB; try again when older ones "
            f"are removed (after {SCRATCH_HOURS} hours unused)",
        )
    os.utime(session)


__all__ = [
    "SCRATCH_HOURS",
    "SESSION_BYTES",
    "TOTAL_BYTES",
    "default_root",
    "new_session",
    "require_room",
    "scratch_root",
    "sweep",
]
