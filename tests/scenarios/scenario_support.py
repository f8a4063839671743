"""Templates and helpers shared by the scenario suite."""

from __future__ import annotations

from typing import Any

from kiln.testing.scenario import Scenario, make_thing_template

THREE = make_thing_template(
    {
        "net": {"size": 1, "polls": 2},
        "disk": {"size": 10, "polls": 1, "input": {"get_attr": ["net", "name"]}},
        "server": {
            "size": 2,
            "polls": 3,
            "input": {"get_resource": "disk"},
            "depends_on": ["net"],
        },
    },
    outputs={"server": {"get_attr": ["server", "input"]}},
)


def things(sc: Scenario) -> dict[str, dict[str, Any]]:
    """The cloud's live objects by the resource name in their physical name."""
    return {o.name.split("-")[1]: o.properties for o in sc.cloud.live()}


def resource_rows(sc: Scenario, stack_id: str) -> dict[str, Any]:
    from kiln.db import resources as rdb

    with sc.read() as conn:
        return {r.name: r for r in rdb.list_resources(conn, stack_id)}
