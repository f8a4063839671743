"""The Resource base class: declarative schemas plus start/poll lifecycle hooks.

A plugin is one file: a subclass with ``properties_schema`` and
``attributes_schema`` (kiln.schema), decorated with ``@resource_type(NAME)``,
and a few short hooks. Every action is a pair: ``handle_<action>()`` starts it
and returns a *cookie* (JSON-able data the engine persists), and
``check_<action>_complete(cookie)`` polls it, returning True when done. The
engine releases the worker between polls, so a hook never sleeps. A missing
hook is a no-op success, as in Heat.

Plugins act only through ``self.ctx`` (ResourceContext): resolved properties,
the per-resource data store, the physical id, the cloud clients, the clock and
randomness. They never touch the engine or the database.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.core.errors import KilnError
from kiln.plugin.context import ResourceContext
from kiln.schema.properties import AttributeSchema, PropertySchema

Cookie = Any  # JSON-able state handed from handle_* to check_*_complete


class ResourceFailure(KilnError):
    """A resource action failed for a reason the user should see."""

    http_status = 400


class UpdateReplace(Exception):  # Heat's name (no Error suffix): a signal, not a failure
    """Raised by ``handle_update`` when the change needs a replacement after all."""


class Resource:
    """Base class of every resource plugin."""

    type_name: ClassVar[str] = ""
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {}
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {}
    update_policy_schema: ClassVar[Mapping[str, PropertySchema]] = {}
    #: attributes are computed at run time (any name may be asked for)
    dynamic_attributes: ClassVar[bool] = False
    #: accept any properties without validation (OS::Heat::None)
    accepts_any_properties: ClassVar[bool] = False
    #: a changed definition is recorded but never updated nor replaced (OS::Heat::None)
    ignores_changes: ClassVar[bool] = False
    supports_snapshot: ClassVar[bool] = False
    #: the resource runs a child stack: the engine also updates it when the parent's
    #: environment or files change, not only when its properties do
    owns_child_stack: ClassVar[bool] = False
    #: the physical name length limit of the cloud object
    physical_name_limit: ClassVar[int] = 255

    def __init__(self, ctx: ResourceContext) -> None:
        self.ctx = ctx

    # -- validation -----------------------------------------------------------------
    @classmethod
    def translate(cls, raw: Mapping[str, Any]) -> Mapping[str, Any]:
        """Raw template properties with deprecated names moved to their new ones.

        Heat's translation rules (``network_id`` -> ``network``): applied before the
        schema sees the properties, so a template using only the old name still gives
        the required new one. By default nothing moves.
        """
        return raw

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        """Checks across properties that the schema cannot express (reference: ``validate``).

        ``properties`` are typed, with defaults applied, and passed the schema. The
        registry runs this at stack validation when no value is still unknown;
        plugins call it again when they act. Error paths are relative to the
        properties map.
        """
        return []

    # -- properties and attributes ------------------------------------------------
    @property
    def properties(self) -> Mapping[str, Any]:
        return self.ctx.properties

    def get_attribute(self, name: str) -> Any:
        """The value of attribute ``name``; ``show`` defaults to ``_show()``."""
        if name == "show":
            return self._show()
        return self.ctx.data_get(f"attr:{name}")

    def _show(self) -> Any:
        return None

    def reference_id(self) -> Any:
        """What ``get_resource`` returns: the physical id, else the resource name."""
        return self.ctx.physical_id if self.ctx.physical_id else self.ctx.name

    # -- update decisions (pure; see kiln.plugin.decisions) ----------------------------
    def needs_replace(self, new_properties: Mapping[str, Any]) -> bool:
        """Replace even when every changed property is updatable."""
        return False

    def needs_replace_failed(self) -> bool:
        """A FAILED resource: replace it (True), or update it in place (False).

        Asked only of a resource in a FAILED state. By default it is replaced; a type
        whose cloud object can outlive a failed action (a server that reached ACTIVE)
        looks it up and keeps it when it is usable.
        """
        return True

    # -- create -----------------------------------------------------------------
    def find_existing(self) -> str | None:
        """After a crash between request and record: the physical id, if it exists."""
        return None

    def handle_create(self) -> Cookie:
        return None

    def check_create_complete(self, cookie: Cookie) -> bool:
        return True

    def poll_after(self, cookie: Cookie) -> float | None:
        """Seconds until the next poll is worth doing (None: the engine's backoff)."""
        return None

    # -- update -----------------------------------------------------------------
    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        return None

    def check_update_complete(self, cookie: Cookie) -> bool:
        return True

    # -- delete -----------------------------------------------------------------
    def handle_delete(self) -> Cookie:
        return None

    def check_delete_complete(self, cookie: Cookie) -> bool:
        return True

    # -- suspend, resume, check, snapshot -------------------------------------------
    def handle_suspend(self) -> Cookie:
        return None

    def check_suspend_complete(self, cookie: Cookie) -> bool:
        return True

    def handle_resume(self) -> Cookie:
        return None

    def check_resume_complete(self, cookie: Cookie) -> bool:
        return True

    def handle_check(self) -> Cookie:
        return None

    def check_check_complete(self, cookie: Cookie) -> bool:
        return True

    def handle_snapshot(self) -> Cookie:
        return None

    def check_snapshot_complete(self, cookie: Cookie) -> bool:
        return True

    def handle_snapshot_delete(self) -> Cookie:
        """``deletion_policy: Snapshot``: keep a snapshot, then delete (types with
        ``supports_snapshot``). By default a snapshot action, then the delete; a type
        whose cloud does both in one call (a volume backup) overrides the pair."""
        return {"stage": "snapshot", "inner": self.handle_snapshot()}

    def check_snapshot_delete_complete(self, cookie: Cookie) -> bool:
        # The cookie is kept by the engine between polls; moving to the delete stage
        # in place records that the snapshot is done.
        if cookie["stage"] == "snapshot":
            if not self.check_snapshot_complete(cookie["inner"]):
                return False
            cookie.update(stage="delete", inner=self.handle_delete())
        return self.check_delete_complete(cookie["inner"])

    def handle_signal(self, details: Mapping[str, Any] | None) -> None:
        raise ResourceFailure(f"Signal resource during {self.ctx.action} is not supported.")

    # -- replacement (called on the old resource; see docs/engine.md) ------------------
    # Each is a pair like the actions: the engine stores what the first one wrote in the
    # resource data (and its cookie) before it polls the second, and either may run again
    # after a crash, so record first and change the cloud in the check, idempotently.
    def prepare_for_replace(self) -> Cookie:
        """Before the replacement is created: record what must be freed (names, ports,
        addresses) and what restore_prev_rsrc needs to take it back."""
        return None

    def check_prepare_for_replace_complete(self, cookie: Cookie) -> bool:
        """Free what ``prepare_for_replace`` recorded; True when it is free."""
        return True

    def restore_prev_rsrc(self, replacement_id: str | None) -> Cookie:
        """A rollback (or a later update) goes back to this resource although it was
        prepared for a replacement: undo the preparation. ``replacement_id`` is the
        physical id of the replacement, if it was created (it may hold what was freed)."""
        return None

    def check_restore_prev_rsrc_complete(self, cookie: Cookie) -> bool:
        return True

    # -- stack snapshot restore ------------------------------------------------------------
    @classmethod
    def properties_from_snapshot(
        cls, properties: Mapping[str, Any], snapshot: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The template properties a restored stack gives the resource.

        ``properties`` are the snapshot template's (unresolved: they may hold
        functions); ``snapshot`` is what the stack snapshot kept of the resource:
        ``{"type", "resource_id", "resource_data"}`` (what ``handle_snapshot`` stored).
        By default the resource is restored from its properties.
        """
        return dict(properties)
