"""The native API over a real engine and SQLite, for route tests (no HTTP server).

``ApiHarness.client`` is a Falcon test client in front of the whole versioned
app; the caller is ``harness.ctx`` (change it with ``as_user``). Engine work
runs synchronously when the test calls ``run()``.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from falcon import testing

from kiln.api.context import ENVIRON_KEY, RequestContext
from kiln.api.native.app import create_app
from kiln.api.native.support import ApiDeps, ApiSettings, Policy
from kiln.api.versions import VersionNegotiation
from kiln.cli.compose import EngineParts, build_engine, open_database
from kiln.cloud.api.clients import CloudConnector
from kiln.engine.worker import Worker
from kiln.rpc.transport import InProcessTransport

PROJECT = "3f8ab1c2d4e54f6a9b7c0d1e2f3a4b5c"
OTHER_PROJECT = "9b7c0d1e2f3a4b5c3f8ab1c2d4e54f6a"

MEMBER = RequestContext(
    project_id=PROJECT, user_id="user-1", user_name="demo", roles=("member", "reader")
)


@dataclass
class ApiHarness:
    client: testing.TestClient
    engine: EngineParts
    deps: ApiDeps
    holder: dict[str, RequestContext]

    @property
    def ctx(self) -> RequestContext:
        return self.holder["ctx"]

    def as_user(self, *, project_id: str | None = None, roles: Iterable[str] | None = None) -> None:
        ctx = self.ctx
        self.holder["ctx"] = replace(
            ctx,
            project_id=project_id or ctx.project_id,
            roles=tuple(roles) if roles is not None else ctx.roles,
        )

    def url(self, path: str) -> str:
        return f"/v1/{self.ctx.project_id}{path}"

    def run(self) -> int:
        """Run engine work until nothing is ready or due."""
        return Worker(self.engine.deps).run_until_idle()


def _inject(app: Callable[..., Any], holder: dict[str, RequestContext]) -> Callable[..., Any]:
    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        environ[ENVIRON_KEY] = holder["ctx"]
        return app(environ, start_response)

    return wrapped


def make_api(
    tmp_path: pathlib.Path,
    *,
    policy: Policy | None = None,
    settings: ApiSettings | None = None,
    ctx: RequestContext = MEMBER,
    cloud: CloudConnector | None = None,
) -> ApiHarness:
    """``cloud``: what plugins and cloud-backed constraints reach (None: no cloud)."""
    db = open_database(f"sqlite:///{tmp_path / 'kiln.db'}")
    engine = build_engine(db, engine_id="engine-test", cloud=cloud)
    deps = ApiDeps(
        engine=InProcessTransport(engine.handlers),
        policy=policy or Policy(),
        settings=settings or ApiSettings(),
    )
    holder = {"ctx": ctx}
    app = VersionNegotiation(_inject(create_app(deps), holder))
    return ApiHarness(testing.TestClient(app), engine, deps, holder)
