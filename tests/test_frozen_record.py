"""``pipeline.frozen_record.FrozenRecord`` behaves as a frozen dataclass of the same fields."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from pipeline.frozen_record import FrozenRecord


class Base(FrozenRecord):
    key: str
    source: str


class Rule(Base):
    amount: int
    note: str = "none"


@dataclasses.dataclass(frozen=True)
class DataBase:
    key: str
    source: str


@dataclasses.dataclass(frozen=True)
class DataRule(DataBase):
    amount: int
    note: str = "none"


def test_fields_in_order_with_the_bases_first_and_defaults():
    assert Rule.FIELDS == ("key", "source", "amount", "note")
    assert Rule.DEFAULTS == {"note": "none"}
    rule = Rule("k", source="s", amount=2)
    assert (rule.key, rule.source, rule.amount, rule.note) == ("k", "s", 2, "none")
    assert Rule("k", "s", 2, "n").note == "n"


def test_repr_equality_and_hash_as_a_frozen_dataclass():
    rule, data = Rule("k", "s", 2), DataRule("k", "s", 2)
    assert repr(rule) == repr(data).replace("DataRule", "Rule") == "Rule(key='k', source='s', amount=2, note='none')"
    assert rule == Rule(key="k", source="s", amount=2) and rule != Rule("k", "s", 3)
    assert hash(rule) == hash(Rule("k", "s", 2)) == hash(("k", "s", 2, "none"))
    assert rule != Base("k", "s") and Base("k", "s") != rule  # another class is never equal
    assert len({rule, Rule("k", "s", 2), Rule("k", "s", 3)}) == 2
    assert pickle.loads(pickle.dumps(rule)) == rule


def test_frozen():
    rule = Rule("k", "s", 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rule.amount = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        del rule.key
    assert rule.amount == 2


@pytest.mark.parametrize("args, kwargs, message", [
    (("k", "s"), {}, "missing 1 required argument: 'amount'"),
    (("k",), {}, "missing 2 required arguments: 'source', 'amount'"),
    (("k", "s", 1, "n", "extra"), {}, "takes 5 positional arguments but 6 were given"),
    (("k", "s", 1), {"colour": "red"}, "unexpected keyword argument 'colour'"),
    (("k", "s", 1), {"key": "again"}, "multiple values for argument 'key'"),
])
def test_wrong_arguments_raise_type_error_as_a_dataclass_does(args, kwargs, message):
    with pytest.raises(TypeError, match=message):
        Rule(*args, **kwargs)
    with pytest.raises(TypeError):  # as the dataclass (in its words)
        DataRule(*args, **kwargs)


def test_an_unhashable_field_makes_the_record_unhashable():
    class Bounds(FrozenRecord):
        bounds: dict

    with pytest.raises(TypeError):
        hash(Bounds({"BS": (2, 6)}))
    assert Bounds({"BS": (2, 6)}) == Bounds({"BS": (2, 6)})
