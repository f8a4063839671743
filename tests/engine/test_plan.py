"""kiln.engine.plan: the row that represents each resource name."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kiln.db.resources import Resource
from kiln.engine.plan import current_rows

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _row(row_id: str, name: str = "a", **kw: Any) -> Resource:
    base: dict[str, Any] = dict(
        id=row_id,
        stack_id="s",
        root_stack_id="s",
        name=name,
        type="T",
        physical_id=None,
        action="CREATE",
        status="COMPLETE",
        status_reason="",
        raw_template_id="t",
        requires=[],
        replaces=None,
        replaced_by=None,
        version=1,
        owner_traversal_id=None,
        owner_epoch=0,
        properties={},
        metadata={},
        reference_id=None,
        attributes={},
        nested_stack_id=None,
        created_at=T0,
        updated_at=T0,
    )
    return Resource(**{**base, **kw})


def test_an_unfinished_replacement_represents_the_name_even_at_the_same_time() -> None:
    # Regression: with equal creation times the older row could win on its id.
    old = _row("ffff")
    new = _row("0000", action="INIT", replaces="ffff")
    assert current_rows([old, new])["a"].id == "0000"
    assert current_rows([new, old])["a"].id == "0000"


def test_replaced_and_deleted_rows_never_represent_a_name() -> None:
    rows = [
        _row("1", replaced_by="2"),
        _row("2"),
        _row("3", name="b", action="DELETE", status="COMPLETE"),
    ]
    assert {n: r.id for n, r in current_rows(rows).items()} == {"a": "2"}
