"""``pipeline.toml_cache.read_toml``: the data ``tomllib`` gives, parsed once and kept as bytecode is."""

from __future__ import annotations

import os
import sys
import tomllib

import pytest

from pipeline.engine.declarations import RULES_FILE
from pipeline.toml_cache import cache_path, read_toml

TEXT = 'title = "x"\n[edition.10]\nwording = "w"\ncap = 1\nratio = 0.5\nflags = [true, false]\n[[row]]\na = 1\n'


@pytest.fixture
def writes_bytecode(monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", None)


def test_the_data_is_tomllibs_and_the_cache_gives_it_again(tmp_path, writes_bytecode, monkeypatch):
    path = tmp_path / "rules.toml"
    path.write_text(TEXT, encoding="utf-8")
    expected = tomllib.loads(TEXT)
    assert read_toml(path) == expected
    cache = cache_path(path)
    assert cache.parent == tmp_path / "__pycache__" and cache.is_file()

    def no_parse(text):
        raise AssertionError("parsed again")

    monkeypatch.setattr(tomllib, "loads", no_parse)
    data = read_toml(path)
    assert data == expected and list(data) == list(expected)  # the order of the keys too
    assert type(data["edition"]["10"]["ratio"]) is float and data["row"] == [{"a": 1}]


def test_a_changed_file_is_parsed_again(tmp_path, writes_bytecode):
    path = tmp_path / "rules.toml"
    path.write_text(TEXT, encoding="utf-8")
    read_toml(path)
    path.write_text(TEXT.replace("cap = 1", "cap = 2"), encoding="utf-8")
    os.utime(path, ns=(1, 1))  # another modification time (a same-size edit within a clock tick)
    assert read_toml(path)["edition"]["10"]["cap"] == 2


@pytest.mark.parametrize("cache_bytes", [b"", b"garbage", b"\xe9" * 40])
def test_a_damaged_cache_is_parsed_again_and_written_anew(tmp_path, writes_bytecode, cache_bytes):
    path = tmp_path / "rules.toml"
    path.write_text(TEXT, encoding="utf-8")
    read_toml(path)
    cache_path(path).write_bytes(cache_bytes)
    assert read_toml(path) == tomllib.loads(TEXT)
    assert cache_path(path).read_bytes() != cache_bytes


def test_no_cache_without_bytecode_or_for_a_date(tmp_path, monkeypatch):
    path = tmp_path / "rules.toml"
    path.write_text(TEXT, encoding="utf-8")
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert read_toml(path) == tomllib.loads(TEXT)
    assert not (tmp_path / "__pycache__").exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    dated = tmp_path / "dated.toml"
    dated.write_text("when = 2024-01-02\n", encoding="utf-8")
    assert read_toml(dated) == tomllib.loads("when = 2024-01-02\n")
    assert not cache_path(dated).exists()


def test_the_pycache_prefix_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    path = tmp_path / "data" / "rules.toml"
    path.parent.mkdir()
    path.write_text(TEXT, encoding="utf-8")
    read_toml(path)
    assert cache_path(path).is_file() and cache_path(path).is_relative_to(tmp_path / "prefix")
    assert not (path.parent / "__pycache__").exists()


def test_an_unwritable_folder_gives_the_data_and_no_cache(tmp_path, writes_bytecode):
    path = tmp_path / "rules.toml"
    path.write_text(TEXT, encoding="utf-8")
    (tmp_path / "__pycache__").write_text("a file where the folder would be")
    assert read_toml(path) == tomllib.loads(TEXT)


def test_the_edition_rules_read_through_the_cache_are_the_file(writes_bytecode):
    assert read_toml(RULES_FILE) == tomllib.loads(RULES_FILE.read_text(encoding="utf-8"))
