"""``rows.row_type`` makes its row classes without ``namedtuple`` (which compiles a ``__new__``
per class): they must behave as ``namedtuple("Row", names, rename=True)`` does."""

from __future__ import annotations

import copy
import pickle
from collections import namedtuple

import pytest

from inspector.store.native.rows import row_type

NAMES = [("id", "name"), ("a", "b", "class", "a", "_x", "1st", "with space", "ok"), ("seq",),
         tuple(f"c{i}" for i in range(30))]


@pytest.mark.parametrize("names", NAMES, ids=lambda n: ",".join(n)[:30])
def test_a_row_behaves_as_the_namedtuple_of_its_columns(names: tuple[str, ...]) -> None:
    ours, theirs = row_type(names), namedtuple("Row", names, rename=True)
    values = list(range(100, 100 + len(names)))
    row, ref = ours._make(values), theirs._make(values)
    assert ours._fields == theirs._fields and ours.__match_args__ == theirs.__match_args__
    assert row == ref and tuple(row) == tuple(values) and isinstance(row, tuple) and hash(row) == hash(ref)
    assert [getattr(row, f) for f in ours._fields] == [getattr(ref, f) for f in theirs._fields]
    assert repr(row) == repr(ref) and row._asdict() == ref._asdict()
    first = ours._fields[0]
    assert row._replace(**{first: -1}) == ref._replace(**{first: -1})
    assert type(row._replace(**{first: -1})) is ours
    assert ours(*values) == row and copy.copy(row) == row and copy.deepcopy(row) == row
    with pytest.raises(ValueError):
        row._replace(no_such_field=1)
    with pytest.raises(TypeError):
        ours._make(values[:-1])
    with pytest.raises(TypeError):
        ours(*values, 1)
    with pytest.raises(AttributeError):
        setattr(row, first, 5)
    with pytest.raises(AttributeError):
        row.extra = 1   # type: ignore[attr-defined]
    assert row_type(names) is ours                    # one class per shape


def test_rows_refuse_pickling_as_namedtuples_rows_do() -> None:
    # neither namedtuple's dynamic "Row" nor ours can be found by name: both refuse the same way
    names = ("id", "name")
    for kind in (row_type(names), namedtuple("Row", names)):
        with pytest.raises((pickle.PicklingError, AttributeError)):
            pickle.dumps(kind._make([1, "x"]))
