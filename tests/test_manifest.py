"""The raw manifest: a bad entry is a one-line ``ManifestError`` naming the file, the entry and
the fix, raised before the build writes anything."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.errors import ManifestError
from pipeline.manifest import MANIFEST_NAME, read_manifest
from pipeline.extractors import EXTRACTORS, get_extractor
from tests.conftest import RAW
from tests.test_build_and_cli import wh40k

KNOWN_FORMATS = (
    "battlescribe-rule-descriptions, bsdata-cat-json, bsdata-cat-set-json, bsdata-cat-set-xml, bsdata-cat-xml, bsdata-gst-json, bsdata-gst-xml, gdc-core-rules, gdc-faqs, gdc-json, gdc-json-folder, wahapedia-csv, wahapedia-html, "
    "wahapedia-rules-11e, wahapedia-text-10e"
)


def raw_with(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the seed raw folder whose manifest has its first ``old`` replaced by ``new``."""
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    manifest = (raw / MANIFEST_NAME).read_text(encoding="utf-8")
    assert old in manifest
    (raw / MANIFEST_NAME).write_text(manifest.replace(old, new, 1), encoding="utf-8")
    return raw


def test_every_registered_format_has_a_parser_function():
    assert sorted(EXTRACTORS) == KNOWN_FORMATS.split(", ")
    for fmt in EXTRACTORS:
        assert callable(get_extractor(fmt)), fmt
    assert get_extractor("bsdata-gst-json").__name__ == "parse_gst_json"
    with pytest.raises(KeyError, match="no parser for format 'nope'; known formats: battlescribe-rule"):
        get_extractor("nope")


def test_the_committed_manifest_reads():
    sources = read_manifest(RAW)
    assert [s.format for s in sources] == [
        "wahapedia-text-10e", "wahapedia-rules-11e", "battlescribe-rule-descriptions", "bsdata-gst-xml",
        "bsdata-gst-json", "wahapedia-html", "wahapedia-html", "wahapedia-html", "wahapedia-csv",
        "bsdata-cat-set-xml", "gdc-core-rules", "gdc-core-rules", "gdc-core-rules", "gdc-core-rules", "gdc-faqs",
        "gdc-json-folder", "gdc-json-folder", "gdc-json-folder", "bsdata-cat-set-json",
    ]


def test_misspelt_format_names_the_entry_the_known_formats_and_the_close_one(tmp_path):
    raw = raw_with(tmp_path, 'format = "wahapedia-text-10e"', 'format = "wahapedia-txt-10e"')
    with pytest.raises(ManifestError) as exc:
        read_manifest(raw)
    assert str(exc.value) == (
        f"{raw / MANIFEST_NAME}: [[source]] entry 1 (wahapedia-10e-cp-sanctuary-guardians): "
        f"unknown format 'wahapedia-txt-10e'; known formats: {KNOWN_FORMATS}; "
        "did you mean 'wahapedia-text-10e'?"
    )


def test_format_far_from_any_known_one_gets_no_suggestion(tmp_path):
    raw = raw_with(tmp_path, 'format = "battlescribe-rule-descriptions"', 'format = "pdf"')
    with pytest.raises(ManifestError) as exc:
        read_manifest(raw)
    assert str(exc.value).endswith(
        f"entry 3 (bsdata-10e-rule-descriptions): unknown format 'pdf'; known formats: {KNOWN_FORMATS}"
    )


def test_cli_build_with_misspelt_format_is_one_line_error_and_writes_nothing(tmp_path):
    raw = raw_with(tmp_path, 'format = "wahapedia-text-10e"', 'format = "wahapedia-txt-10e"')
    db = tmp_path / "x.duckdb"
    out = wh40k("build", "--raw", str(raw), "--db", str(db))
    assert out.returncode == 1
    assert out.stderr == (
        f"Error: {raw / MANIFEST_NAME}: [[source]] entry 1 (wahapedia-10e-cp-sanctuary-guardians): "
        f"unknown format 'wahapedia-txt-10e'; known formats: {KNOWN_FORMATS}; "
        "did you mean 'wahapedia-text-10e'?\n"
    )
    assert out.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw"]


KNOWN_KINDS = (
    "balance-update, codex, combat-patrol, core-rules, datasheet-page, errata, export, faction-pack, "
    "faction-page, index, rules-update (ranked in pipeline/precedence.toml; a new kind needs a rank there)"
)


@pytest.mark.parametrize(
    ("old", "new", "entry", "problem"),
    [
        ('kind = "combat-patrol"', 'kind = "combat patrol"', "1 (wahapedia-10e-cp-sanctuary-guardians)",
         f"unknown kind 'combat patrol'; known kinds: {KNOWN_KINDS}; did you mean 'combat-patrol'?"),
        ('kind = "codex"', 'kind = "Codex"', "3 (bsdata-10e-rule-descriptions)",
         f"unknown kind 'Codex'; known kinds: {KNOWN_KINDS}; did you mean 'codex'?"),
        ('kind = "codex"', 'kind = "supplement"', "3 (bsdata-10e-rule-descriptions)",
         f"unknown kind 'supplement'; known kinds: {KNOWN_KINDS}"),
        ('game_mode = "combat-patrol"', 'game_mode = "combat patrol"', "1 (wahapedia-10e-cp-sanctuary-guardians)",
         "unknown game_mode 'combat patrol'; known game modes: matched, combat-patrol "
         "(leave game_mode out for a source of every game mode); did you mean 'combat-patrol'?"),
        ("edition = 11", "edition = 12", "2 (wahapedia-11e-rules-astra-militarum)",
         "unknown edition 12; known editions: 10, 11 (leave edition out to have the build detect it)"),
        ("edition = 11", 'edition = "11"', "2 (wahapedia-11e-rules-astra-militarum)",
         "unknown edition '11'; known editions: 10, 11 (leave edition out to have the build detect it); "
         "did you mean 11?"),
    ],
)
def test_unknown_kind_game_mode_or_edition_names_the_entry_and_the_known_values(tmp_path, old, new, entry, problem):
    raw = raw_with(tmp_path, old, new)
    with pytest.raises(ManifestError) as exc:
        read_manifest(raw)
    assert str(exc.value) == f"{raw / MANIFEST_NAME}: [[source]] entry {entry}: {problem}"


def test_every_ranked_kind_and_both_game_modes_are_accepted(tmp_path):
    raw = raw_with(tmp_path, 'kind = "combat-patrol"', 'kind = "balance-update"')
    assert read_manifest(raw)[0].kind == "balance-update"
    raw = raw_with(tmp_path / "b", 'game_mode = "combat-patrol"', 'game_mode = "matched"')
    assert read_manifest(raw)[0].game_mode == "matched"


def test_cli_build_with_misspelt_kind_fails_instead_of_dropping_the_source_from_the_precedence(tmp_path):
    raw = raw_with(tmp_path, 'kind = "combat-patrol"', 'kind = "combat patrol"')
    db = tmp_path / "x.duckdb"
    out = wh40k("build", "--raw", str(raw), "--db", str(db))
    assert out.returncode == 1
    assert out.stderr == (
        f"Error: {raw / MANIFEST_NAME}: [[source]] entry 1 (wahapedia-10e-cp-sanctuary-guardians): "
        f"unknown kind 'combat patrol'; known kinds: {KNOWN_KINDS}; did you mean 'combat-patrol'?\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw"]


def test_cli_fetch_checks_the_manifest_the_same_way(tmp_path):
    raw = raw_with(tmp_path, 'game_mode = "combat-patrol"', 'game_mode = "cp"')
    out = wh40k("fetch", "--raw", str(raw), "--delay", "0")
    assert out.returncode == 1
    assert out.stderr == (
        f"Error: {raw / MANIFEST_NAME}: [[source]] entry 1 (wahapedia-10e-cp-sanctuary-guardians): "
        "unknown game_mode 'cp'; known game modes: matched, combat-patrol "
        "(leave game_mode out for a source of every game mode)\n"
    )
    assert sorted(p.name for p in raw.iterdir()) == sorted(p.name for p in RAW.iterdir())
