"""REST resources of flavors, keypairs, server groups, limits and availability zones."""

from __future__ import annotations

import falcon

from kiln.cloud.api.errors import BadRequest
from kiln.cloud.sandbox.compute import views
from kiln.cloud.sandbox.compute.web import Resource, accepted, call, page
from kiln.cloud.sandbox.rest import json_body


# -- flavors ------------------------------------------------------------------------------
class Flavors(Resource):
    def _found(self, req: falcon.Request) -> list[dict[str, object]]:
        c = call(req)
        return page(self.model.list_flavors(c.scope, c.params), c.params)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        c = call(req)
        resp.media = {
            "flavors": [views.flavor_summary(f, c.version, base=c.base) for f in self._found(req)]
        }

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        c = call(req)
        flavor = self.model.create_flavor(c.scope, json_body(req, "flavor"))
        resp.media = {"flavor": views.flavor_view(flavor, c.version, base=c.base)}


class FlavorsDetail(Flavors):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        c = call(req)
        resp.media = {
            "flavors": [views.flavor_view(f, c.version, base=c.base) for f in self._found(req)]
        }


class Flavor(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, flavor_id: str) -> None:
        c = call(req)
        flavor = self.model.get_flavor(c.scope, flavor_id)
        resp.media = {"flavor": views.flavor_view(flavor, c.version, base=c.base)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, flavor_id: str) -> None:
        self.model.delete_flavor(call(req).scope, flavor_id)
        accepted(resp)


class ExtraSpecs(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, flavor_id: str) -> None:
        resp.media = {"extra_specs": self.model.get_extra_specs(call(req).scope, flavor_id)}

    def on_post(self, req: falcon.Request, resp: falcon.Response, flavor_id: str) -> None:
        body = json_body(req, "extra_specs")
        self.model.set_extra_specs(call(req).scope, flavor_id, body)
        resp.media = {"extra_specs": body}


class ExtraSpec(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, flavor_id: str, key: str) -> None:
        specs = self.model.get_extra_specs(call(req).scope, flavor_id)
        if key not in specs:
            raise falcon.HTTPNotFound()
        resp.media = {key: specs[key]}

    def on_put(self, req: falcon.Request, resp: falcon.Response, flavor_id: str, key: str) -> None:
        body = json_body(req)
        if not isinstance(body, dict) or list(body) != [key]:
            raise BadRequest("Request body and URI mismatch")
        self.model.set_extra_specs(call(req).scope, flavor_id, body)
        resp.media = body

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, flavor_id: str, key: str
    ) -> None:
        self.model.delete_extra_spec(call(req).scope, flavor_id, key)
        accepted(resp, 200)


def _access(flavor_id: str, projects: list[str]) -> dict[str, object]:
    return {"flavor_access": [{"flavor_id": flavor_id, "tenant_id": p} for p in projects]}


class FlavorAccess(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, flavor_id: str) -> None:
        resp.media = _access(flavor_id, self.model.get_flavor_access(call(req).scope, flavor_id))


class FlavorAction(Resource):
    def on_post(self, req: falcon.Request, resp: falcon.Response, flavor_id: str) -> None:
        scope = call(req).scope
        body = json_body(req)
        if isinstance(body, dict) and isinstance(body.get("addTenantAccess"), dict):
            tenant = str(body["addTenantAccess"].get("tenant"))
            projects = self.model.add_flavor_access(scope, flavor_id, tenant)
        elif isinstance(body, dict) and isinstance(body.get("removeTenantAccess"), dict):
            tenant = str(body["removeTenantAccess"].get("tenant"))
            projects = self.model.remove_flavor_access(scope, flavor_id, tenant)
        else:
            raise BadRequest("Expected addTenantAccess or removeTenantAccess.")
        resp.media = _access(flavor_id, projects)


# -- keypairs -----------------------------------------------------------------------------
class Keypairs(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        c = call(req)
        found = self.model.list_keypairs(c.scope, c.params.get("user_id"))
        resp.media = {"keypairs": [views.keypair_list_item(k, c.version) for k in found]}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        c = call(req)
        made = self.model.create_keypair(c.scope, json_body(req, "keypair"), c.version)
        resp.media = {"keypair": views.keypair_view(made, c.version, created=True)}
        accepted(resp, 201 if c.since("2.2") else 200)


class Keypair(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        c = call(req)
        found = self.model.get_keypair(c.scope, name, c.params.get("user_id"))
        resp.media = {"keypair": views.keypair_view(found, c.version)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        c = call(req)
        self.model.delete_keypair(c.scope, name, c.params.get("user_id"))
        accepted(resp, 204 if c.since("2.2") else 202)


# -- server groups ------------------------------------------------------------------------
class ServerGroups(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        c = call(req)
        everyone = c.params.get("all_projects", "").lower() in ("true", "1", "yes")
        found = page(self.model.list_server_groups(c.scope, everyone), c.params)
        resp.media = {"server_groups": [views.server_group_view(g, c.version) for g in found]}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        c = call(req)
        group = self.model.create_server_group(c.scope, json_body(req, "server_group"), c.version)
        resp.media = {"server_group": views.server_group_view(group, c.version)}


class ServerGroup(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, group_id: str) -> None:
        c = call(req)
        group = self.model.get_server_group(c.scope, group_id)
        resp.media = {"server_group": views.server_group_view(group, c.version)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, group_id: str) -> None:
        self.model.delete_server_group(call(req).scope, group_id)
        accepted(resp, 204)


# -- limits and zones ---------------------------------------------------------------------
class Limits(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        c = call(req)
        resp.media = {"limits": views.limits_view(self.model.limits(c.scope), c.version)}


class AvailabilityZones(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"availabilityZoneInfo": self.model.availability_zones(call(req).scope)}
