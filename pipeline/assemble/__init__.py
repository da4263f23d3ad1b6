"""The assembly stage: printed values -> the records of ``schemas/``, the same way for every source.

An extractor (``pipeline.extractors``) knows one source's shape and nothing else: it finds a
datasheet, a weapon row, a model line, an ability, a composition line, and hands over what the
source prints, as text, with a locator (``pipeline.assemble.printed``). This package reads those
printed values once for every source:

- ``weapons.assemble_weapon``: a printed weapon profile -> ``WeaponProfile`` and its
  ``WeaponAbility`` rows, with flags, or a reject;
- ``models.assemble_model``: a printed model line -> ``ModelProfile``, with flags and data gaps;
  ``models.read_invulnerable``: an invulnerable save and its ``*`` note;
- ``protection``: an invulnerable save or a Feel No Pain given as an ability;
- ``datasheets.assemble_datasheet``: a printed datasheet -> ``Datasheet``, with its Starting
  Strength (``datasheets.starting_strength``);
- ``abilities.assemble_ability``: a printed ability -> ``Ability`` (the parameter split off a
  name printed alone: ``Deadly Demise D3``);
- ``composition.assemble_composition``: a printed unit-composition line -> ``UnitComposition``
  rows (``1 Sergeant and 9 Troopers`` is two), with flags;
- ``stratagems.assemble_stratagem``: a printed Stratagem -> ``Stratagem`` (its CP cost, its
  type without the word ``Stratagem``, its group, its WHEN / TARGET / EFFECT / RESTRICTIONS
  sections, split from one text where a source prints them so), with flags;
- ``loadouts.assemble_loadout``: a loadout line -> ``WargearLoadout``; ``keywords``: a keyword;
- ``ids``: the one datasheet-id scheme;
- ``collector.Collector``: one rule for duplicates, key conflicts, flags and data gaps, and one
  entity key (``collector.entity_key``), derived from each record's declared key.

So the same printed value gives the same stored value, flags and rejects from every source.
"""
