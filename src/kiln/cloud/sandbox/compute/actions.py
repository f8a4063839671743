"""Server actions (``POST /servers/{id}/action``) as timed tasks with Nova's 409 rules.

Each action checks the states it may start from (``states.require``), puts the server in
its transitional state now and schedules the rest (reference section 3.2 table); the
delay is ``sim.delay("compute", "server", <action>)``.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.compute import states, validation
from kiln.cloud.sandbox.compute.base import MAX_VERSION, SERVER, SERVICE, Version, at_least
from kiln.cloud.sandbox.compute.servers import ServerOps, flavor_snapshot

_RUNNING_OR_OFF = ("active", "stopped")
_SNAPSHOT_FROM = ("active", "stopped", "suspended", "paused")
CONSOLES = {
    "vnc": ("novnc", "xvpvnc"),
    "spice": ("spice-html5",),
    "rdp": ("rdp-html5",),
    "serial": ("serial",),
    "mks": ("webmks",),
}


class ServerActions(ServerOps):
    """The server action endpoint of the compute model."""

    def _simple(
        self,
        scope: CloudScope,
        server_id: str,
        action: str,
        operation: str,
        allowed: tuple[str, ...],
        task: str,
        final: dict[str, Any],
    ) -> None:
        self.sim.enter(scope, SERVICE, operation, server_id)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(server, action, allowed)
            start = states.state(server[states.VM_STATE], task)
            self.run_task(scope, server, operation, action, start=start, steps=[], final=final)

    def suspend_server(self, scope: CloudScope, server_id: str) -> None:
        final = states.state("suspended", None, states.SUSPENDED)
        self._simple(
            scope, server_id, "suspend", "suspend_server", ("active",), "suspending", final
        )

    def resume_server(self, scope: CloudScope, server_id: str) -> None:
        final = states.state("active", None, states.RUNNING)
        self._simple(scope, server_id, "resume", "resume_server", ("suspended",), "resuming", final)

    def stop_server(self, scope: CloudScope, server_id: str) -> None:
        final = states.state("stopped", None, states.SHUTDOWN)
        self._simple(
            scope, server_id, "stop", "stop_server", ("active", "error"), "powering-off", final
        )

    def start_server(self, scope: CloudScope, server_id: str) -> None:
        final = states.state("active", None, states.RUNNING)
        self._simple(scope, server_id, "start", "start_server", ("stopped",), "powering-on", final)

    def reboot_server(self, scope: CloudScope, server_id: str, reboot_type: str = "SOFT") -> None:
        if reboot_type not in ("SOFT", "HARD"):
            raise validation.invalid("type", "must be SOFT or HARD")
        task = "rebooting" if reboot_type == "SOFT" else "rebooting_hard"
        allowed = (
            ("active",) if reboot_type == "SOFT" else ("active", "stopped", "error", "suspended")
        )
        final = states.state("active", None, states.RUNNING)
        self._simple(scope, server_id, "reboot", "reboot_server", allowed, task, final)

    # -- resize --------------------------------------------------------------------------
    def resize_server(self, scope: CloudScope, server_id: str, flavor_ref: Any) -> None:
        self.sim.enter(scope, SERVICE, "resize_server", server_id)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(server, "resize", _RUNNING_OR_OFF)
            flavor = self.flavor_of(scope, flavor_ref)
            if flavor["id"] == server["_flavor"]["id"]:
                raise BadRequest("When resizing, instances must change flavor!")
            usage = self.usage(scope.project_id)
            self.check_quota(
                scope.project_id,
                "cores",
                usage["cores"],
                max(0, flavor["vcpus"] - server["_flavor"]["vcpus"]),
            )
            self.check_quota(
                scope.project_id,
                "ram",
                usage["ram"],
                max(0, flavor["ram"] - server["_flavor"]["ram"]),
            )
            vm_state = server[states.VM_STATE]
            self.run_task(
                scope,
                server,
                "resize_server",
                "resize",
                start={**states.state(vm_state, "resize_prep"), "_resized_from": vm_state},
                steps=[
                    states.state(vm_state, "resize_migrating"),
                    states.state(vm_state, "resize_migrated"),
                    states.state(vm_state, "resize_finish"),
                ],
                final={
                    **states.state("resized", None),
                    "_old_flavor": server["_flavor"],
                    "_flavor": flavor_snapshot(flavor),
                },
            )

    def confirm_server_resize(self, scope: CloudScope, server_id: str) -> None:
        self.sim.enter(scope, SERVICE, "confirm_server_resize", server_id)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(server, "confirmResize", ("resized",))
            back = server.get("_resized_from") or "active"
            power = states.RUNNING if back == "active" else states.SHUTDOWN
            self.run_task(
                scope,
                server,
                "confirm_server_resize",
                "confirm_resize",
                start={},
                steps=[],
                final={**states.state(back, None, power), "_old_flavor": None},
            )

    def revert_server_resize(self, scope: CloudScope, server_id: str) -> None:
        self.sim.enter(scope, SERVICE, "revert_server_resize", server_id)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(server, "revertResize", ("resized",))
            back = server.get("_resized_from") or "active"
            power = states.RUNNING if back == "active" else states.SHUTDOWN
            self.run_task(
                scope,
                server,
                "revert_server_resize",
                "revert_resize",
                start=states.state("resized", "resize_reverting"),
                steps=[],
                final={
                    **states.state(back, None, power),
                    "_flavor": server["_old_flavor"],
                    "_old_flavor": None,
                },
            )

    # -- rebuild, password, image --------------------------------------------------------
    def rebuild_server(
        self,
        scope: CloudScope,
        server_id: str,
        body: Mapping[str, Any],
        version: Version = MAX_VERSION,
    ) -> dict[str, Any]:
        self.sim.enter(scope, SERVICE, "rebuild_server", server_id)
        image_ref = validation.reference_id(body.get("imageRef"), "imageRef")
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(server, "rebuild", ("active", "stopped", "error"))
            self.boot_image(scope, image_ref, server["_flavor"], local_root=True)
            changes: dict[str, Any] = {}
            if "name" in body:
                changes["name"] = validation.name(body["name"])
            if "metadata" in body:
                changes["metadata"] = validation.metadata(body["metadata"] or {})
            if "description" in body and at_least(version, "2.19"):
                changes["description"] = validation.description(body["description"])
            if "user_data" in body and at_least(version, "2.57"):
                changes["OS-EXT-SRV-ATTR:user_data"] = validation.user_data(body["user_data"])
            if "key_name" in body and at_least(version, "2.54"):
                key = body["key_name"]
                if key is not None:
                    try:
                        key = self.keypair_doc(scope.user_id, str(key))["name"]
                    except Exception:
                        raise BadRequest("Invalid key_name provided.") from None
                changes["key_name"] = key
            server.update(changes)
            server["_admin_pass"] = body.get("adminPass") or secrets.token_urlsafe(9)
            if server["image"] != "":
                server["image"] = {"id": image_ref}
            back = "stopped" if server[states.VM_STATE] == "stopped" else "active"
            power = states.RUNNING if back == "active" else states.SHUTDOWN
            self.run_task(
                scope,
                server,
                "rebuild_server",
                "rebuild",
                start={**states.state(server[states.VM_STATE], "rebuilding"), "fault": None},
                steps=[states.state(server[states.VM_STATE], "rebuild_spawning")],
                final=states.state(back, None, power),
            )
            return server

    def change_server_password(self, scope: CloudScope, server_id: str, admin_pass: Any) -> None:
        self.sim.enter(scope, SERVICE, "change_server_password", server_id)
        if not isinstance(admin_pass, str):
            raise validation.invalid("adminPass")
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(server, "changePassword", ("active",))
            server["_admin_pass"] = admin_pass
            self.store.put(SERVER, server)

    def create_server_image(
        self, scope: CloudScope, server_id: str, name: Any, metadata: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """Snapshot the server into a Glance image (tasks ``image_*``); the image."""
        self.sim.enter(scope, SERVICE, "create_server_image", server_id)
        name = validation.name(name)
        properties = validation.metadata(metadata or {})
        glance = self.service("image")
        if glance is None:
            raise BadRequest("The image service is not available in this cloud.")
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(server, "createImage", _SNAPSHOT_FROM)
            base = server["image"].get("id", "") if isinstance(server["image"], dict) else ""
            image: dict[str, Any] = glance.create_snapshot_image(
                scope.project_id,
                name,
                {
                    **properties,
                    "image_type": "snapshot",
                    "instance_uuid": server_id,
                    "base_image_ref": base,
                    "owner_project_name": scope.project_id,
                    "user_id": scope.user_id,
                },
            )
            vm_state = server[states.VM_STATE]
            self.run_task(
                scope,
                server,
                "create_server_image",
                "create_image",
                start=states.state(vm_state, "image_snapshot"),
                steps=[
                    states.state(vm_state, "image_pending_upload"),
                    states.state(vm_state, "image_uploading"),
                ],
                final=states.state(vm_state, None),
            )
            return image

    def force_delete_server(self, scope: CloudScope, server_id: str) -> None:
        """Only a SOFT_DELETED server may be force-deleted (409 otherwise)."""
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(server, "forceDelete", ("soft-delete",))
        self.delete_server(scope, server_id)

    def remote_console(
        self, scope: CloudScope, server_id: str, protocol: str, console_type: str
    ) -> dict[str, Any]:
        """A (fake) console URL of a running server."""
        self.sim.enter(scope, SERVICE, "get_server_console", server_id)
        if console_type not in CONSOLES.get(protocol, ()):
            raise BadRequest(f"Unsupported console protocol/type {protocol}/{console_type}.")
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(
                server,
                "get_console",
                ("active",),
                task_states=(None, "image_snapshot", "image_pending_upload", "image_uploading"),
            )
        base = self.cloud.public_urls.get("compute", "http://sandbox.invalid/compute")
        token = secrets.token_urlsafe(16)
        url = f"{base}/console/{console_type}?token={token}"
        return {"protocol": protocol, "type": console_type, "url": url}
