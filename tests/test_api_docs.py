"""The examples of docs/python-api.md, run as a doctest against databases built from the seeds."""

from __future__ import annotations

import doctest
from pathlib import Path

from tests.conftest import RAW

DOC = Path(__file__).resolve().parent.parent / "docs" / "python-api.md"


def test_the_python_api_examples_run(tmp_path: Path) -> None:
    result = doctest.testfile(str(DOC), module_relative=False, globs={"RAW": RAW, "TMP": tmp_path},
                              optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0 and result.attempted >= 25, result
