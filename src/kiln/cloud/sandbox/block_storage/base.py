"""What every part of the simulated Cinder shares: lookups, ownership, statuses, fixtures.

The model is split by object kind (volumes, snapshots and backups, volume types); each
part is a class deriving from :class:`BlockStorageBase`, which holds the cloud and the
lookups the parts use on each other's objects. Store kinds: ``volume``, ``snapshot``,
``backup``, ``volume_type``, ``encryption`` (by volume type id).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, Forbidden, NotFound, OverLimit
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud

SERVICE = "block_storage"
AVAILABILITY_ZONE = "nova"
DEFAULT_TYPE = "__DEFAULT__"
MAX_VERSION = (3, 70)

_SEED_NAMESPACE = uuid.UUID("6a1e3c9d-52f4-4b61-8c2a-9e0d7b5f3a18")
#: the volume types of a fresh sandbox: name -> (description, extra specs)
SEED_TYPES: dict[str, tuple[str, dict[str, str]]] = {
    DEFAULT_TYPE: ("Default Volume Type", {}),
    "lvmdriver-1": ("LVM backend", {"volume_backend_name": "lvmdriver-1"}),
}

EXTENSIONS: tuple[tuple[str, str, str], ...] = (
    ("encryption", "VolumeTypeEncryption", "Encryption support for volume types."),
    ("backups", "Backups", "Backups support."),
    ("os-types-manage", "TypesManage", "Types manage support."),
    ("os-types-extra-specs", "TypesExtraSpecs", "Type extra specs support."),
    ("os-volume-actions", "VolumeActions", "Enable volume actions."),
    ("os-extended-snapshot-attributes", "ExtendedSnapshotAttributes", "Snapshot attributes."),
    ("os-vol-tenant-attr", "VolumeTenantAttribute", "Expose the owner project of a volume."),
    ("os-volume-type-access", "VolumeTypeAccess", "Volume type access support."),
    ("OS-SCH-HNT", "SchedulerHints", "Pass arbitrary key/value pairs to the scheduler."),
    ("os-availability-zone", "AvailabilityZones", "Describe availability zones."),
)


def seed_type_id(name: str) -> str:
    return str(uuid.uuid5(_SEED_NAMESPACE, name))


def project_of(document: Mapping[str, Any]) -> str | None:
    return (
        document.get("os-vol-tenant-attr:tenant_id")
        or document.get("os-extended-snapshot-attributes:project_id")
        or document.get("project_id")
    )


def final_state(fault_state: str | None, default: str) -> str:
    """The status an outcome fault leaves an object in (``ERROR`` -> ``error``)."""
    return (fault_state or default).lower()


def as_bool(value: Any, field: str) -> bool:
    """Cinder's lenient booleans (``true``, ``"True"``, ``"1"``, ``"yes"``...)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "on", "y", "t"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0", "no", "off", "n", "f"):
        return False
    raise BadRequest(f"Invalid input received: {field} must be a boolean, got {value!r}.")


def as_size(value: Any, field: str = "size") -> int:
    """A positive whole number of GiB (ints or digit strings)."""
    if isinstance(value, bool):
        raise BadRequest(f"Invalid input received: {field} must be an integer.")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"Invalid input received: {field} must be an integer.") from None
    if number < 1 or str(number) != str(value).strip():
        raise BadRequest(
            f"Invalid input received: {field} must be an integer greater than 0, got {value}."
        )
    return number


def check_metadata(metadata: Any) -> dict[str, str]:
    if not isinstance(metadata, Mapping):
        raise BadRequest("Invalid input received: metadata must be a dictionary.")
    for key, value in metadata.items():
        if not isinstance(key, str) or not 0 < len(key) <= 255:
            raise BadRequest("Invalid input received: metadata keys must be 1-255 characters.")
        if not isinstance(value, str) or len(value) > 255:
            raise BadRequest(
                f"Invalid input received: metadata value of {key} must be a string of "
                "at most 255 characters."
            )
    return dict(metadata)


class BlockStorageBase:
    """The cloud, the store, and the lookups shared by every part of the model."""

    def __init__(self, cloud: SandboxCloud) -> None:
        self.cloud = cloud
        self.store = cloud.store

    def now(self) -> str:
        """Cinder's timestamp format (``2024-05-01T12:00:00.000000``)."""
        return self.cloud.timestamp().rstrip("Z") + ".000000"

    def _enter(self, scope: CloudScope, operation: str, target: str | None = None) -> None:
        self.cloud.sim.enter(scope, SERVICE, operation, target)

    @staticmethod
    def _require_admin(scope: CloudScope) -> None:
        if not scope.is_admin:
            raise Forbidden("Policy doesn't allow this operation to be performed.")

    def _owned(self, kind: str, object_id: str, scope: CloudScope, label: str) -> dict[str, Any]:
        """The live document of ``kind``, NotFound unless the caller's project owns it."""
        document = self.store.get(kind, object_id)
        if document is None or (not scope.is_admin and project_of(document) != scope.project_id):
            raise NotFound(f"{label} {object_id} could not be found.", kind=f"{label}NotFound")
        return document

    def _volume(self, scope: CloudScope, volume_id: str) -> dict[str, Any]:
        return self._owned("volume", volume_id, scope, "Volume")

    def _type(self, name_or_id: str, scope: CloudScope | None = None) -> dict[str, Any]:
        """A volume type by id, then by name; private types only for admins."""
        admin = scope is None or scope.is_admin
        document = self.store.get("volume_type", name_or_id)
        if document is None:
            named = self.store.find("volume_type", name=name_or_id)
            document = named[0] if named else None
        if document is None or not (admin or document.get("is_public", True)):
            raise NotFound(
                f"Volume type with name or id {name_or_id} could not be found.",
                kind="VolumeTypeNotFound",
            )
        return document

    def _project_volumes(self, project_id: str) -> list[dict[str, Any]]:
        return [d for d in self.store.list("volume") if project_of(d) == project_id]

    def _check_volume_quota(self, project_id: str, count: int, gigabytes: int) -> None:
        volumes = self._project_volumes(project_id)
        sim = self.cloud.sim
        limit = sim.quota(project_id, "volumes")
        if count and len(volumes) + count > limit:
            raise OverLimit(
                f"VolumeLimitExceeded: Maximum number of volumes allowed ({limit}) exceeded "
                "for quota 'volumes'.",
                kind="overLimit",
            )
        used = sum(int(d.get("size") or 0) for d in volumes)
        limit = sim.quota(project_id, "gigabytes")
        if used + gigabytes > limit:
            raise OverLimit(
                f"VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds "
                f"allowed gigabytes quota. Requested {gigabytes}G, quota is {limit}G and "
                f"{used}G has been consumed.",
                kind="overLimit",
            )

    def _forget(self, kind: str) -> Callable[[str, dict[str, Any]], None]:
        """A store hook that removes the finished object (a completed delete)."""

        def forget(_kind: str, document: dict[str, Any]) -> None:
            self.store.delete(kind, document["id"])

        return forget

    def _encryption_of(self, type_id: str) -> dict[str, Any] | None:
        return self.store.get("encryption", type_id)
