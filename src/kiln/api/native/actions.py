"""Stack actions: ``POST /stacks/{stack_name}/{stack_id}/actions`` (heat-api.md 2.2, A1).

The body holds exactly one key naming the action (its value is ignored:
clients send ``null`` or ``""``). The policy rule is the action's own
(``actions:suspend`` ...), checked once the body names it, as Heat does. The
engine refuses what the stack's state does not allow (cancelling anything but
an update in progress, for one). Success is 200 with the JSON body ``null``.
"""

from __future__ import annotations

import falcon

from kiln.api.faults import bad_request
from kiln.api.native.support import ApiDeps, Endpoint, Route, authorize, body
from kiln.rpc import messages as m

ACTIONS = ("suspend", "resume", "check", "cancel_update", "cancel_without_rollback")


def action_of(data: dict[str, object]) -> str:
    """The one action a body names (Heat's messages otherwise)."""
    if not data:
        raise bad_request("No action specified")
    if len(data) > 1:
        raise bad_request("Multiple actions specified")
    action = next(iter(data))
    if action not in ACTIONS:
        raise bad_request(f"Invalid action {action} specified")
    return action


class StackActions(Endpoint):
    def on_post(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        action = action_of(body(req, required=False))
        ctx = authorize(self.deps, req, f"actions:{action}")
        self.deps.call(m.StackAction(ctx.rpc(), stack_id, action, stack_name=stack_name))
        resp.status = falcon.HTTP_200
        resp.content_type = falcon.MEDIA_JSON
        resp.text = "null"


def routes(deps: ApiDeps) -> list[Route]:
    return [("/{tenant_id}/stacks/{stack_name}/{stack_id}/actions", StackActions(deps))]
