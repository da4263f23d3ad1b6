"""Rule keys and their aliases: one canonical key joins the same rule across editions.

The aliases are data, kept in ``pipeline/rule_aliases.toml`` beside this module; this module
reads that file and answers "which rule is this name or section number?".

Key scheme:

- A rule's key is the slug of its printed name with the brackets and the parameter dropped:
  ``[LETHAL HITS]`` -> ``lethal-hits``, ``Feel No Pain 5+`` -> ``feel-no-pain``,
  ``Anti-Infantry 4+`` -> ``anti`` (``rule_key_from_name``). Parsers write this key on every
  ``RuleText``.
- The *canonical* key of a rule is the key of its 11th-edition name (the title of its numbered
  section: ``06.03 Hazard Rolls`` -> ``hazard-rolls``). A rule whose name did not change needs no
  alias (``lethal-hits`` is ``lethal-hits`` in both editions).
- An alias maps another key (a 10th-edition name, a synonym, a singular form) or an
  11th-edition section number (``24.23``) to the canonical key. Aliases never chain: an alias is
  never itself a canonical key.
- A rule that has no wording of its own in an edition may be *part of* another rule there: the
  10th edition has no rule for the Hazardous test (the 11th-edition hazard roll); the Hazardous
  ability says how to take one. ``part_of`` answers which rule holds the wording (``PartOf``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pipeline.errors import NormaliseError, NotFoundError, Wh40kError
from pipeline.normalise.text import clean_line, slug
from schemas.records import RuleAlias, RulePart

#: The alias table shipped with the package.
ALIASES_FILE = Path(__file__).resolve().parent / "rule_aliases.toml"

#: An 11th-edition section number: ``03.04``, ``24.23``, ``01.07.02`` (also a chapter ``15``).
SECTION = re.compile(r"^\d{2}(?:\.\d{2}){0,2}$")
_SECTION_IN_NAME = re.compile(
    r"^(?P<before>\d{2}(?:\.\d{2}){1,2})\s+(?P<name>.*[A-Za-z].*)$"
    r"|^(?P<name2>.*[A-Za-z\]].*?)\s*(?P<after>\d{2}(?:\.\d{2}){1,2})$"
)
#: A trailing parameter of a rule name: ``X``, ``X+``, ``5+``, ``6"``, ``D3``, ``2D6+1``, ``Y+``.
_PARAMETER = re.compile(r"\s+(?:[XY]|\d*D\d+(?:\s*\+\s*\d+)?|\d+)\s*(?:\+|\"|”|'')?\s*$", re.IGNORECASE)
_ANTI = re.compile(r"^anti(?:-|\b)", re.IGNORECASE)


class AliasFileError(Wh40kError, ValueError):
    """The alias table is malformed: names the file, the entry and what to fix."""


def split_section(name: str) -> tuple[str, str | None]:
    """Split an 11th-edition section number off a printed rule name.

    Returns ``(name, section)``; ``section`` is None when the name carries none. Forms read:
    ``[LETHAL HITS]24.23``, ``ADVANCE MOVE 09.06``, ``06.03 Hazard Rolls``.

    >>> split_section("[LETHAL HITS]24.23")
    ('[LETHAL HITS]', '24.23')
    >>> split_section("06.03 Hazard Rolls")
    ('Hazard Rolls', '06.03')
    >>> split_section("01.07.02")
    ('', '01.07.02')
    >>> split_section("Feel No Pain")
    ('Feel No Pain', None)
    """
    text = clean_line(name)
    if SECTION.match(text):
        return "", text
    match = _SECTION_IN_NAME.match(text)
    if match is None:
        return text, None
    if match.group("before"):
        return match.group("name").strip(), match.group("before")
    return match.group("name2").strip(), match.group("after")


def rule_key_from_name(name: str) -> str:
    """The key of a rule from its printed name: brackets and the parameter dropped, slugged.

    Parameters are the ``X`` of ``Feel No Pain X``, ``Deadly Demise D3``, ``Sustained Hits 2``,
    ``Rapid Fire X``, ``Scouts 6"``; every ``Anti-KEYWORD X+`` is the one rule ``anti``.
    Raises ``NormaliseError`` when the name has no letters.

    >>> rule_key_from_name("Feel No Pain 5+")
    'feel-no-pain'
    >>> rule_key_from_name("[SUSTAINED HITS D3]")
    'sustained-hits'
    >>> rule_key_from_name("Anti-X Y+"), rule_key_from_name("Anti-"), rule_key_from_name("ANTI")
    ('anti', 'anti', 'anti')
    >>> rule_key_from_name("Scouts 6\\""), rule_key_from_name("Twin-linked")
    ('scouts', 'twin-linked')
    """
    text = clean_line(name).strip("[]* ")
    previous = None
    while previous != text:
        previous = text
        text = _PARAMETER.sub("", text)
    if _ANTI.match(text):
        text = "anti"
    key = slug(text)
    if not key or not re.search(r"[a-z]", key):
        raise NormaliseError(f"rule name {name!r} has no letters: cannot make a rule key from it")
    return key


@dataclass(frozen=True)
class PartOf:
    """In ``edition``, the wording of rule ``key`` is part of the rule named ``rule_name``."""

    key: str  # canonical key of the rule that has no wording of its own in that edition
    edition: int
    rule_name: str  # as printed: "Hazardous"
    rule_key: str  # its key: "hazardous"
    note: str | None


@dataclass(frozen=True)
class AliasTable:
    """The alias table: ``aliases`` maps an alias key or section number to its canonical key;
    ``part_of`` maps (canonical key, edition) to the rule that holds its wording there."""

    aliases: dict[str, str]
    records: tuple[RuleAlias, ...]
    canonical_keys: frozenset[str]
    part_of: dict[tuple[str, int], PartOf] = field(default_factory=dict)


_RULE_FIELDS = {"key", "section", "title", "note", "aliases", "part_of"}
_ALIAS_FIELDS = {"name", "edition", "section", "note"}
_PART_OF_FIELDS = {"edition", "rule", "note"}


def read_alias_table(text: str, where: str = "rule_aliases.toml") -> AliasTable:
    """Read the alias table from TOML text (the format is described at the top of the file).

    Raises ``AliasFileError`` naming ``where``, the entry and the problem: an unknown field, a
    key that is not a slug, a malformed section number, an edition other than 10 or 11, an alias
    given twice, an alias that is also a canonical key (aliases never chain), or a ``part_of``
    that names the rule itself, is given twice for one edition or points to a rule that is
    itself part of another in that edition.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AliasFileError(f"{where}: not valid TOML ({exc}); fix the syntax") from exc
    unknown_top = set(data) - {"rule"}
    if unknown_top:
        raise AliasFileError(f"{where}: unknown top-level entries {sorted(unknown_top)}; only [[rule]] tables")
    rules = data.get("rule", [])
    canonical = [str(r.get("key", "")) for r in rules]
    canonical_set = set(canonical)
    aliases: dict[str, str] = {}
    records: list[RuleAlias] = []
    part_of: dict[tuple[str, int], PartOf] = {}

    def add(alias_key: str, rule_key: str, note: str | None, entry: str, edition: int | None = None) -> None:
        if alias_key in canonical_set:
            raise AliasFileError(
                f"{where}: {entry}: alias {alias_key!r} is itself a canonical key; "
                "aliases never chain: remove the alias or merge the two rules"
            )
        if alias_key in aliases:
            raise AliasFileError(
                f"{where}: {entry}: alias {alias_key!r} is already given for {aliases[alias_key]!r}; keep one"
            )
        aliases[alias_key] = rule_key
        records.append(RuleAlias(alias_key=alias_key, rule_key=rule_key, edition=edition, note=note))

    for number, rule in enumerate(rules, start=1):
        key = rule.get("key")
        entry = f"rule {number} ({key!r})"
        unknown = set(rule) - _RULE_FIELDS
        if unknown:
            raise AliasFileError(f"{where}: {entry}: unknown fields {sorted(unknown)}; known: {sorted(_RULE_FIELDS)}")
        if not isinstance(key, str) or not key or slug(key) != key:
            raise AliasFileError(f"{where}: {entry}: key must be a slug such as 'lethal-hits'")
        if canonical.count(key) > 1:
            raise AliasFileError(f"{where}: {entry}: key {key!r} is declared twice; merge the entries")
        section = rule.get("section")
        title = rule.get("title")
        note = rule.get("note")
        if section is not None:
            if not isinstance(section, str) or not SECTION.match(section):
                raise AliasFileError(f"{where}: {entry}: section must be a string such as '24.23', got {section!r}")
            section_note = f"11th edition section {section} {title or key}"
            add(section, key, f"{section_note}; {note}" if note else section_note, entry, 11)
        for alias in rule.get("aliases", []):
            unknown = set(alias) - _ALIAS_FIELDS
            if unknown:
                raise AliasFileError(
                    f"{where}: {entry}: alias {alias!r} has unknown fields {sorted(unknown)}; "
                    f"known: {sorted(_ALIAS_FIELDS)}"
                )
            name = alias.get("name")
            if not isinstance(name, str) or not name.strip():
                raise AliasFileError(f"{where}: {entry}: every alias needs a name")
            edition = alias.get("edition")
            if edition not in (None, 10, 11):
                raise AliasFileError(f"{where}: {entry}: alias {name!r}: edition must be 10 or 11, got {edition!r}")
            alias_key = rule_key_from_name(name)
            if alias_key == key:
                raise AliasFileError(
                    f"{where}: {entry}: alias {name!r} has the rule's own key {key!r}; it needs no alias"
                )
            parts = [f"{edition}th edition name {name!r}" if edition else f"also called {name!r}"]
            if alias.get("note"):
                parts.append(alias["note"])
            add(alias_key, key, ": ".join(parts), entry, edition)
            alias_section = alias.get("section")
            if alias_section is not None:
                if not isinstance(alias_section, str) or not SECTION.match(alias_section):
                    raise AliasFileError(
                        f"{where}: {entry}: alias {name!r}: section must be a string such as '01.07.02', "
                        f"got {alias_section!r}"
                    )
                add(alias_section, key, f"11th edition section {alias_section} {name}", entry, 11)
        for part in rule.get("part_of", []):
            if not isinstance(part, dict):
                raise AliasFileError(f"{where}: {entry}: part_of {part!r}: write {{ edition = 10, rule = \"...\" }}")
            unknown = set(part) - _PART_OF_FIELDS
            if unknown:
                raise AliasFileError(
                    f"{where}: {entry}: part_of {part!r} has unknown fields {sorted(unknown)}; "
                    f"known: {sorted(_PART_OF_FIELDS)}"
                )
            edition, name = part.get("edition"), part.get("rule")
            if edition not in (10, 11):
                raise AliasFileError(f"{where}: {entry}: part_of: edition must be 10 or 11, got {edition!r}")
            if not isinstance(name, str) or not name.strip():
                raise AliasFileError(f"{where}: {entry}: part_of needs the rule's name (rule = \"...\")")
            target = rule_key_from_name(name)
            if aliases.get(target, target) == key:
                raise AliasFileError(f"{where}: {entry}: part_of {name!r} is this rule itself; remove it")
            if (key, edition) in part_of:
                raise AliasFileError(f"{where}: {entry}: part_of is given twice for edition {edition}; keep one")
            part_of[(key, edition)] = PartOf(key, edition, name, target, part.get("note"))
    for (key, edition), part in part_of.items():
        if (aliases.get(part.rule_key, part.rule_key), edition) in part_of:
            raise AliasFileError(
                f"{where}: rule {key!r}: part_of {part.rule_name!r} in edition {edition} is itself part "
                "of another rule there; point to the rule that holds the wording"
            )
    return AliasTable(
        aliases=aliases, records=tuple(records), canonical_keys=frozenset(canonical_set), part_of=part_of
    )


def load_aliases(path: Path = ALIASES_FILE) -> list[RuleAlias | RulePart]:
    """The ``rule_aliases`` and ``rule_parts`` rows of the alias table (default: the shipped one).

    One ``RuleAlias`` per alias name (``hazardous-test`` -> ``hazard-rolls``) and per
    11th-edition section number (``24.23`` -> ``lethal-hits``); one ``RulePart`` per ``part_of``
    entry (``hazard-rolls`` in edition 10 is worded in ``hazardous``). Raises ``AliasFileError``
    (see ``read_alias_table``).
    """
    table = _table(path)
    parts = [
        RulePart(rule_key=p.key, edition=p.edition, part_of_rule_key=p.rule_key,  # type: ignore[arg-type]
                 part_of_rule_name=p.rule_name, note=p.note)
        for p in sorted(table.part_of.values(), key=lambda p: (p.key, p.edition))
    ]
    return [*table.records, *parts]


@lru_cache(maxsize=4)
def _table(path: Path) -> AliasTable:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AliasFileError(f"cannot read the alias table {path}: {exc.strerror}; reinstall the package") from exc
    return read_alias_table(text, where=str(path.name))


def canonical_rule_key(name_or_section: str, path: Path = ALIASES_FILE) -> str:
    """The canonical key of a rule, from a printed name or an 11th-edition section number.

    ``"Hazardous test"``, ``"hazard roll"`` and ``"06.03"`` -> ``hazard-rolls``;
    ``"[LETHAL HITS]24.23"``, ``"Lethal Hits"`` and ``"24.23"`` -> ``lethal-hits`` (11th edition,
    section 24.23 [LETHAL HITS]). A name that is not an alias is its own canonical key. A section
    number wins over the name printed with it. Raises ``NotFoundError`` for a section number the
    table does not list and ``NormaliseError`` for a name with no letters.
    """
    table = _table(path)
    name, section = split_section(name_or_section)
    if section is not None:
        if section in table.aliases:
            return table.aliases[section]
        if not name:
            raise NotFoundError(
                f"no rule with 11th-edition section {section} in {path.name}; "
                "add it to that rule's entry (section = ...)"
            )
    key = rule_key_from_name(name)
    return table.aliases.get(key, key)


def part_of(name_or_section: str, edition: int, path: Path = ALIASES_FILE) -> PartOf | None:
    """The rule that holds the wording of ``name_or_section`` in ``edition``, when the alias table
    says the rule has none of its own there (``part_of``); else None.

    The name is resolved as ``canonical_rule_key`` does (an alias, a section number). Unknown
    names and section numbers give None.

    >>> part_of("Hazardous test", 10).rule_name, part_of("06.03", 10).rule_key
    ('Hazardous', 'hazardous')
    >>> part_of("Hazardous test", 11) is None, part_of("Lethal Hits", 10) is None
    (True, True)
    """
    try:
        key = canonical_rule_key(name_or_section, path)
    except (NotFoundError, NormaliseError):
        return None
    return _table(path).part_of.get((key, edition))
