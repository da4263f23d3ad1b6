"""Frozen records: light classes of named fields, for the records every attack's start makes.

``@dataclass(frozen=True)`` writes the methods of each class as source text and compiles them
when the class is made, about 1 ms a class: the 24 classes of ``pipeline.engine.declarations``
took some 23 ms of every attack's start. A subclass of ``FrozenRecord`` behaves as such a
dataclass for what those records need, with methods shared by every record (nothing compiled).
The declarations, and the records of the attack's own modules that no caller copies with
``dataclasses.replace`` or reads with ``asdict`` (``pipeline.targets.Target``, the command's
``Param``, the engine's wound options and event streams, a loadout) are such records; the
engine's public records (``Weapon``, ``Context``, ``Target``, ``AttackResult``, ...) stay
dataclasses.

What a ``FrozenRecord`` is:

- its fields are its annotations, in order, those of its base records first (``FIELDS``); an
  annotation with a value gives that field its default;
- made by position or keyword (``TypeError`` for a missing, unknown or repeated field, as a
  dataclass raises);
- frozen (``dataclasses.FrozenInstanceError`` on setting or deleting an attribute);
- equal when of the same class with equal fields, hashed by its fields (``TypeError`` for a
  field that cannot be hashed, a dict), shown as a dataclass is (``Cover(key='cover', ...)``).

It is no dataclass: ``dataclasses.replace``, ``asdict`` and ``fields`` do not take it
(``FIELDS`` lists the fields).

>>> class Point(FrozenRecord):
...     x: int
...     y: int = 0
>>> Point(1), Point(1, y=2) == Point(x=1, y=2), Point.FIELDS
(Point(x=1, y=0), True, ('x', 'y'))
"""

from __future__ import annotations

from typing import Any, ClassVar


class FrozenRecord:
    """The base of frozen records (see the module's docstring)."""

    #: The names of the fields, in order (the annotations of the base records first).
    FIELDS: ClassVar[tuple[str, ...]] = ()
    #: The default value of each field that has one.
    DEFAULTS: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = [name for name, kind in cls.__dict__.get("__annotations__", {}).items()
               if not str(kind).startswith(("ClassVar", "typing.ClassVar"))]
        cls.FIELDS = tuple(dict.fromkeys((*cls.FIELDS, *own)))
        defaults = dict(cls.DEFAULTS)
        for name in own:
            if name in cls.__dict__:
                defaults[name] = cls.__dict__[name]
            else:
                defaults.pop(name, None)  # a base's default, not this class's
        cls.DEFAULTS = defaults

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self.FIELDS
        if len(args) + len(kwargs) == len(fields):  # every field given, the common case
            if not kwargs:
                self.__dict__.update(zip(fields, args))
                return
            if kwargs.keys() == set(fields[len(args):]):  # the last ones by keyword
                self.__dict__.update(zip(fields, args))
                self.__dict__.update((f, kwargs[f]) for f in fields[len(args):])
                return
        name = type(self).__qualname__
        if len(args) > len(fields):
            raise TypeError(f"{name}.__init__() takes {len(fields) + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        values = dict(zip(fields, args))
        for key, value in kwargs.items():
            if key not in fields:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument {key!r}")
            if key in values:
                raise TypeError(f"{name}.__init__() got multiple values for argument {key!r}")
            values[key] = value
        if len(values) < len(fields):
            missing = [f for f in fields if f not in values and f not in self.DEFAULTS]
            if missing:
                raise TypeError(f"{name}.__init__() missing {len(missing)} required argument"
                                f"{'s' if len(missing) > 1 else ''}: {', '.join(repr(f) for f in missing)}")
            values = {f: values[f] if f in values else self.DEFAULTS[f] for f in fields}
        else:
            values = {f: values[f] for f in fields}
        self.__dict__.update(values)

    def _values(self) -> tuple:
        return tuple(self.__dict__[f] for f in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()  # type: ignore[attr-defined]
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{f}={self.__dict__[f]!r}' for f in self.FIELDS)})"

    def __setattr__(self, name: str, value: Any) -> None:
        import dataclasses

        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        import dataclasses

        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
