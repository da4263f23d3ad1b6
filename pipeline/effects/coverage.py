"""How much of the rules the effects cover, measured on a database.

Per edition and kind (stratagem, datasheet ability, detachment rule, enhancement, order, army rule): how many
rules there are, how many change an attack (``reader.changes_an_attack``: the wording names a
hit, wound or damage roll, a saving throw, an invulnerable save, Feel No Pain, a characteristic
of an attack (BS, WS, S, AP, A, D, T, Sv), a Critical Hit or Wound, the Benefit of Cover,
Stealth or a weapon ability the engine models, such as ``[LETHAL HITS]``; or a hand-kept entry
stands for it), how many of those the reader turns into at least one effect, and how many have a
hand-kept entry. A rule printed by several sources counts once per row (one row per source).
"""

from __future__ import annotations

from collections import Counter

from pipeline.effects.reader import changes_an_attack
from pipeline.effects.rules import ORDERS_RULE, RULE_KINDS, army_rule_key, orders

_RULES_SQL = {
    "stratagem": """
        SELECT 'stratagems', s.stratagem_id, s.name, coalesce(s.edition, src.edition),
               CASE WHEN lower(s."group") = 'core' THEN NULL ELSE (
                   SELECT CASE WHEN count(DISTINCT d.faction_id) = 1 THEN min(d.faction_id) END
                   FROM detachments d WHERE lower(trim(d.name)) = lower(trim(s."group"))) END, s.effect
        FROM stratagems s JOIN sources src USING (source_id) WHERE s.effect IS NOT NULL""",
    "datasheet-ability": """
        SELECT 'abilities', a.datasheet_id || '|' || a.kind || '|' || a.name, a.name,
               coalesce(d.edition, src.edition), d.faction_id, a.text
        FROM abilities a JOIN sources src USING (source_id) LEFT JOIN datasheets d USING (datasheet_id)
        WHERE a.text IS NOT NULL AND a.kind IN ('datasheet', 'wargear', 'other')""",
    "detachment-rule": """
        SELECT 'detachment_abilities', a.detachment_ability_id, a.name, src.edition, a.faction_id, a.text
        FROM detachment_abilities a JOIN sources src USING (source_id)""",
    "enhancement": """
        SELECT 'enhancements', e.enhancement_id, e.name, src.edition, (
                   SELECT CASE WHEN count(DISTINCT d.faction_id) = 1 THEN min(d.faction_id) END
                   FROM detachments d WHERE lower(trim(d.name)) = lower(trim(e.detachment))), e.text
        FROM enhancements e JOIN sources src USING (source_id)""",
}


def rules_in(con) -> list[dict]:
    """Every rule the reader reads in a database: kind, table, rule_id, name, edition, faction_id, text."""
    out = []
    for kind, sql in _RULES_SQL.items():
        for table, rule_id, name, edition, faction, text in con.execute(sql).fetchall():
            out.append(dict(kind=kind, table=table, rule_id=rule_id, name=name, edition=edition,
                            faction_id=faction, text=text))
    for key, source, locator, edition, text in con.execute(
            "SELECT r.rule_key, r.source_id, r.locator, coalesce(r.edition, s.edition), r.text FROM rule_texts r "
            "JOIN sources s USING (source_id) WHERE r.rule_key = ? AND r.language = 'en'", [ORDERS_RULE]).fetchall():
        for name, wording in orders(text):
            out.append(dict(kind="order", table="rule_texts", rule_id=f"{key}|{source}|{locator}|{name}", name=name,
                            edition=edition, faction_id="astra-militarum", text=wording))
    # army rules, as pipeline.effects.rules.rules_of finds them: a wording titled as a faction ability
    army: dict[str, set] = {}
    for name, faction in con.execute("SELECT DISTINCT a.name, d.faction_id FROM abilities a JOIN datasheets d "
                                     "USING (datasheet_id) WHERE a.kind = 'faction'").fetchall():
        army.setdefault(army_rule_key(name), set()).add(faction)
    for key, source, locator, title, edition, text in con.execute(
            "SELECT r.rule_key, r.source_id, r.locator, r.title, coalesce(r.edition, s.edition), r.text FROM rule_texts r "
            "JOIN sources s USING (source_id) WHERE r.language = 'en' AND r.text IS NOT NULL AND r.text <> '' "
            "AND r.erratum_id IS NULL AND r.rule_key <> ?", [ORDERS_RULE]).fetchall():
        factions = army.get(army_rule_key(title))
        if factions is not None:
            out.append(dict(kind="army-rule", table="rule_texts", rule_id=f"{key}|{source}|{locator}", name=title,
                            edition=edition, faction_id=next(iter(factions)) if len(factions) == 1 else None,
                            text=text))
    return out


def _origins(con) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    for table, rule_id, origin in con.execute("SELECT DISTINCT rule_table, rule_id, origin FROM effects").fetchall():
        found.setdefault((table, rule_id), set()).add(origin)
    return found


def classified(con, edition: int | None = None, kind: str | None = None, faction: str | None = None) -> list[dict]:
    """``rules_in`` with, per rule, ``changes_attack``, ``read`` (the reader gave an effect) and
    ``hand_kept``; filtered by edition, kind and faction id when given."""
    origins = _origins(con)
    out = []
    for rule in rules_in(con):
        if (edition is not None and rule["edition"] != edition or kind is not None and rule["kind"] != kind
                or faction is not None and rule["faction_id"] != faction):
            continue
        got = origins.get((rule["table"], rule["rule_id"]), set())
        rule.update(read="reader" in got, hand_kept="hand-kept" in got,
                    changes_attack=changes_an_attack(rule["text"]) or "hand-kept" in got)
        out.append(rule)
    return out


def coverage(con, edition: int | None = None, faction: str | None = None) -> list[dict]:
    """One row per edition and kind: ``rules``, ``change_an_attack``, ``read`` (of those, with an
    effect of the reader), ``hand_kept`` (of those, with a hand-kept entry), ``unread`` (neither) and
    ``read_share`` (read or hand-kept, of those that change an attack, in %)."""
    counts: Counter = Counter()
    for r in classified(con, edition, faction=faction):
        key = (r["edition"], r["kind"])
        counts[key + ("rules",)] += 1
        if r["changes_attack"]:
            counts[key + ("change",)] += 1
            counts[key + ("read",)] += r["read"]
            counts[key + ("hand",)] += r["hand_kept"]
            counts[key + ("unread",)] += not (r["read"] or r["hand_kept"])
    rows = []
    for ed, kind in sorted({k[:2] for k in counts}, key=lambda k: (k[0] or 0, RULE_KINDS.index(k[1]))):
        change = counts[(ed, kind, "change")]
        rows.append(dict(edition=ed, kind=kind, rules=counts[(ed, kind, "rules")], change_an_attack=change,
                         read=counts[(ed, kind, "read")], hand_kept=counts[(ed, kind, "hand")],
                         unread=counts[(ed, kind, "unread")],
                         read_share=round(100 * (change - counts[(ed, kind, "unread")]) / change, 1) if change else None))
    return rows


def unread(con, edition: int | None = None, kind: str | None = None, faction: str | None = None) -> list[dict]:
    """The rules that change an attack and that neither the reader nor a hand-kept entry covers."""
    return [dict(edition=r["edition"], kind=r["kind"], faction_id=r["faction_id"], name=r["name"],
                 rule=f"{r['table']}:{r['rule_id']}", text=r["text"])
            for r in classified(con, edition, kind, faction) if r["changes_attack"] and not (r["read"] or r["hand_kept"])]
