"""The engine's side of the catalogue calls (kiln.rpc.catalog_messages): template
validation, versions and functions, resource types, engine services, build.

Nothing here belongs to a project except validation, which sees the caller's
project as ``OS::project_id``. Services are the rows of the engine table, with
Heat's up/down rule (seen within two report intervals).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from kiln.db import engine as dbe
from kiln.db import engines as edb
from kiln.engine import resource_type_catalog as types
from kiln.engine import template_catalog as templates
from kiln.engine.cloud_constraints import validating_with
from kiln.engine.service import StackService
from kiln.rpc import catalog_messages as cm

#: The engine runtime's default heartbeat interval (kiln.engine.worker), in seconds.
REPORT_INTERVAL = 5
#: Service record ids are UUIDs derived from engine ids (the engine table has no other).
_SERVICE_NAMESPACE = uuid.UUID("6f1c2a52-8d0e-4a8b-9c53-2f4e1b7d9a60")


class CatalogHandlers:
    """Handlers for the catalogue messages, over one StackService's dependencies."""

    def __init__(
        self,
        service: StackService,
        *,
        report_interval: float = REPORT_INTERVAL,
        revision: str = "unknown",
    ) -> None:
        self.service = service
        self.deps = service.deps
        self.report_interval = report_interval
        self.revision = revision

    def table(self) -> dict[type, Callable[[Any], Any]]:
        return {
            cm.ValidateTemplate: self.validate,
            cm.ListTemplateVersions: self.template_versions,
            cm.ListTemplateFunctions: self.template_functions,
            cm.ListResourceTypes: self.resource_types,
            cm.ShowResourceType: self.resource_type,
            cm.GenerateTemplate: self.generate_template,
            cm.ListServices: self.services,
            cm.GetBuildInfo: self.build_info,
        }

    # -- templates ----------------------------------------------------------------------------
    def validate(self, msg: cm.ValidateTemplate) -> cm.ValidatedTemplate:
        given = msg.input
        with validating_with(self.deps.scoped_cloud(msg.context)):
            document, used = self._validate(msg, given)
        return cm.ValidatedTemplate(document, tuple(used))

    def _validate(self, msg: cm.ValidateTemplate, given: Any) -> Any:
        return templates.validate_template(
            template=given.template,
            template_name=msg.template_name,
            environment=given.environment,
            environment_files=list(given.environment_files),
            files=dict(given.files or {}),
            parameters=dict(given.parameters or {}),
            project_id=msg.context.project_id,
            types=self.deps.registry,
            custom=self.deps.custom,
            show_nested=msg.show_nested,
        )

    def template_versions(self, msg: cm.ListTemplateVersions) -> cm.TemplateVersionList:
        return cm.TemplateVersionList(
            tuple(
                cm.TemplateVersionView(name, kind, tuple(aliases))
                for name, kind, aliases in templates.template_versions()
            )
        )

    def template_functions(self, msg: cm.ListTemplateFunctions) -> cm.TemplateFunctionList:
        found = templates.template_functions(msg.template_version, msg.with_condition_func)
        return cm.TemplateFunctionList(tuple(cm.TemplateFunctionView(n, d) for n, d in found))

    # -- resource types ---------------------------------------------------------------------------
    def resource_types(self, msg: cm.ListResourceTypes) -> cm.ResourceTypeList:
        found = types.list_types(
            self.deps.registry,
            name=msg.name,
            status=msg.support_status,
            version=msg.version,
        )
        return cm.ResourceTypeList(
            tuple(cm.ResourceTypeSummary(n, d if msg.with_description else "") for n, d in found)
        )

    def resource_type(self, msg: cm.ShowResourceType) -> cm.ResourceTypeSchema:
        return cm.ResourceTypeSchema(
            types.schema_document(
                self.deps.registry, msg.type_name, with_description=msg.with_description
            )
        )

    def generate_template(self, msg: cm.GenerateTemplate) -> cm.GeneratedTemplate:
        return cm.GeneratedTemplate(
            types.generate_template(self.deps.registry, msg.type_name, msg.template_type)
        )

    # -- services and build --------------------------------------------------------------------
    def services(self, msg: cm.ListServices) -> cm.ServiceList:
        now = self.deps.clock.now()
        with dbe.read(self.deps.db) as conn:
            engines = edb.list_engines(conn, now=now)
        alive = timedelta(seconds=2 * self.report_interval)
        return cm.ServiceList(
            tuple(
                cm.ServiceView(
                    id=str(uuid.uuid5(_SERVICE_NAMESPACE, e.id)),
                    engine_id=e.id,
                    host=e.host,
                    hostname=e.host,
                    binary="heat-engine",
                    topic="engine",
                    report_interval=max(1, math.ceil(self.report_interval)),
                    created_at=e.started_at,
                    updated_at=e.heartbeat_at,
                    deleted_at=None,
                    status="up" if e.heartbeat_age <= alive else "down",
                )
                for e in engines
            )
        )

    def build_info(self, msg: cm.GetBuildInfo) -> cm.BuildInfo:
        return cm.BuildInfo(self.revision)
