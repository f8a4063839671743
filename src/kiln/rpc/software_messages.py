"""Engine calls for software configs and deployments (heat-api.md C1-C4, D1-D6).

One frozen dataclass per request and per reply; every field a plain value.
In update requests ``None`` means "leave as it is".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kiln.rpc.messages import Context


# -- configs ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SoftwareConfigView:
    id: str
    project_id: str
    name: str | None
    group: str | None
    config: Any
    inputs: Sequence[Mapping[str, Any]]
    outputs: Sequence[Mapping[str, Any]]
    options: Mapping[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class SoftwareConfigList:
    configs: Sequence[SoftwareConfigView]


@dataclass(frozen=True)
class ListSoftwareConfigs:
    """``all_projects``: the policy allowed ``global_tenant``."""

    context: Context
    limit: int | None = None
    marker: str | None = None
    all_projects: bool = False


@dataclass(frozen=True)
class CreateSoftwareConfig:
    """The fields as the request body gave them (checked by the engine)."""

    context: Context
    name: Any = None
    group: Any = None
    config: Any = None
    inputs: Any = None
    outputs: Any = None
    options: Any = None


@dataclass(frozen=True)
class ShowSoftwareConfig:
    context: Context
    config_id: str


@dataclass(frozen=True)
class DeleteSoftwareConfig:
    context: Context
    config_id: str


# -- deployments --------------------------------------------------------------------------------
@dataclass(frozen=True)
class SoftwareDeploymentView:
    id: str
    project_id: str
    config_id: str
    server_id: str
    input_values: Any
    output_values: Any
    action: str | None
    status: str | None
    status_reason: str | None
    stack_user_project_id: str | None
    created_at: datetime
    updated_at: datetime | None


@dataclass(frozen=True)
class SoftwareDeploymentList:
    deployments: Sequence[SoftwareDeploymentView]


@dataclass(frozen=True)
class ListSoftwareDeployments:
    context: Context
    server_id: str | None = None


@dataclass(frozen=True)
class CreateSoftwareDeployment:
    context: Context
    config_id: Any = None
    server_id: Any = None
    input_values: Any = None
    action: Any = None
    status: Any = None
    status_reason: Any = None
    stack_user_project_id: Any = None


@dataclass(frozen=True)
class ShowSoftwareDeployment:
    context: Context
    deployment_id: str


@dataclass(frozen=True)
class UpdateSoftwareDeployment:
    context: Context
    deployment_id: str
    config_id: Any = None
    input_values: Any = None
    output_values: Any = None
    action: Any = None
    status: Any = None
    status_reason: Any = None


@dataclass(frozen=True)
class DeleteSoftwareDeployment:
    context: Context
    deployment_id: str


@dataclass(frozen=True)
class ServerDeploymentMetadata:
    """The configs deployed to one server, as in-instance agents read them."""

    context: Context
    server_id: str


@dataclass(frozen=True)
class ServerMetadata:
    configs: Sequence[SoftwareConfigView] = field(default_factory=tuple)


@dataclass(frozen=True)
class SoftwareDeleted:
    """A config or deployment is gone."""

    id: str
