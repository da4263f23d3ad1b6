"""Which format an army list is in, from its content (never its file name), and the importer
of each format.

Each format is recognised by what only it prints (checked in this order):

| format | recognised by |
|---|---|
| ``battlescribe`` | a zip (``.rosz``) or XML whose root is ``<roster>`` (``.ros``) |
| ``newrecruit-wtc`` | New Recruit's ``+ FACTION KEYWORD:`` header, then lines ``Char1: 1x Name (N pts): ...`` or ``Nx Name (N pts)`` and no headings |
| ``newrecruit-gw`` | the same header, then headings (``CHARACTER``) and units ``Name (N pts)`` over bulleted items |
| ``newrecruit-nr`` | ``# ++ Army Roster ++`` (New Recruit's markdown) |
| ``warorgan`` | ``Created with WarOrgan`` or ``Battle Size:`` with ``Detachments:`` |
| ``listforge`` | a title ``... - Faction - Detachment (N Points)`` and headings ending in ``:`` over units ``Name (N pts)`` |
| ``gw-app`` | a title ``Name (N points)`` and units ``Name (N points)`` over bulleted items (the Warhammer app, Best Coast Pairings, War Organ's app-style text) |
"""

from __future__ import annotations

import re
from typing import Callable

from pipeline.lists.model import ArmyList

#: Every format and (module under ``pipeline.lists``, function) that reads it: the function
#: takes the file's text (bytes for ``battlescribe``) and returns an ``ArmyList``.
FORMATS: dict[str, tuple[str, str]] = {
    "battlescribe": ("battlescribe", "parse"),
    "newrecruit-wtc": ("newrecruit", "parse_tournament"),
    "newrecruit-gw": ("newrecruit", "parse_gw"),
    "gw-app": ("gwapp", "parse"),
    "warorgan": ("warorgan", "parse"),
    "listforge": ("listforge", "parse"),
    "newrecruit-nr": ("newrecruit", "parse_markdown"),
}

_NR_HEADER = re.compile(r"^\+\s*FACTION KEYWORD:", re.MULTILINE)
_WTC_LINE = re.compile(r"^(?:[A-Z][a-z]{2,4}\d+:\s*)?\d+x\s+.+\(\d+\s*pts\)(?::.*)?$", re.MULTILINE)
_APP_UNIT = re.compile(r"^\S.*\(\s*[\d,]+\s*(?:points|pts)\s*\)\s*$", re.MULTILINE | re.IGNORECASE)
_LF_TITLE = re.compile(r"^.+ - .+ \(\s*[\d,]+\s*Points\s*\)\s*$", re.IGNORECASE)
_LF_HEADING = re.compile(r"^[A-Z][A-Za-z ]+:$", re.MULTILINE)


def detect_format(data: bytes) -> str | None:
    """The format of an army list (a key of ``FORMATS``), from its first bytes and lines; None
    when it is none of them.

    >>> detect_format(b"PK\\x03\\x04...")
    'battlescribe'
    >>> detect_format("Mine (500 points)\\n\\nOrks\\n\\nBoyz (80 points)\\n  • 10x Boy\\n".encode())
    'gw-app'
    >>> detect_format(b"hello") is None
    True
    """
    if data[:4] == b"PK\x03\x04":
        return "battlescribe"
    text = data[:200_000].decode("utf-8", errors="replace").lstrip("\ufeff")
    start = text.lstrip()[:2000]
    if start.startswith("<") and re.search(r"<roster[\s>]", start):
        return "battlescribe"
    if _NR_HEADER.search(text):
        body = "\n".join(line for line in text.splitlines() if not line.startswith(("+", "&")))
        headings = re.search(r"^[A-Z][A-Z ]{3,}$", body, re.MULTILINE)  # CHARACTER, OTHER DATASHEETS
        return "newrecruit-wtc" if _WTC_LINE.search(body) and not headings else "newrecruit-gw"
    if "# ++ Army Roster ++" in text:
        return "newrecruit-nr"
    if "Created with WarOrgan" in text or ("Battle Size:" in text and "Detachments:" in text):
        return "warorgan"
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if _LF_TITLE.match(first) and _LF_HEADING.search(text):
        return "listforge"
    if _APP_UNIT.search(text) and re.search(r"^\s*[•◦]", text, re.MULTILINE):
        return "gw-app"
    return None


def importer(fmt: str) -> Callable[..., ArmyList]:
    """The function that reads ``fmt`` (a key of ``FORMATS``; imported when first asked for)."""
    import importlib

    module, function = FORMATS[fmt]
    return getattr(importlib.import_module(f"pipeline.lists.{module}"), function)
