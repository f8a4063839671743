"""Engine calls about what the engine knows rather than about stacks: template
validation, template versions and functions, resource types, engine services
and the build (heat-api.md T1-T3, Y1-Y3, V1, B1). One frozen dataclass per
request and per reply; every field a plain value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kiln.rpc.messages import Context, StackInput


# -- templates ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ValidateTemplate:
    """Validate a template with its environment, as ``POST /validate`` gives them.

    The input is checked as for a stack create; text is parsed by the engine,
    so errors carry ``file:line:col``, ``template_name`` naming the text.
    """

    context: Context
    input: StackInput
    template_name: str = "<template>"
    show_nested: bool = False


@dataclass(frozen=True)
class ValidatedTemplate:
    """Heat's validate document, and every resource type it uses (nested ones too)."""

    document: Mapping[str, Any]
    resource_types: Sequence[str] = ()


@dataclass(frozen=True)
class ListTemplateVersions:
    context: Context


@dataclass(frozen=True)
class TemplateVersionView:
    version: str
    type: str
    aliases: Sequence[str] = ()


@dataclass(frozen=True)
class TemplateVersionList:
    versions: Sequence[TemplateVersionView]


@dataclass(frozen=True)
class ListTemplateFunctions:
    """The functions of a version given by full name or alias name."""

    context: Context
    template_version: str
    with_condition_func: bool = False


@dataclass(frozen=True)
class TemplateFunctionView:
    name: str
    description: str


@dataclass(frozen=True)
class TemplateFunctionList:
    functions: Sequence[TemplateFunctionView]


# -- resource types -----------------------------------------------------------------------------
@dataclass(frozen=True)
class ListResourceTypes:
    """Filters: ``name`` a regular expression matched at the start of the type name."""

    context: Context
    name: str | None = None
    support_status: str | None = None
    version: str | None = None
    with_description: bool = False


@dataclass(frozen=True)
class ResourceTypeSummary:
    name: str
    description: str = ""


@dataclass(frozen=True)
class ResourceTypeList:
    types: Sequence[ResourceTypeSummary]


@dataclass(frozen=True)
class ShowResourceType:
    context: Context
    type_name: str
    with_description: bool = False


@dataclass(frozen=True)
class ResourceTypeSchema:
    """The schema document of heat-api.md 3.12."""

    document: Mapping[str, Any]


@dataclass(frozen=True)
class GenerateTemplate:
    """A provider template exposing a type's properties and attributes (``cfn`` or ``hot``)."""

    context: Context
    type_name: str
    template_type: str = "cfn"


@dataclass(frozen=True)
class GeneratedTemplate:
    template: Mapping[str, Any]


# -- services and build -------------------------------------------------------------------------
@dataclass(frozen=True)
class ListServices:
    context: Context


@dataclass(frozen=True)
class ServiceView:
    """One engine process, as Heat's service records show it."""

    id: str
    engine_id: str
    host: str
    hostname: str
    binary: str
    topic: str
    report_interval: int
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    status: str


@dataclass(frozen=True)
class ServiceList:
    services: Sequence[ServiceView]


@dataclass(frozen=True)
class GetBuildInfo:
    context: Context


@dataclass(frozen=True)
class BuildInfo:
    engine_revision: str
