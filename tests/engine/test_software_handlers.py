"""kiln.engine.software_handlers: quotas, visibility, updates, and the plugins' store."""

from __future__ import annotations

import pytest

from kiln.cli.compose import build_engine, open_database
from kiln.core.clock import VirtualClock
from kiln.core.errors import RequestLimitExceeded
from kiln.engine.heat_errors import HeatNotFound
from kiln.engine.service import Caller, StackRequest
from kiln.engine.software_handlers import SoftwareHandlers
from kiln.engine.worker import Worker
from kiln.rpc import software_messages as sm
from kiln.rpc.messages import Context

OWNER = Context("project-1", "user-1")
OTHER = Context("project-2", "user-2")
AGENT = Context("agents-1", "agent")
ADMIN = Context("admin-project", "admin", is_admin=True)


@pytest.fixture
def parts(tmp_path):
    db = open_database(f"sqlite:///{tmp_path / 'kiln.db'}")
    return build_engine(db, engine_id="e1", clock=VirtualClock())


@pytest.fixture
def handlers(parts):
    return SoftwareHandlers(parts.service, max_configs=2, max_deployments=1)


def _config(handlers, ctx=OWNER, **fields):
    return handlers.create_config(sm.CreateSoftwareConfig(ctx, config="echo hi", **fields))


def test_config_quota_per_project_admins_exempt(handlers):
    _config(handlers)
    _config(handlers)
    with pytest.raises(RequestLimitExceeded, match="maximum software configs per tenant, 2"):
        _config(handlers)
    _config(handlers, OTHER)
    for _ in range(3):
        _config(handlers, ADMIN)


def test_deployment_quota_and_visibility(handlers):
    config = _config(handlers)
    made = handlers.create_deployment(
        sm.CreateSoftwareDeployment(
            OWNER, config_id=config.id, server_id="srv", stack_user_project_id="agents-1"
        )
    )
    with pytest.raises(RequestLimitExceeded, match="maximum software deployments per tenant, 1"):
        handlers.create_deployment(
            sm.CreateSoftwareDeployment(OWNER, config_id=config.id, server_id="srv")
        )
    show = sm.ShowSoftwareDeployment
    assert handlers.show_deployment(show(AGENT, made.id)).id == made.id
    assert handlers.show_deployment(show(ADMIN, made.id)).id == made.id
    with pytest.raises(HeatNotFound):
        handlers.show_deployment(show(OTHER, made.id))
    listed = handlers.list_deployments(sm.ListSoftwareDeployments(AGENT)).deployments
    assert [d.id for d in listed] == [made.id]
    assert handlers.show_config(sm.ShowSoftwareConfig(ADMIN, config.id)).id == config.id
    with pytest.raises(HeatNotFound):
        handlers.show_config(sm.ShowSoftwareConfig(OTHER, config.id))


def test_a_deployment_may_not_name_another_projects_config(handlers):
    theirs = _config(handlers, OTHER)
    with pytest.raises(Exception, match=f"Config with id {theirs.id} not found") as found:
        handlers.create_deployment(
            sm.CreateSoftwareDeployment(OWNER, config_id=theirs.id, server_id="srv")
        )
    assert found.value.kind == "Invalid"  # type: ignore[attr-defined]


def test_update_ignores_empty_values(parts, handlers):
    config = _config(handlers)
    made = handlers.create_deployment(
        sm.CreateSoftwareDeployment(
            OWNER, config_id=config.id, server_id="srv", input_values={"a": 1}, action="CREATE"
        )
    )
    parts.deps.clock.advance(3)
    updated = handlers.update_deployment(
        sm.UpdateSoftwareDeployment(
            OWNER, made.id, input_values={}, action="", status="COMPLETE", status_reason=""
        )
    )
    assert (updated.input_values, updated.action, updated.status) == (
        {"a": 1},
        "CREATE",
        "COMPLETE",
    )
    assert updated.status_reason == ""
    assert updated.updated_at is not None
    assert (updated.updated_at - made.created_at).total_seconds() == 3


def test_multipart_mime_reads_a_stored_config(parts):
    """The engine hands plugins the table-backed store (kiln.cli.compose)."""
    stored = SoftwareHandlers(parts.service).create_config(
        sm.CreateSoftwareConfig(Context("project-1"), config="#!/bin/sh\necho from-the-api\n")
    )
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "mime": {
                "type": "OS::Heat::MultipartMime",
                "properties": {"parts": [{"config": stored.id}, {"config": "inline"}]},
            }
        },
        "outputs": {"message": {"value": {"get_attr": ["mime", "config"]}}},
    }
    stack_id = parts.service.create_stack(
        Caller("project-1", "user-1"), StackRequest(name="mime", template=template)
    )
    Worker(parts.deps).run_until_idle()
    message = parts.service.outputs(stack_id)["message"].value
    assert "echo from-the-api" in message and "inline" in message
    assert stored.id not in message
