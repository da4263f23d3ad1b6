"""The conventions of the command line: --version, shell completion, --quiet, progress bars."""

from __future__ import annotations

import io
import shutil
from importlib.metadata import version
from pathlib import Path

import pytest

from pipeline.cli import progress as progress_module
from pipeline.cli import run
from pipeline.cli.progress import progress_messages
from tests.conftest import RAW


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--version"]) == 0
    assert capsys.readouterr() == (f"wh40k-rules-db {version('wh40k-rules-db')}\n", "")


def test_completion_script(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:  # typer's completion option exits itself
        run(["--show-completion", "bash"])
    assert ended.value.code == 0
    script = capsys.readouterr().out
    assert "_wh40k_completion()" in script and "complete -o default -F _wh40k_completion wh40k" in script


def test_build_quiet_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["build", "--raw", str(RAW), "--db", str(tmp_path / "q.duckdb"), "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


def test_fetch_quiet_keeps_the_summary_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = shutil.copytree(RAW, tmp_path / "raw")
    args = ["fetch", "--raw", str(raw), "--only", "wahapedia-10e-cp-sanctuary-guardians", "--format", "csv"]
    assert run(args) == 0
    loud = capsys.readouterr()
    assert "wahapedia-10e-cp-sanctuary-guardians: skipped (no url)" in loud.err
    assert run([*args, "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.out == loud.out and "skipped (no url)\n" not in quiet.err.replace(",", "\n")
    assert quiet.err.strip().splitlines()[-1].startswith("1 sources: 1 skipped")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_lines_off_a_terminal_are_plain_lines() -> None:
    out = io.StringIO()
    with progress_messages("build", stream=out, steps=("parsed ",)) as report:
        report("read manifest: 2 sources in raw")
        report("parsed a: 3 records")
    assert out.getvalue() == "read manifest: 2 sources in raw\nparsed a: 3 records\n"  # no bar


def test_progress_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress_module, "DELAY_SECONDS", 0.0)
    out = _Terminal()
    with progress_messages("build", stream=out, steps=("parsed ", "loaded ")) as report:
        report("read manifest: 2 sources in raw")
        report("parsed a: 3 records")
        report("parsed b: 1 records")
        report("loaded in 0.1 s")
    text = out.getvalue()
    assert "read manifest: 2 sources in raw" in text and "loaded in 0.1 s" in text
    assert "3/3" in text  # the bar's last state: 2 sources and the load (shown on a terminal, then removed)
