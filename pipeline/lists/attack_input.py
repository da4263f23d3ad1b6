"""A listed unit as what an attack needs: its datasheet, and per model line the model count
and the weapons the models carry between them. Plain data for the engine work that builds on
the importer (``wh40k attack --list``); the engine itself is not changed here.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.lists.match import MatchedUnit


@dataclass(frozen=True)
class ChosenWeapon:
    """A weapon profile's name on the datasheet (``weapon_profiles.weapon_name``) and how many
    of it the model line carries in all (``4`` for two models with two fusion blasters each)."""

    weapon_name: str
    count: int


@dataclass(frozen=True)
class ModelLineForAttack:
    """``count`` models of the datasheet's ``model_name`` and their weapons."""

    model_name: str
    count: int
    weapons: tuple[ChosenWeapon, ...]


@dataclass(frozen=True)
class UnitForAttack:
    """A listed unit ready for the attack command: ``datasheet_id``, its model lines, the unit's
    wargear that is not a weapon (``Shield Drone``), and the printed names that matched nothing
    (the caller decides whether that is an error)."""

    datasheet_id: str
    model_lines: tuple[ModelLineForAttack, ...]
    other_wargear: tuple[str, ...]
    unmatched: tuple[str, ...]


def unit_for_attack(unit: MatchedUnit) -> UnitForAttack | None:
    """What the attack command needs of a matched unit; None for a unit matched to no
    datasheet. A model line matched to no model of the datasheet keeps its printed name (in
    ``unmatched`` too); weapons printed twice on a line are added up."""
    if unit.datasheet_id is None:
        return None
    lines = []
    other: list[str] = []
    unmatched: list[str] = []
    for model in unit.models:
        totals: dict[str, int] = {}
        for w in model.wargear:
            if w.kind == "weapon" and w.matched:
                totals[w.matched] = totals.get(w.matched, 0) + w.count
            elif w.kind == "wargear" and w.matched:
                other.append(w.matched)
            else:
                unmatched.append(w.printed)
        if model.matched is None:
            unmatched.append(model.printed)
        lines.append(ModelLineForAttack(model.matched or model.printed, model.count,
                                        tuple(ChosenWeapon(n, c) for n, c in totals.items())))
    for w in unit.wargear:
        (other if w.kind else unmatched).append(w.matched or w.printed)
    return UnitForAttack(unit.datasheet_id, tuple(lines), tuple(dict.fromkeys(other)), tuple(unmatched))


@dataclass(frozen=True)
class ListUnit:
    """A unit of an army list named for an attack (``AttackRequest.attacker_list`` /
    ``target_list``): ``data`` the list as exported (text, or a BattleScribe roster's bytes),
    ``unit`` the unit's name in it (``"Intercessor Squad#2"`` for the second of that name),
    ``source`` how messages name the list (its file name)."""

    data: str | bytes
    unit: str
    source: str = "the list"
