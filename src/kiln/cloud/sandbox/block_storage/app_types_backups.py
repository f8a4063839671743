"""Cinder REST resources for snapshots, backups, volume types, encryption and extensions.

Routes under ``/v3/{project_id}`` next to the volume routes of
:mod:`kiln.cloud.sandbox.block_storage.app` (reference simulated-cloud-api.md 5.2-5.3).
"""

from __future__ import annotations

import falcon

from kiln.cloud.sandbox.block_storage.app_base import ProjectResource, json_body_key
from kiln.cloud.sandbox.block_storage.base import AVAILABILITY_ZONE
from kiln.cloud.sandbox.block_storage.model import BlockStorageModel
from kiln.cloud.sandbox.rest import json_body, query

Req = falcon.Request
Resp = falcon.Response


class Snapshots(ProjectResource):
    def on_get(self, req: Req, resp: Resp, project_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        resp.media = {"snapshots": self.model.list_snapshots(scope, query(req))}

    def on_post(self, req: Req, resp: Resp, project_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        snapshot = self.model.create_snapshot(scope, json_body_key(json_body(req), "snapshot"))
        resp.status = falcon.HTTP_202
        resp.media = {"snapshot": snapshot}


class Snapshot(ProjectResource):
    def on_get(self, req: Req, resp: Resp, project_id: str, snapshot_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        resp.media = {"snapshot": self.model.get_snapshot(scope, snapshot_id)}

    def on_delete(self, req: Req, resp: Resp, project_id: str, snapshot_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        self.model.delete_snapshot(scope, snapshot_id)
        resp.status = falcon.HTTP_202


class Backups(ProjectResource):
    def on_get(self, req: Req, resp: Resp, project_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        backups = self.model.list_backups(scope, query(req))
        resp.media = {"backups": [{"id": b["id"], "name": b["name"], "links": []} for b in backups]}

    def on_post(self, req: Req, resp: Resp, project_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        backup = self.model.create_backup(scope, json_body_key(json_body(req), "backup"))
        resp.status = falcon.HTTP_202
        resp.media = {"backup": {"id": backup["id"], "name": backup["name"], "links": []}}


class BackupsDetail(ProjectResource):
    def on_get(self, req: Req, resp: Resp, project_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        resp.media = {"backups": self.model.list_backups(scope, query(req))}


class Backup(ProjectResource):
    def on_get(self, req: Req, resp: Resp, project_id: str, backup_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        resp.media = {"backup": self.model.get_backup(scope, backup_id)}

    def on_delete(self, req: Req, resp: Resp, project_id: str, backup_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        self.model.delete_backup(scope, backup_id)
        resp.status = falcon.HTTP_202


class BackupRestore(ProjectResource):
    def on_post(self, req: Req, resp: Resp, project_id: str, backup_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        body = json_body_key(json_body(req), "restore")
        resp.status = falcon.HTTP_202
        resp.media = {"restore": self.model.restore_backup(scope, backup_id, body)}


class Types(ProjectResource):
    def on_get(self, req: Req, resp: Resp, project_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        resp.media = {"volume_types": self.model.list_types(scope)}

    def on_post(self, req: Req, resp: Resp, project_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        body = json_body_key(json_body(req), "volume_type")
        resp.media = {"volume_type": self.model.create_type(scope, body)}


class Type(ProjectResource):
    def on_get(self, req: Req, resp: Resp, project_id: str, type_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        resp.media = {"volume_type": self.model.get_type(scope, type_id)}

    def on_delete(self, req: Req, resp: Resp, project_id: str, type_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        self.model.delete_type(scope, type_id)
        resp.status = falcon.HTTP_202


class Encryption(ProjectResource):
    def on_get(self, req: Req, resp: Resp, project_id: str, type_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        resp.media = self.model.get_encryption(scope, type_id)

    def on_post(self, req: Req, resp: Resp, project_id: str, type_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        body = json_body_key(json_body(req), "encryption")
        resp.media = {"encryption": self.model.create_encryption(scope, type_id, body)}


class EncryptionItem(ProjectResource):
    """``/types/{id}/encryption/{x}``: ``x`` is not checked (clients send anything)."""

    def on_put(self, req: Req, resp: Resp, project_id: str, type_id: str, item: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        body = json_body_key(json_body(req), "encryption")
        resp.media = {"encryption": self.model.update_encryption(scope, type_id, body)}

    def on_delete(self, req: Req, resp: Resp, project_id: str, type_id: str, item: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        self.model.delete_encryption(scope, type_id)
        resp.status = falcon.HTTP_202


class Extensions(ProjectResource):
    def on_get(self, req: Req, resp: Resp, project_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        resp.media = {"extensions": self.model.list_extensions(scope)}


class AvailabilityZones(ProjectResource):
    def on_get(self, req: Req, resp: Resp, project_id: str) -> None:
        self.begin(req, resp, project_id)
        zone = {"zoneName": AVAILABILITY_ZONE, "zoneState": {"available": True}}
        resp.media = {"availabilityZoneInfo": [zone]}


def type_and_backup_routes(model: BlockStorageModel, p: str) -> list[tuple[str, object]]:
    """The routes of this module under the project prefix ``p``."""
    return [
        (f"{p}/snapshots", Snapshots(model)),
        (f"{p}/snapshots/detail", Snapshots(model)),
        (f"{p}/snapshots/{{snapshot_id}}", Snapshot(model)),
        (f"{p}/backups", Backups(model)),
        (f"{p}/backups/detail", BackupsDetail(model)),
        (f"{p}/backups/{{backup_id}}", Backup(model)),
        (f"{p}/backups/{{backup_id}}/restore", BackupRestore(model)),
        (f"{p}/types", Types(model)),
        (f"{p}/types/{{type_id}}", Type(model)),
        (f"{p}/types/{{type_id}}/encryption", Encryption(model)),
        (f"{p}/types/{{type_id}}/encryption/{{item}}", EncryptionItem(model)),
        (f"{p}/extensions", Extensions(model)),
        (f"{p}/os-availability-zone", AvailabilityZones(model)),
    ]
