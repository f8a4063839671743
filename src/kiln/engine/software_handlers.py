"""The engine's side of the software config and deployment calls
(kiln.rpc.software_messages, heat-api.md 2.8).

Scoping follows Heat: a config is visible to its project (admins see every
config, by id and in lists); a deployment is visible to its project and to its
``stack_user_project_id`` (the in-instance agents' project), to admins by id.
Anything not visible is "not found". Quotas count per project; admins are
exempt. Deployments are stored only: nothing signals them or pushes their
metadata to servers yet.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kiln.core.errors import InvalidRestrictedAction, RequestLimitExceeded, StackValidationFailed
from kiln.db import engine as dbe
from kiln.db import software as swdb
from kiln.db.common import KEEP
from kiln.db.errors import NotFound
from kiln.engine.heat_errors import HeatNotFound, Invalid
from kiln.engine.service import StackService
from kiln.engine.software_io import check_text, config_fields
from kiln.rpc import software_messages as sm
from kiln.rpc.messages import Context

#: Heat's defaults of max_software_configs_per_tenant / max_software_deployments_per_tenant.
MAX_CONFIGS = 4096
MAX_DEPLOYMENTS = 4096
PROJECT_ID_LEN = 64


def config_view(found: swdb.SoftwareConfig) -> sm.SoftwareConfigView:
    return sm.SoftwareConfigView(
        id=found.id,
        project_id=found.project_id,
        name=found.name,
        group=found.group,
        config=found.config,
        inputs=tuple(found.inputs),
        outputs=tuple(found.outputs),
        options=found.options,
        created_at=found.created_at,
    )


def deployment_view(found: swdb.SoftwareDeployment) -> sm.SoftwareDeploymentView:
    return sm.SoftwareDeploymentView(
        id=found.id,
        project_id=found.project_id,
        config_id=found.config_id,
        server_id=found.server_id,
        input_values=found.input_values,
        output_values=found.output_values,
        action=found.action,
        status=found.status,
        status_reason=found.status_reason,
        stack_user_project_id=found.stack_user_project_id,
        created_at=found.created_at,
        updated_at=found.updated_at,
    )


def _config_missing(config_id: str) -> HeatNotFound:
    return HeatNotFound(f"Software config with id {config_id} not found")


def _deployment_missing(deployment_id: str) -> HeatNotFound:
    return HeatNotFound(f"Deployment with id {deployment_id} not found")


def _values(value: Any, what: str) -> Any:
    if value is not None and not isinstance(value, Mapping):
        raise StackValidationFailed("must be a map", path=(what,))
    return None if value is None else dict(value)


class SoftwareHandlers:
    """Handlers for the software config and deployment messages."""

    def __init__(
        self,
        service: StackService,
        *,
        max_configs: int = MAX_CONFIGS,
        max_deployments: int = MAX_DEPLOYMENTS,
    ) -> None:
        self.deps = service.deps
        self.max_configs = max_configs
        self.max_deployments = max_deployments

    def table(self) -> dict[type, Callable[[Any], Any]]:
        return {
            sm.ListSoftwareConfigs: self.list_configs,
            sm.CreateSoftwareConfig: self.create_config,
            sm.ShowSoftwareConfig: self.show_config,
            sm.DeleteSoftwareConfig: self.delete_config,
            sm.ListSoftwareDeployments: self.list_deployments,
            sm.CreateSoftwareDeployment: self.create_deployment,
            sm.ShowSoftwareDeployment: self.show_deployment,
            sm.UpdateSoftwareDeployment: self.update_deployment,
            sm.DeleteSoftwareDeployment: self.delete_deployment,
            sm.ServerDeploymentMetadata: self.server_metadata,
        }

    # -- visibility -------------------------------------------------------------------------
    @staticmethod
    def _visible_config(conn: Any, ctx: Context, config_id: str) -> swdb.SoftwareConfig:
        try:
            found = swdb.get_config(conn, config_id)
        except NotFound:
            raise _config_missing(config_id) from None
        if not ctx.is_admin and found.project_id != ctx.project_id:
            raise _config_missing(config_id)
        return found

    @staticmethod
    def _visible_deployment(conn: Any, ctx: Context, deployment_id: str) -> swdb.SoftwareDeployment:
        try:
            found = swdb.get_deployment(conn, deployment_id)
        except NotFound:
            raise _deployment_missing(deployment_id) from None
        owners = (found.project_id, found.stack_user_project_id)
        if not ctx.is_admin and ctx.project_id not in owners:
            raise _deployment_missing(deployment_id)
        return found

    def _usable_config(self, conn: Any, ctx: Context, config_id: Any) -> str:
        """A config id a deployment may name: 400 ``Invalid`` when it names nothing."""
        check_text(config_id, "config_id", limit=36, required=True)
        try:
            self._visible_config(conn, ctx, config_id)
        except HeatNotFound:
            raise Invalid(f"Config with id {config_id} not found") from None
        return str(config_id)

    # -- configs ----------------------------------------------------------------------------
    def list_configs(self, msg: sm.ListSoftwareConfigs) -> sm.SoftwareConfigList:
        ctx = msg.context
        project = None if (msg.all_projects or ctx.is_admin) else ctx.project_id
        with dbe.read(self.deps.db) as conn:
            found = swdb.list_configs(conn, project, limit=msg.limit, marker=msg.marker)
        return sm.SoftwareConfigList(tuple(config_view(c) for c in found))

    def create_config(self, msg: sm.CreateSoftwareConfig) -> sm.SoftwareConfigView:
        ctx = msg.context
        inputs, outputs, options = config_fields(
            msg.name, msg.group, msg.inputs, msg.outputs, msg.options
        )
        with dbe.write(self.deps.db) as conn:
            if not ctx.is_admin and swdb.count_configs(conn, ctx.project_id) >= self.max_configs:
                raise RequestLimitExceeded(
                    "Request limit exceeded: You have reached the maximum software configs "
                    f"per tenant, {self.max_configs}. Please delete some software configs."
                )
            created = swdb.create_config(
                conn,
                config_id=self.deps.new_id(),
                project_id=ctx.project_id,
                name=msg.name,
                group=msg.group,
                config=msg.config,
                inputs=inputs,
                outputs=outputs,
                options=options,
                now=self.deps.clock.now(),
            )
        return config_view(created)

    def show_config(self, msg: sm.ShowSoftwareConfig) -> sm.SoftwareConfigView:
        with dbe.read(self.deps.db) as conn:
            return config_view(self._visible_config(conn, msg.context, msg.config_id))

    def delete_config(self, msg: sm.DeleteSoftwareConfig) -> sm.SoftwareDeleted:
        with dbe.write(self.deps.db) as conn:
            found = self._visible_config(conn, msg.context, msg.config_id)
            if swdb.config_in_use(conn, found.id):
                raise InvalidRestrictedAction(
                    f"Software config with id {found.id} can not be deleted as it is "
                    "referenced by a deployment."
                )
            swdb.delete_config(conn, found.id)
        return sm.SoftwareDeleted(found.id)

    # -- deployments ------------------------------------------------------------------------
    def list_deployments(self, msg: sm.ListSoftwareDeployments) -> sm.SoftwareDeploymentList:
        with dbe.read(self.deps.db) as conn:
            found = swdb.list_deployments(conn, msg.context.project_id, server_id=msg.server_id)
        return sm.SoftwareDeploymentList(tuple(deployment_view(d) for d in found))

    def create_deployment(self, msg: sm.CreateSoftwareDeployment) -> sm.SoftwareDeploymentView:
        ctx = msg.context
        check_text(msg.server_id, "server_id", required=True)
        for value, what in ((msg.action, "action"), (msg.status, "status")):
            check_text(value, what)
        check_text(msg.stack_user_project_id, "stack_user_project_id", limit=PROJECT_ID_LEN)
        input_values = _values(msg.input_values, "input_values")
        with dbe.write(self.deps.db) as conn:
            config_id = self._usable_config(conn, ctx, msg.config_id)
            if (
                not ctx.is_admin
                and swdb.count_deployments(conn, ctx.project_id) >= self.max_deployments
            ):
                raise RequestLimitExceeded(
                    "Request limit exceeded: You have reached the maximum software deployments "
                    f"per tenant, {self.max_deployments}. Please delete some deployments."
                )
            created = swdb.create_deployment(
                conn,
                deployment_id=self.deps.new_id(),
                project_id=ctx.project_id,
                config_id=config_id,
                server_id=msg.server_id,
                input_values=input_values,
                action=msg.action or "INIT",
                status=msg.status or "COMPLETE",
                status_reason="" if msg.status_reason is None else str(msg.status_reason),
                stack_user_project_id=msg.stack_user_project_id,
                now=self.deps.clock.now(),
            )
        return deployment_view(created)

    def show_deployment(self, msg: sm.ShowSoftwareDeployment) -> sm.SoftwareDeploymentView:
        with dbe.read(self.deps.db) as conn:
            return deployment_view(self._visible_deployment(conn, msg.context, msg.deployment_id))

    def update_deployment(self, msg: sm.UpdateSoftwareDeployment) -> sm.SoftwareDeploymentView:
        """Heat applies only the fields given with a value (empty values are ignored)."""
        ctx = msg.context
        for value, what in ((msg.action, "action"), (msg.status, "status")):
            check_text(value, what)
        input_values = _values(msg.input_values, "input_values")
        output_values = _values(msg.output_values, "output_values")
        with dbe.write(self.deps.db) as conn:
            found = self._visible_deployment(conn, ctx, msg.deployment_id)
            config_id = self._usable_config(conn, ctx, msg.config_id) if msg.config_id else KEEP
            updated = swdb.update_deployment(
                conn,
                found.id,
                now=self.deps.clock.now(),
                config_id=config_id,
                input_values=input_values if input_values else KEEP,
                output_values=output_values if output_values else KEEP,
                action=msg.action or KEEP,
                status=msg.status or KEEP,
                status_reason=str(msg.status_reason) if msg.status_reason else KEEP,
            )
        return deployment_view(updated)

    def delete_deployment(self, msg: sm.DeleteSoftwareDeployment) -> sm.SoftwareDeleted:
        with dbe.write(self.deps.db) as conn:
            found = self._visible_deployment(conn, msg.context, msg.deployment_id)
            swdb.delete_deployment(conn, found.id)
        return sm.SoftwareDeleted(found.id)

    def server_metadata(self, msg: sm.ServerDeploymentMetadata) -> sm.ServerMetadata:
        with dbe.read(self.deps.db) as conn:
            found = swdb.server_configs(conn, msg.context.project_id, msg.server_id)
        return sm.ServerMetadata(tuple(config_view(c) for c in found))
