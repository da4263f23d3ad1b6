"""The hand-kept effects (``hand_kept.toml``): what the reader cannot read, named as such.

Each entry names its rule by kind, edition and name, quotes the words of the wording it stands
for and says why it is hand-kept. ``hand_kept_effects(rule)`` gives its ``Effect`` rows
(``origin = "hand-kept"``, ``note`` the reason) for a rule row whose kind, edition and name match
and whose wording holds the quoted words (a reworded rule loses the entry rather than keep a
stale one).
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

from pipeline.effects.vocabulary import EFFECT_KINDS, split_conditions
from pipeline.errors import InputError
from schemas.records import Effect

HAND_KEPT = Path(__file__).with_name("hand_kept.toml")
_FIELDS = {"rule_kind", "edition", "rule_name", "wording", "why", "side", "effect", "roll", "characteristic",
           "value", "parameter", "weapon_type", "conditions"}


@lru_cache(maxsize=None)
def entries(path: Path = HAND_KEPT) -> tuple[dict, ...]:
    """The entries of a hand-kept file, checked: every field known, the effect and conditions in
    the vocabulary, a rule name, its wording and why. Raises ``InputError`` naming the entry."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, entry in enumerate(data.get("effect", []), start=1):
        where = f"{path.name} entry {i} ({entry.get('rule_name', '?')})"
        unknown = set(entry) - _FIELDS
        missing = {"rule_kind", "rule_name", "wording", "why", "side", "effect"} - set(entry)
        if unknown or missing:
            raise InputError(f"{where}: " + (f"unknown field {sorted(unknown)[0]}" if unknown else
                                             f"missing field {sorted(missing)[0]}") + "; see the file's header")
        if entry["effect"] not in EFFECT_KINDS:
            raise InputError(f"{where}: effect {entry['effect']!r} is not in the vocabulary "
                             "(pipeline/effects/vocabulary.py)")
        try:
            split_conditions(entry.get("conditions"))
        except ValueError as exc:
            raise InputError(f"{where}: {exc}") from None
        out.append(entry)
    return tuple(out)


def _key(text: str) -> str:
    from pipeline.effects.rules import wording_key

    return wording_key(text)


def hand_kept_effects(rule, start: int = 0) -> list[Effect]:
    """The hand-kept ``Effect`` rows of one rule (``pipeline.effects.rules.Rule``), numbered from
    ``start``: those of the entries of its kind, edition and name whose wording its text holds."""
    out: list[Effect] = []
    for entry in entries():
        if (entry["rule_kind"] != rule.kind or entry.get("edition", rule.edition) != rule.edition
                or entry["rule_name"].lower() != rule.name.lower() or _key(entry["wording"]) not in _key(rule.text)):
            continue
        out.append(Effect(
            source_id=rule.source_id, locator=rule.locator, rule_table=rule.table, rule_id=rule.rule_id,
            rule_kind=rule.kind, rule_name=rule.name, edition=rule.edition, faction_id=rule.faction_id,
            position=start + len(out), side=entry["side"], effect=entry["effect"], roll=entry.get("roll"),
            characteristic=entry.get("characteristic"), value=entry.get("value"), parameter=entry.get("parameter"),
            weapon_type=entry.get("weapon_type"), conditions=entry.get("conditions"), wording=entry["wording"],
            origin="hand-kept", note=entry["why"]))
    return out
