"""One collector of a source's records: duplicates, key conflicts, flags and data gaps.

The rules, the same for every source:

- a record whose key is new is kept;
- a record whose key is taken by one with the same values (its ``source_id`` and ``locator``
  aside: the same row printed twice, at another line) is a counted duplicate;
- a record whose key is taken by one with other values is rejected, with a reason naming the
  first one's locator and each differing field (``duplicate_key_conflict``; a weapon profile's
  is ``duplicate_profile_conflict`` and also flags the kept profile);
- a flag is keyed by (table, entity, flag, locator): the same flag with the same detail again is
  a counted duplicate, with another detail it is kept under ``<entity>#2``, ``#3``, ...;
- a data gap is keyed by (table, entity, field): a second one is a counted duplicate.

Every ``entity_key`` of a flag or a gap is derived from the declared key of the record it is
about (``entity_key``).
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field

from schemas.records import DataFlag, DataGap, Record, Reject, WeaponProfile, key_getter

_PROVENANCE = frozenset({"source_id", "locator"})


def key_value_text(name: str, value: object) -> str:
    """One value of a record key as it appears in an entity key.

    ``is_melee`` reads ``melee`` / ``ranged``; other booleans ``true`` / ``false``.

    >>> key_value_text("is_melee", True), key_value_text("line", 3), key_value_text("x", False)
    ('melee', '3', 'false')
    """
    if isinstance(value, bool):
        if name == "is_melee":
            return "melee" if value else "ranged"
        return "true" if value else "false"
    return str(value)


def entity_key(record: Record) -> str:
    """The ``entity_key`` of flags and gaps about ``record``: its declared key, ``|``-joined.

    >>> from schemas.records import Keyword
    >>> entity_key(Keyword(source_id="s", locator="l", datasheet_id="10e/x/y", keyword="FLY",
    ...                    is_faction_keyword=False))
    '10e/x/y|FLY'
    """
    return "|".join(key_value_text(n, getattr(record, n)) for n in record.__key__)


def content(record: Record) -> dict:
    """A record's values without its provenance (``source_id``, ``locator``)."""
    return record.model_dump(exclude=_PROVENANCE)


def differences(a: Record, b: Record) -> str:
    """The fields on which two records of one table differ, as ``field: a vs b``.

    >>> from schemas.records import Keyword
    >>> k = dict(source_id="s", locator="l", datasheet_id="d", keyword="FLY")
    >>> differences(Keyword(**k, is_faction_keyword=False), Keyword(**k, is_faction_keyword=True))
    'is_faction_keyword: False vs True'
    """
    ca, cb = content(a), content(b)
    return "; ".join(f"{k}: {_show(ca[k])} vs {_show(cb.get(k))}" for k in ca if ca[k] != cb.get(k))


def _show(value: object) -> str:
    if isinstance(value, dict) and "text" in value:  # a dice expression: its printed form
        return repr(value["text"])
    return repr(value)


def profile_summary(p: WeaponProfile) -> str:
    """A weapon profile in print order: ``24" A2 BS3+ S4 AP0 D1 [rapid fire 1]``."""
    rng = "Melee" if p.is_melee else (f'{p.range_inches}"' if p.range_inches is not None else "N/A")
    skill_text = f"{p.skill}+" if p.skill is not None else "N/A"
    return (
        f"{rng} A{p.attacks.text} {'WS' if p.is_melee else 'BS'}{skill_text} S{p.strength} "
        f"AP{p.armour_penetration} D{p.damage.text} [{p.abilities_text}]"
    )


class Outcome(enum.Enum):
    """What ``Collector.claim`` found for a record's key."""

    NEW = "new"
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"


@dataclass
class Collector:
    """The records, rejects and counted duplicates of one source (see the module docstring).

    ``records`` and ``rejects`` are in the order they were added; ``duplicates`` counts per
    record table.
    """

    source_id: str
    records: list[Record] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    duplicates: Counter[str] = field(default_factory=Counter)
    _seen: dict[tuple[str, tuple], Record] = field(default_factory=dict)
    _flags: dict[tuple[str, str, str, str], str] = field(default_factory=dict)
    _gaps: set[tuple[str, str, str]] = field(default_factory=set)

    # -- records

    def first(self, record: Record) -> Record | None:
        """The record already kept under ``record``'s key, if any."""
        return self._seen.get((record.__table__, key_getter(type(record))(record)))

    def claim(self, record: Record, ident: tuple[str, tuple] | None = None) -> tuple[Outcome, Record | None]:
        """Register ``record``'s key without keeping the record: (outcome, the first record).

        For a caller that counts rows itself (a tabular source counts per input row). ``ident``
        registers it under another (name, key) than (its table, its key): an input row's own.
        """
        if ident is None:
            ident = (record.__table__, key_getter(type(record))(record))
        seen = self._seen.get(ident)
        if seen is None:
            self._seen[ident] = record
            return Outcome.NEW, None
        if seen == record or content(seen) == content(record):
            return Outcome.DUPLICATE, seen
        return Outcome.CONFLICT, seen

    def conflict_reason(self, first: Record, record: Record) -> str:
        """The reject reason of a record whose key is taken by ``first`` with other values."""
        code = "duplicate_profile_conflict" if isinstance(record, WeaponProfile) else "duplicate_key_conflict"
        key = "(" + ", ".join(repr(x) for x in record.key()) + ")"
        return (f"{code}: key {key} already loaded from {getattr(first, 'locator', '?')} with "
                f"different values ({differences(first, record)})")

    def add(self, record: Record) -> Outcome:
        """Keep ``record``, count it as a duplicate, or reject it (a key conflict)."""
        outcome, first = self.claim(record)
        if outcome is Outcome.NEW:
            self.records.append(record)
        elif outcome is Outcome.DUPLICATE:
            self.duplicates[record.__table__] += 1
        else:
            assert first is not None
            self.reject_record(record, self.conflict_reason(first, record))
            if isinstance(record, WeaponProfile) and isinstance(first, WeaponProfile):
                made = self.conflict_flag(first, record)
                if made is not None:
                    self.records.append(made)
        return outcome

    def conflict_flag(self, first: WeaponProfile, record: WeaponProfile) -> DataFlag | None:
        """The ``duplicate_profile_conflict`` flag of a weapon profile rejected for a key taken
        by ``first`` with other values: both profiles, in print order (``new_flag``)."""
        return self.new_flag(record.__table__, entity_key(record), "duplicate_profile_conflict",
                             f"kept {first.locator}: {profile_summary(first)}; "
                             f"rejected {record.locator}: {profile_summary(record)}", record.locator)

    def extend(self, records: list[Record]) -> None:
        """``add`` each record (flags and gaps too: their own rules apply)."""
        for record in records:
            if isinstance(record, DataFlag):
                made = self.new_flag(record.table_name, record.entity_key, record.flag,
                                     record.detail, record.locator)
                if made is not None:
                    self.records.append(made)
            elif isinstance(record, DataGap):
                self.gap(record.table_name, record.entity_key, record.field, record.reason,
                         record.locator)
            else:
                self.add(record)

    # -- rejects

    def reject(self, table: str, locator: str, raw_text: str, reason: str) -> Reject:
        """Reject an input item of ``table`` with its raw text and reason."""
        reject = Reject(source_id=self.source_id, locator=locator, table_name=table,
                        raw_text=raw_text, reason=reason)
        self.rejects.append(reject)
        return reject

    def reject_record(self, record: Record, reason: str) -> Reject:
        """Reject a record that was read but cannot be kept (its JSON is the raw text)."""
        return self.reject(record.__table__, getattr(record, "locator", "?"), record.model_dump_json(), reason)

    # -- flags and gaps

    def new_flag(self, table: str, entity: str, code: str, detail: str, locator: str) -> DataFlag | None:
        """A ``DataFlag`` under the flag rules, or None when it repeats one with the same detail
        (then counted as a duplicate). The caller keeps it."""
        base, n = entity, 2
        while True:
            ident = (table, entity, code, locator)
            seen = self._flags.get(ident)
            if seen is None:
                break
            if seen == detail:
                self.duplicates["data_flags"] += 1
                return None
            entity, n = f"{base}#{n}", n + 1
        self._flags[ident] = detail
        return DataFlag(source_id=self.source_id, locator=locator, table_name=table,
                        entity_key=entity, flag=code, detail=detail)

    def flag(self, table: str, entity: str, code: str, detail: str, locator: str) -> None:
        """Keep a flag (``new_flag``)."""
        made = self.new_flag(table, entity, code, detail, locator)
        if made is not None:
            self.records.append(made)

    def gap(self, table: str, entity: str, field_name: str, reason: str, locator: str) -> None:
        """Keep a data gap: a value the source lost, never invented."""
        ident = (table, entity, field_name)
        if ident in self._gaps:
            self.duplicates["data_gaps"] += 1
            return
        self._gaps.add(ident)
        self.records.append(DataGap(source_id=self.source_id, locator=locator, table_name=table,
                                    entity_key=entity, field=field_name, reason=reason))
