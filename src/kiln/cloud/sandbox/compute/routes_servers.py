"""REST resources of ``/servers`` and ``/servers/{id}/action``."""

from __future__ import annotations

from typing import Any

import falcon

from kiln.cloud.api.errors import BadRequest
from kiln.cloud.sandbox.compute import views
from kiln.cloud.sandbox.compute.web import Call, Resource, accepted, call, page
from kiln.cloud.sandbox.rest import json_body


class Servers(Resource):
    def _list(self, req: falcon.Request, resp: falcon.Response, *, detail: bool) -> None:
        c = call(req)
        found = page(self.model.list_servers(c.scope, c.params), c.params)
        if detail:
            shown = [self.model.present_server(c.scope, s, c.version, c.base) for s in found]
        else:
            shown = [
                {"id": s["id"], "name": s["name"], "links": views.links(c.base, "servers", s["id"])}
                for s in found
            ]
        resp.media = {"servers": shown}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._list(req, resp, detail=False)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        c = call(req)
        body = json_body(req)
        if not isinstance(body, dict) or not isinstance(body.get("server"), dict):
            raise BadRequest("Missing or invalid 'server' in request body.")
        hints = body.get("os:scheduler_hints") or body.get("OS-SCH-HNT:scheduler_hints")
        server = self.model.create_server(c.scope, body["server"], hints, c.version)
        resp.media = {"server": views.created_server_view(server, base=c.base)}
        resp.location = f"{c.base}/servers/{server['id']}"
        accepted(resp)


class ServersDetail(Servers):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._list(req, resp, detail=True)


class Server(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        server = self.model.get_server(c.scope, server_id)
        resp.media = {"server": self.model.present_server(c.scope, server, c.version, c.base)}

    def on_put(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        server = self.model.update_server(c.scope, server_id, json_body(req, "server"), c.version)
        resp.media = {"server": self.model.present_server(c.scope, server, c.version, c.base)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        self.model.delete_server(c.scope, server_id)
        accepted(resp, 204)


class ServerAction(Resource):
    """``POST /servers/{id}/action``: one action per body (``{"<action>": {...}}``)."""

    def on_post(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        body = json_body(req)
        if not isinstance(body, dict) or len(body) != 1:
            raise BadRequest("The action body must have exactly one action.")
        ((action, args),) = body.items()
        args = args if isinstance(args, dict) else {}
        handler = getattr(self, "_" + action.replace("-", "_"), None)
        if handler is None:
            raise BadRequest(f"There is no such action: {action}")
        accepted(resp)
        handler(c, resp, server_id, args)

    def _suspend(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        self.model.suspend_server(c.scope, server_id)

    def _resume(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        self.model.resume_server(c.scope, server_id)

    def _os_stop(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        self.model.stop_server(c.scope, server_id)

    def _os_start(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        self.model.start_server(c.scope, server_id)

    def _reboot(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        self.model.reboot_server(c.scope, server_id, str(args.get("type", "")).upper())

    def _resize(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        self.model.resize_server(c.scope, server_id, args.get("flavorRef"))

    def _confirmResize(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        self.model.confirm_server_resize(c.scope, server_id)
        accepted(resp, 204)

    def _revertResize(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        self.model.revert_server_resize(c.scope, server_id)

    def _rebuild(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        server = self.model.rebuild_server(c.scope, server_id, args, c.version)
        shown = self.model.present_server(c.scope, server, c.version, c.base)
        shown["adminPass"] = server["_admin_pass"]
        resp.media = {"server": shown}

    def _changePassword(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        self.model.change_server_password(c.scope, server_id, args.get("adminPass"))

    def _createImage(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        image = self.model.create_server_image(
            c.scope, server_id, args.get("name"), args.get("metadata")
        )
        if c.since("2.45"):
            resp.media = {"image_id": image["id"]}
        else:
            glance = self.model.cloud.public_urls.get("image", "")
            resp.location = f"{glance}/v2/images/{image['id']}"

    def _forceDelete(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        self.model.force_delete_server(c.scope, server_id)

    def _os_getVNCConsole(self, c: Call, resp: falcon.Response, server_id: str, args: Any) -> None:
        console = self.model.remote_console(c.scope, server_id, "vnc", str(args.get("type")))
        resp.media = {"console": {"type": console["type"], "url": console["url"]}}
        accepted(resp, 200)
