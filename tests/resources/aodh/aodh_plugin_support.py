"""Shared setup of the OS::Aodh::Alarm tests: a sandbox cloud with Aodh, and schema rows.

:func:`alarm_world` builds the in-process sandbox's alarming model and an adapter for one
project; :func:`alarm_resource` gives an Alarm plugin on a FakeContext using it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.alarming.adapter import AlarmingAdapter
from kiln.cloud.sandbox.alarming.model import AlarmingModel
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.resources.aodh.alarm import Alarm
from kiln.testing.plugin_context import FakeContext
from kiln.testing.schema_rows import (  # noqa: F401 - the tests import them from here
    NO_DEFAULT,
    Row,
    allowed,
    custom,
    in_range,
    schema_rows,
    undocumented,
)

PROJECT = "aodh-tests"


def alarm_world() -> tuple[SandboxCloud, AlarmingAdapter]:
    """A sandbox with the alarming service, and its client for :data:`PROJECT`."""
    cloud = SandboxCloud()
    cloud.add("alarming", AlarmingModel(cloud))
    cloud.alarming.seed()
    return cloud, AlarmingAdapter(cloud.alarming, CloudScope(project_id=PROJECT))


def alarm_resource(
    client: AlarmingAdapter, properties: Mapping[str, Any], name: str = "alarm"
) -> tuple[Alarm, FakeContext]:
    ctx = FakeContext.for_plugin(
        Alarm, properties, name=name, project_id=PROJECT, clients={"alarming": client}
    )
    return Alarm(ctx), ctx
