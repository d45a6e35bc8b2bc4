"""A user's `--embedder` or `--generator` module that fails however it can (at import, a
syntax error, a factory that raises KeyboardInterrupt or calls exit) is one line on
standard error with its code, never a traceback: run as a real process, as a person does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MANIFEST, ROOT

FACTORY = "class Made:\n    name = 'made'\n    dimensions = 4\n\n\ndef factory():\n    {body}\n"
# (module source, what the one line says)
BROKEN_MODULES = [
    ("raise RuntimeError('no API key configured')\n", "RuntimeError: no API key configured"),
    ("def factory(:\n    pass\n", "SyntaxError"),
    ("import no_such_module_anywhere\n", "No module named 'no_such_module_anywhere'"),
    ("raise SystemExit(3)\n", "SystemExit"),
]
# (the command's options before the plugin's, the option, the code)
COMMANDS = [
    (("ingest", str(MANIFEST), "--db", "{tmp}/index.db"), "--embedder", "invalid_embedder"),
    (
        ("questions", "draft", str(MANIFEST), "--policy", "paragraph", "--out", "{tmp}/q.json"),
        "--generator",
        "invalid_generator",
    ),
]


def run(
    tmp_path: Path, source: str, command: tuple[str, ...], option: str
) -> subprocess.CompletedProcess[str]:
    """`python -m explorer COMMAND OPTION plugged:factory`, `plugged` being `source`."""
    (tmp_path / "plugged.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    args = [part.format(tmp=tmp_path) for part in command]
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args, option, "plugged:factory"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=False,
        timeout=120,
    )


def one_line(process: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in process.stderr, process.stderr
    assert process.stdout == ""
    [line] = process.stderr.splitlines()
    return line


@pytest.mark.parametrize(("source", "says"), BROKEN_MODULES)
@pytest.mark.parametrize(("command", "option", "code"), COMMANDS)
def test_a_module_that_fails_at_import_is_refused_naming_it(
    tmp_path: Path, source: str, says: str, command: tuple[str, ...], option: str, code: str
) -> None:
    process = run(tmp_path, source, command, option)
    line = one_line(process)
    assert process.returncode == 2, line
    assert line.startswith(f"error: {code}: cannot import 'plugged': ") and says in line, line
    assert not (tmp_path / "index.db").exists() and not (tmp_path / "q.json").exists()


@pytest.mark.parametrize(("command", "option", "code"), COMMANDS)
def test_a_factory_that_calls_exit_is_refused_with_the_plugins_code(
    tmp_path: Path, command: tuple[str, ...], option: str, code: str
) -> None:
    process = run(tmp_path, FACTORY.format(body="raise SystemExit(3)"), command, option)
    line = one_line(process)
    assert process.returncode == 2, line
    assert line == f"error: {code}: plugged:factory raised SystemExit: 3", line


@pytest.mark.parametrize(("command", "option", "code"), COMMANDS)
def test_a_factory_interrupted_exits_130_with_one_line(
    tmp_path: Path, command: tuple[str, ...], option: str, code: str
) -> None:
    process = run(tmp_path, FACTORY.format(body="raise KeyboardInterrupt"), command, option)
    line = one_line(process)
    assert process.returncode == 130, line
    assert line == "error: interrupted: plugged:factory raised KeyboardInterrupt", line
