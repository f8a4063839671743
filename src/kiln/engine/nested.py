"""Nested stacks: the engine's ``stacks`` client, and template resources.

``EngineNestedStacks`` is what ``ctx.client("stacks")`` gives a plugin: child
stacks of one parent resource, created through the same StackService (so a
child is an ordinary stack with a parent link, depth and root), polled by the
parent's task between steps, never waited on. It also hands a plugin what a
child inherits (the parent's environment, narrowed to the resource, and files)
and computes a child resource's attribute on demand, through the child row's
own plugin on a read-only context.

``TemplateResource`` implements a resource whose type resolves to a template
(reference template-language section 7). It is not a registered plugin: the
step runner picks it when the definition says the type is a provider template,
and hands it that template through ``ctx.client("provider")``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.db.errors import NotFound, StackExists
from kiln.engine.plan import current_rows
from kiln.engine.resource_context import EngineResourceContext
from kiln.plugin.names import short_id
from kiln.plugin.nested import CHILD_POLL_SECONDS, ChildState, NestedStacks, wait_for_child
from kiln.plugin.resource import Cookie, Resource

if TYPE_CHECKING:
    from kiln.db.stacks import Stack
    from kiln.engine.service import StackService
    from kiln.template.stack import StackDefinition

#: property key carrying the provider template's identity, so that a changed
#: provider template updates the nested stack even when properties are equal
TEMPLATE_KEY = "__provider_template__"


@dataclass(frozen=True)
class ParentLink:
    """Where a child stack hangs: its parent stack and resource."""

    owner_id: str
    root_id: str
    depth: int
    resource: str


class EngineNestedStacks:
    """Child stacks of one resource of one parent stack."""

    def __init__(
        self, service: StackService, parent: Stack, resource_name: str, resource_uuid: str
    ) -> None:
        self.service = service
        self.parent = parent
        self.resource_name = resource_name
        self.resource_uuid = resource_uuid

    def _caller(self) -> Any:
        from kiln.engine.service import Caller

        return Caller(
            self.parent.project_id,
            self.parent.user_id,
            roles=tuple(self.parent.user_roles or ()),
            trust_id=self.parent.trust_id,
        )

    def create(
        self,
        *,
        template: Mapping[str, Any],
        environment: Mapping[str, Any],
        files: Mapping[str, Any],
        parameters: Mapping[str, Any],
        timeout_mins: int | None = None,
    ) -> str:
        from kiln.engine.service import StackRequest

        name = f"{self.parent.name}-{self.resource_name}-{short_id(self.resource_uuid)}"
        request = StackRequest(
            name=name,
            template=template,
            environment=environment,
            files=files,
            parameters=parameters,
            timeout_mins=timeout_mins,
        )
        link = ParentLink(
            self.parent.id, self.parent.root_id, self.parent.nested_depth + 1, self.resource_name
        )
        try:
            return self.service.create_stack(self._caller(), request, parent=link)
        except StackExists:
            # Made already: by this very step, whose commit was lost with its database
            # connection (the step is run again), or by an engine that died after it.
            existing = self._own_child(name)
            if existing is None:
                raise
            return existing

    def _own_child(self, name: str) -> str | None:
        """The live child stack ``name`` of this resource, if there is one."""
        with dbe.read(self.service.deps.db) as conn:
            try:
                child = sdb.get_stack_by_name(conn, self.parent.project_id, name)
            except NotFound:
                return None
        if child.owner_id != self.parent.id or child.parent_resource != self.resource_name:
            return None
        return child.id

    def update(
        self,
        stack_id: str,
        *,
        template: Mapping[str, Any],
        environment: Mapping[str, Any],
        files: Mapping[str, Any],
        parameters: Mapping[str, Any],
    ) -> None:
        from kiln.engine.service import StackRequest

        stack = self.service.get_stack(stack_id)
        request = StackRequest(
            name=stack.name,
            template=template,
            environment=environment,
            files=files,
            parameters=parameters,
        )
        self.service.update_stack(self._caller(), stack_id, request)

    def delete(self, stack_id: str) -> None:
        try:
            stack = self.service.get_stack(stack_id)
        except NotFound:
            return
        if stack.deleted_at is None and not (
            stack.action == "DELETE" and stack.status == "IN_PROGRESS"
        ):
            self.service.delete_stack(self._caller(), stack_id)

    def state(self, stack_id: str) -> ChildState | None:
        try:
            stack = self.service.get_stack(stack_id)
        except NotFound:
            return None
        if stack.deleted_at is not None:
            return None
        return ChildState(stack.action, stack.status, stack.status_reason)

    def outputs(self, stack_id: str) -> dict[str, Any]:
        return {k: v.value for k, v in self.service.outputs(stack_id).items()}

    def resource(self, stack_id: str, name: str) -> tuple[Any, dict[str, Any]] | None:
        for row in self.service.resources(stack_id):
            if row.name == name:
                return row.reference_id, dict(row.attributes)
        return None

    def resource_attribute(self, stack_id: str, name: str, attribute: str) -> Any:
        return self.resource_attributes(stack_id, [name], attribute)[0]

    def resource_attributes(self, stack_id: str, names: Sequence[str], attribute: str) -> list[Any]:
        # Each child row's plugin, on a read-only context: what it would store now. The
        # stack, its rows and its template are read once for all of them.
        deps = self.service.deps
        runner = self.service.runner
        with dbe.read(deps.db) as conn:
            try:
                stack = sdb.get_stack(conn, stack_id)
            except NotFound:
                return [None for _ in names]
            rows = current_rows(rdb.list_resources(conn, stack_id))
            found = [rows.get(name) for name in names]
            compiled = {
                row.raw_template_id: runner.compiled_for(conn, stack, row.raw_template_id)
                for row in found
                if row is not None
            }
            data = {row.id: rdb.get_resource_data(conn, row.id) for row in found if row}
        values: list[Any] = []
        for name, row in zip(names, found, strict=True):
            if row is None:
                values.append(None)
                continue
            plugin_cls = runner._plugin_for(compiled[row.raw_template_id], name, row.type)
            if plugin_cls is None:
                values.append(None)
                continue
            ctx = EngineResourceContext(
                name=name,
                type_name=row.type,
                stack_name=stack.name,
                stack_id=stack.id,
                project_id=stack.project_id,
                action=row.action,
                properties=row.properties,
                metadata=row.metadata,
                resource_uuid=row.id,
                clock=deps.clock,
                stored_physical_id=row.physical_id,
                stored_data=data[row.id],
                clients={
                    **deps.clients,
                    "stacks": EngineNestedStacks(self.service, stack, name, row.id),
                },
                cloud=deps.scoped_cloud(stack),
                name_limit=plugin_cls.physical_name_limit,
                rng=deps.rng,
            )
            values.append(plugin_cls(ctx).get_attribute(attribute))
        return values

    def _parent_definition(self) -> StackDefinition:
        # Read afresh: ``self.parent`` may be a cached row from an older template.
        with dbe.read(self.service.deps.db) as conn:
            stack = sdb.get_stack(conn, self.parent.id)
            compiled = self.service.runner.compiled_for(conn, stack, stack.raw_template_id)
        return compiled.definition

    def parent_environment(self) -> dict[str, Any]:
        environment = self._parent_definition().environment
        return environment.child(self.resource_name, {}, exclude_type=None).to_dict()

    def parent_files(self) -> dict[str, Any]:
        return dict(self._parent_definition().files)


@dataclass(frozen=True)
class ProviderSpec:
    """The provider template of one template resource, ready to become a stack."""

    template: Mapping[str, Any]
    environment: Mapping[str, Any]
    files: Mapping[str, Any]
    location: str = ""
    arn_prefix: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def identity(self) -> str:
        # Files count too: a template deeper in the tree may have changed.
        text = json.dumps(
            [self.template, self.environment, self.files], sort_keys=True, default=str
        )
        return hashlib.sha256(text.encode()).hexdigest()


class TemplateResource(Resource):
    """A resource implemented by a provider template (a nested stack)."""

    type_name = ""
    accepts_any_properties = True
    dynamic_attributes = True
    owns_child_stack = True

    def _stacks(self) -> NestedStacks:
        stacks: NestedStacks = self.ctx.client("stacks")
        return stacks

    def _spec(self) -> ProviderSpec:
        spec: ProviderSpec = self.ctx.client("provider")
        return spec

    def handle_create(self) -> Cookie:
        spec = self._spec()
        stack_id = self._stacks().create(
            template=spec.template, environment=spec.environment, files=spec.files, parameters={}
        )
        self.ctx.set_physical_id(stack_id)
        return {"stack": stack_id}

    def check_create_complete(self, cookie: Cookie) -> bool:
        return wait_for_child(self._stacks(), cookie, "CREATE")

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        spec = self._spec()
        stack_id = self.ctx.physical_id
        if stack_id is None:
            return self.handle_create()
        self._stacks().update(
            stack_id,
            template=spec.template,
            environment=spec.environment,
            files=spec.files,
            parameters={},
        )
        return {"stack": stack_id}

    def check_update_complete(self, cookie: Cookie) -> bool:
        return wait_for_child(self._stacks(), cookie, "UPDATE")

    def handle_delete(self) -> Cookie:
        stack_id = self.ctx.physical_id
        if stack_id is None:
            return None
        self._stacks().delete(stack_id)
        return {"stack": stack_id}

    def check_delete_complete(self, cookie: Cookie) -> bool:
        return wait_for_child(self._stacks(), cookie, "DELETE")

    def poll_after(self, cookie: Cookie) -> float | None:
        return CHILD_POLL_SECONDS

    def get_attribute(self, name: str) -> Any:
        stack_id = self.ctx.physical_id
        if stack_id is None:
            return None
        stacks = self._stacks()
        if name.startswith("resource."):
            inner, _, attr = name[len("resource.") :].partition(".")
            found = stacks.resource(stack_id, inner)
            if found is None:
                return None
            reference, attributes = found
            return attributes.get(attr) if attr else reference
        if name == "show":
            return None
        return stacks.outputs(stack_id).get(name)

    def reference_id(self) -> Any:
        stack_id = self.ctx.physical_id
        if stack_id is None:
            return self.ctx.name
        outputs = self._stacks().outputs(stack_id)
        if "OS::stack_id" in outputs:
            return outputs["OS::stack_id"]
        return f"{self._spec().arn_prefix}/{stack_id}"
