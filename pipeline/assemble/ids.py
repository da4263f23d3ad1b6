"""The one datasheet-id scheme of every source.

``{edition}e/{faction id}/{name slug}`` (``10e/tyranids/termagants``): the same unit printed by two
sources gets the same id, so the merge joins them. A datasheet of a Combat Patrol is its own
datasheet (played only in that game mode): ``{scope}/{name slug}``, the scope naming the Combat
Patrol (``cp-sanctuary-guardians/canoness-adalya``). A source that prints two datasheets of one
name keeps the first id and gives the others ``{id}--{qualifier}`` (``--`` never occurs in a slug).
"""

from __future__ import annotations

from pipeline.normalise.text import clean_line, slug


def datasheet_id(edition: int | None, faction_id: str, name: str) -> str:
    """The id of a datasheet of a faction in an edition.

    >>> datasheet_id(10, "tyranids", "Termagants"), datasheet_id(11, "orks", "Boyz")
    ('10e/tyranids/termagants', '11e/orks/boyz')
    """
    return f"{edition}e/{faction_id}/{slug(name)}"


def scoped_datasheet_id(scope: str, name: str) -> str:
    """The id of a datasheet of one Combat Patrol (or another scope of its own).

    >>> scoped_datasheet_id("cp-sanctuary-guardians", "Canoness Adalya")
    'cp-sanctuary-guardians/canoness-adalya'
    """
    return f"{scope}/{slug(name)}"


def qualified_datasheet_id(base: str, qualifier: str) -> str:
    """The id of a second datasheet printed under the name of ``base``.

    >>> qualified_datasheet_id("10e/space-marines/captain", "Codex Supplement")
    '10e/space-marines/captain--codex-supplement'
    """
    return f"{base}--{slug(qualifier)}"


#: A faction's name as the sources print it (``read_faction_name``: case, quotes and hyphens
#: folded) -> the faction id every source files its datasheets under: the slug of Wahapedia's
#: faction name (``pipeline.extractors.wahapedia_csv``), so that the same datasheet from the
#: Wahapedia export, BattleScribe and Game Datacards gets one id. BattleScribe and Game Datacards
#: print the faction keyword (``Adeptus Astartes``, ``Heretic Astartes``, ``Asuryani``); a Space
#: Marine chapter is a faction of Space Marines, as Wahapedia files it.
FACTION_IDS: dict[str, str] = {
    "adepta sororitas": "adepta-sororitas",
    "adeptus astartes": "space-marines",
    "space marines": "space-marines",
    "black templars": "space-marines",
    "blood angels": "space-marines",
    "dark angels": "space-marines",
    "deathwatch": "space-marines",
    "space wolves": "space-marines",
    "ultramarines": "space-marines",
    "imperial fists": "space-marines",
    "iron hands": "space-marines",
    "raven guard": "space-marines",
    "salamanders": "space-marines",
    "white scars": "space-marines",
    "astra militarum": "astra-militarum",
    "agents of the imperium": "imperial-agents",
    "imperial agents": "imperial-agents",
    "imperial knights": "imperial-knights",
    "tyranids": "tyranids",
    "unaligned forces": "unaligned-forces",
    "adeptus titanicus": "adeptus-titanicus",
    "heretic astartes": "chaos-space-marines",
    "chaos space marines": "chaos-space-marines",
    "adeptus custodes": "adeptus-custodes",
    "adeptus mechanicus": "adeptus-mechanicus",
    "genestealer cults": "genestealer-cults",
    "orks": "orks",
    "necrons": "necrons",
    "grey knights": "grey-knights",
    "t'au empire": "tau-empire",
    "tau empire": "tau-empire",
    "leagues of votann": "leagues-of-votann",
    "death guard": "death-guard",
    "thousand sons": "thousand-sons",
    "world eaters": "world-eaters",
    "emperor's children": "emperors-children",
    "chaos knights": "chaos-knights",
    "legiones daemonica": "chaos-daemons",
    "chaos daemons": "chaos-daemons",
    "drukhari": "drukhari",
    "aeldari": "aeldari",
    "asuryani": "aeldari",
    "craftworlds": "aeldari",
    "harlequins": "aeldari",
    "ynnari": "aeldari",
    # 11th edition: the Chaos Daemons' legions are factions of their own in BSData; Wahapedia
    # files their datasheets under the parent faction
    "blood legions": "chaos-daemons",
    "plague legions": "chaos-daemons",
    "legions of excess": "chaos-daemons",
    "scintillating legions": "chaos-daemons",
}


#: Each faction id's name, as Wahapedia prints it: the ``factions`` row a source gives under its
#: own name for the faction (``Adeptus Astartes``) is given this name, so that sources agree.
FACTION_NAMES: dict[str, str] = {
    "adepta-sororitas": "Adepta Sororitas", "space-marines": "Space Marines", "astra-militarum": "Astra Militarum",
    "imperial-agents": "Imperial Agents", "imperial-knights": "Imperial Knights", "tyranids": "Tyranids",
    "unaligned-forces": "Unaligned Forces", "adeptus-titanicus": "Adeptus Titanicus",
    "chaos-space-marines": "Chaos Space Marines", "adeptus-custodes": "Adeptus Custodes",
    "adeptus-mechanicus": "Adeptus Mechanicus", "genestealer-cults": "Genestealer Cults", "orks": "Orks",
    "necrons": "Necrons", "grey-knights": "Grey Knights", "tau-empire": "T’au Empire",
    "leagues-of-votann": "Leagues of Votann", "death-guard": "Death Guard", "thousand-sons": "Thousand Sons",
    "world-eaters": "World Eaters", "emperors-children": "Emperor’s Children", "chaos-knights": "Chaos Knights",
    "chaos-daemons": "Chaos Daemons", "drukhari": "Drukhari", "aeldari": "Aeldari",
}


def read_faction_name(printed: str) -> str:
    """The form of a printed faction name that ``FACTION_IDS`` is keyed by.

    >>> read_faction_name(" T’au  Empire "), read_faction_name("EMPEROR'S CHILDREN")
    ("t'au empire", "emperor's children")
    """
    return " ".join(clean_line(printed).replace("’", "'").replace("‘", "'").casefold().split())


def faction_id(printed: str) -> str | None:
    """The faction id of a printed faction name (``FACTION_IDS``), or None when it is not known
    (the caller then uses ``slug(printed)`` and flags it).

    >>> faction_id("Adeptus Astartes"), faction_id("Asuryani"), faction_id("Emperor’s Children")
    ('space-marines', 'aeldari', 'emperors-children')
    >>> faction_id("Squats") is None
    True
    """
    return FACTION_IDS.get(read_faction_name(printed))
