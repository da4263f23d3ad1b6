"""Errata as wordings: the wording before a mechanical erratum, derived from the one in force.

The sources print the amended wording (the core rules and the faction files already carry every
erratum); an errata document says what changed ("Change 9\\" to 8\\".", "Add 'FRAME'.",
"Remove 'Leader', add 'Support'."). Where the change is mechanical and its new words are found
once in the wording in force, undoing it gives the wording before: ``derive`` stores it as an
earlier ``RuleText`` of the same rule (undated: the wording of the publication before the
erratum) beside the amended one (dated by the errata document), both with the erratum's
``erratum_id`` and the errata source. Every other erratum is kept as text only, with the reason
in ``Erratum.derivation_note``.

Targets are found by name (the errata file's own ids are not the ids of the faction files):
a core rule by its rule key, a stratagem or enhancement by its name, a datasheet's keywords
(an erratum whose header names the Keywords section) or one of its abilities named in the
header, among the 11th-edition rows.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

from pipeline.normalise.text import slug
from schemas.records import (
    Ability, Datasheet, Enhancement, Erratum, ErratumTarget, Keyword, Record, RuleText, Source, Stratagem,
)

#: Quotes and dashes folded when the new words of an erratum are looked for (one character for
#: one, so that positions are kept).
_FOLD = str.maketrans({"”": '"', "“": '"', "″": '"', "’": "'", "‘": "'", "‑": "-", "–": "-"})


@dataclass(frozen=True)
class Current:
    """A wording in force that an erratum may target: its rule key, title, section and text;
    ``keywords`` True when the wording is a keyword list (", "-joined)."""

    rule_key: str
    title: str
    section: str | None
    text: str
    language: str = "en"
    keywords: bool = False


def undo(form: str, old: str | None, new: str | None, current: Current) -> tuple[str | None, str | None]:
    """The wording before an erratum of ``form`` (``change_form``) applied to ``current``, or
    None and why not.

    >>> undo("replace", '9"', '8"', Current("k", "K", None, 'within 8” of it'))
    ('within 9" of it', None)
    >>> undo("add", None, "FRAME", Current("k", "K", None, "VEHICLE, FRAME, TRANSPORT", keywords=True))
    ('VEHICLE, TRANSPORT', None)
    >>> undo("replace", "3", "6", Current("k", "K", None, "roll 6, or 6"))
    (None, "the new wording '6' is 2 times in the wording in force: which one changed is not known")
    """
    if form == "change-to":
        return None, "replaces the whole wording: the wording before it is in no source"
    if current.keywords:
        words = [w.strip() for w in current.text.split(",") if w.strip()]
        folded = [w.translate(_FOLD).upper() for w in words]
        if form in ("add", "remove-add"):
            want = (new or "").translate(_FOLD).upper()
            if want not in folded:
                return None, f"the added keyword {new!r} is not among the keywords in force"
            index = folded.index(want)
            if form == "add":
                del words[index]
            else:
                words[index] = old or ""
            return ", ".join(words), None
        if form == "remove":
            return ", ".join([*words, old or ""]), None
        return None, f"a {form} change of a keyword list"
    if form == "remove":
        return None, "deletes words: where they stood is not known"
    if form not in ("replace", "add", "remove-add") or not new:
        return None, f"a {form} change"
    text = current.text.translate(_FOLD)
    want = new.translate(_FOLD)
    count = len(re.findall(rf"(?<!\w){re.escape(want)}(?!\w)", text)) if want[:1].isalnum() else text.count(want)
    if count == 0:
        return None, f"the new wording {new!r} is not in the wording in force"
    if count > 1:
        return None, f"the new wording {new!r} is {count} times in the wording in force: which one changed is not known"
    if want[:1].isalnum():
        start = re.search(rf"(?<!\w){re.escape(want)}(?!\w)", text).start()  # type: ignore[union-attr]
    else:
        start = text.index(want)
    replacement = "" if form == "add" else (old or "")
    before = current.text[:start] + replacement + current.text[start + len(want):]
    return re.sub(r" +([.,;:])", r"\1", re.sub(r"  +", " ", before)).strip(), None


class _Index:
    """The wordings in force of the 11th edition, by what errata name them."""

    def __init__(self, records: list[Record], sources: dict[str, Source]) -> None:
        def edition(r: Record) -> int | None:
            return getattr(sources.get(getattr(r, "source_id", "")), "edition", None)

        self.rules: dict[tuple[str, str], list[RuleText]] = defaultdict(list)
        self.stratagems: dict[str, list[Stratagem]] = defaultdict(list)
        self.enhancements: dict[str, list[Enhancement]] = defaultdict(list)
        self.datasheets: dict[str, list[Datasheet]] = defaultdict(list)
        self.keywords: dict[str, list[Keyword]] = defaultdict(list)
        self.abilities: dict[str, list[Ability]] = defaultdict(list)
        for r in records:
            if isinstance(r, RuleText) and r.edition == 11 and r.erratum_id is None:
                self.rules[(r.rule_key, r.language)].append(r)
            elif edition(r) != 11:
                continue
            elif isinstance(r, Stratagem):
                self.stratagems[slug(r.name)].append(r)
            elif isinstance(r, Enhancement):
                self.enhancements[slug(r.name)].append(r)
            elif isinstance(r, Datasheet):
                self.datasheets[slug(r.name)].append(r)
            elif isinstance(r, Keyword):
                self.keywords[r.datasheet_id].append(r)
            elif isinstance(r, Ability):
                self.abilities[r.datasheet_id].append(r)
        rank = {sid: (s.version_date.toordinal() if s.version_date else 0) for sid, s in sources.items()}
        for rows in self.rules.values():
            rows.sort(key=lambda r: (-rank.get(r.source_id, 0), r.source_id, r.locator))

    def current(self, target: ErratumTarget, header: str, language: str) -> tuple[list[Current], str | None]:
        """The wordings in force the erratum targets (one per row found), or none and why."""
        kind, key = target.target_type, target.target_key
        if kind == "ruleContainer":
            rows = self.rules.get((key, language)) or []
            if not rows:
                return [], f"no {language} wording of the core rule {target.target_name!r} is stored"
            r = rows[0]
            return [Current(r.rule_key, r.title, r.section, r.text, language)], None
        if language != "en":
            return [], "the faction files are in English only"
        if kind == "stratagem":
            rows = self.stratagems.get(key) or []
            found = [Current(key, s.name, None, "\n".join(p for p in (s.when, s.target, s.effect) if p)) for s in rows[:1]]
            return found, None if found else f"no 11th-edition stratagem named {target.target_name!r} is stored"
        if kind == "enhancement":
            rows = self.enhancements.get(key) or []
            found = [Current(key, e.name, None, e.text) for e in rows[:1]]
            return found, None if found else f"no 11th-edition enhancement named {target.target_name!r} is stored"
        if kind == "datasheet":
            sheets = self.datasheets.get(key) or []
            if not sheets:
                return [], f"no 11th-edition datasheet named {target.target_name!r} is stored"
            sheet = sheets[0]
            if "keyword" in header.lower():
                words = [k.keyword for k in self.keywords.get(sheet.datasheet_id, [])]
                if not words:
                    return [], f"no keywords of {sheet.name!r} are stored"
                return [Current(f"{slug(sheet.name)}-keywords", f"{sheet.name} keywords", None, ", ".join(words),
                                keywords=True)], None
            for ability in self.abilities.get(sheet.datasheet_id, []):
                if ability.text and len(ability.name) > 3 and ability.name.lower() in header.lower():
                    return [Current(slug(ability.name), ability.name, None, ability.text)], None
            return [], "the header names no keyword section or stored ability of the datasheet"
        return [], f"no wording of the {kind} targets is stored (army rules and detachments are not rows of their own)"


def derive(records: list[Record], sources: dict[str, Source]) -> tuple[list[Record], list[RuleText]]:
    """Undo each mechanical erratum on the wording it targets.

    Returns the records with each ``Erratum`` given its ``derivation`` (``derived`` or
    ``text-only``, FAQs ``faq``) and ``derivation_note``, and the new ``RuleText`` rows: per
    erratum, target and language whose wording was derived, the wording before (undated) and the
    wording in force (dated by the errata source's ``version_date``), keyed by the target's rule
    key, with the erratum's id, source and a locator naming both.
    """
    from pipeline.extractors.gdc_rules import change_form  # the form as the parser reads it

    errata = [r for r in records if isinstance(r, Erratum)]
    if not errata:
        return records, []
    index = _Index(records, sources)
    targets: dict[str, list[ErratumTarget]] = defaultdict(list)
    for r in records:
        if isinstance(r, ErratumTarget):
            targets[r.erratum_id].append(r)
    english = {e.erratum_id: e for e in errata if e.language == "en"}
    outcome: dict[str, tuple[str, str | None]] = {}
    derived: list[RuleText] = []
    for e in errata:
        if e.kind != "erratum" or e.change is None or not e.text:
            continue
        form, old, new = change_form(e.text)
        if form is None:  # the translation reads otherwise: the English form holds
            continue
        header = (english.get(e.erratum_id) or e).heading or ""
        reasons = []
        source = sources.get(e.source_id)
        for target in sorted(targets.get(e.erratum_id, []), key=lambda t: t.position):
            found, why = index.current(target, header, e.language)
            if why:
                reasons.append(why)
            for current in found:
                before, why = undo(form, old, new, current)
                if before is None:
                    reasons.append(why or "")
                    continue
                where = f"erratum {e.position} ({e.publication}) on {target.target_name} [{e.language}]"
                common = dict(source_id=e.source_id, rule_key=current.rule_key, title=current.title,
                              section=current.section, edition=11, game_mode=None, language=e.language,
                              erratum_id=e.erratum_id)
                derived.append(RuleText(locator=f"{where}: before", effective_date=None, text=before, **common))
                derived.append(RuleText(locator=f"{where}: in force", text=current.text,
                                        effective_date=source.version_date if source else None, **common))
        if e.language == "en" or e.erratum_id not in outcome:
            got = any(r.erratum_id == e.erratum_id and r.language == e.language for r in derived)
            outcome[e.erratum_id] = ("derived", None) if got else ("text-only", reasons[0] if reasons else "no target to derive from")
    if not outcome:
        return records, derived
    out: list[Record] = []
    for r in records:
        if isinstance(r, Erratum) and r.erratum_id in outcome:
            status, note = outcome[r.erratum_id]
            r = r.model_copy(update={"derivation": status, "derivation_note": note})
        out.append(r)
    return out, derived


def erratum_counts(rows: Iterable[Erratum]) -> dict[str, int]:
    """Per derivation outcome, the errata (English rows) that have it."""
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        if r.language == "en":
            counts[r.derivation] += 1
    return dict(counts)
