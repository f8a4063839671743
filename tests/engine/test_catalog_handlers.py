"""kiln.engine.catalog_handlers: the catalogue calls on the engine side."""

from __future__ import annotations

import pytest

from kiln.cli.compose import build_engine, open_database
from kiln.core.clock import VirtualClock
from kiln.core.errors import KilnError, NotSupported
from kiln.db import engine as dbe
from kiln.db import engines as edb
from kiln.db.errors import NotFound
from kiln.engine.catalog_handlers import REPORT_INTERVAL, CatalogHandlers
from kiln.plugin import Resource, resource_type
from kiln.plugin.registry import PluginRegistry
from kiln.resources.heat.none_resource import NoneResource
from kiln.resources.heat.random_string import RandomString
from kiln.rpc import catalog_messages as cm
from kiln.rpc.messages import Context, StackInput
from kiln.schema.properties import SupportStatus

CTX = Context("project-1", "user-1")


@resource_type("Test::Old")
class OldThing(Resource):
    """An old thing."""

    support_status = SupportStatus("DEPRECATED", version="2014.1", message="Use Test::New")


@resource_type("Test::Secret")
class SecretThing(Resource):
    """Nobody should see this one."""

    support_status = SupportStatus("HIDDEN")


@pytest.fixture
def parts(tmp_path):
    registry = PluginRegistry([RandomString, NoneResource, OldThing, SecretThing])
    db = open_database(f"sqlite:///{tmp_path / 'kiln.db'}")
    return build_engine(db, engine_id="e1", clock=VirtualClock(), registry=registry)


@pytest.fixture
def handlers(parts):
    return CatalogHandlers(parts.service, revision="r-42")


def _names(handlers, **filters):
    return [t.name for t in handlers.resource_types(cm.ListResourceTypes(CTX, **filters)).types]


def test_hidden_types_never_listed_and_filters(handlers):
    assert _names(handlers) == ["OS::Heat::None", "OS::Heat::RandomString", "Test::Old"]
    assert _names(handlers, support_status="DEPRECATED") == ["Test::Old"]
    assert _names(handlers, support_status="HIDDEN") == []
    assert _names(handlers, version="2014.1") == ["Test::Old"]
    assert _names(handlers, name="(a|aa)+$") == []
    described = handlers.resource_types(cm.ListResourceTypes(CTX, with_description=True))
    assert dict((t.name, t.description) for t in described.types)["Test::Old"] == "An old thing."
    plain = handlers.resource_types(cm.ListResourceTypes(CTX))
    assert {t.description for t in plain.types} == {""}


def test_schema_of_deprecated_hidden_and_unknown_types(handlers):
    old = handlers.resource_type(cm.ShowResourceType(CTX, "Test::Old")).document
    assert old["support_status"] == {
        "status": "DEPRECATED",
        "version": "2014.1",
        "message": "Use Test::New",
        "previous_status": None,
    }
    assert old["properties"] == {} and set(old["attributes"]) == {"show"}
    with pytest.raises(NotSupported, match=r"Test::Secret is not supported\."):
        handlers.resource_type(cm.ShowResourceType(CTX, "Test::Secret"))
    with pytest.raises(NotFound):
        handlers.generate_template(cm.GenerateTemplate(CTX, "Test::Nothing"))


def test_validate_reports_types_used_including_nested(handlers):
    nested = "heat_template_version: 2018-08-31\nresources:\n  r: {type: OS::Heat::RandomString}\n"
    reply = handlers.validate(
        cm.ValidateTemplate(
            CTX,
            StackInput(
                template={
                    "heat_template_version": "2018-08-31",
                    "resources": {"a": {"type": "Alias::Nothing"}, "b": {"type": "inner.yaml"}},
                },
                environment={"resource_registry": {"Alias::Nothing": "OS::Heat::None"}},
                files={"inner.yaml": nested},
            ),
        )
    )
    assert set(reply.resource_types) == {
        "Alias::Nothing",
        "OS::Heat::None",
        "inner.yaml",
        "OS::Heat::RandomString",
    }


def test_validate_raises_every_error(handlers):
    with pytest.raises(KilnError) as found:
        handlers.validate(
            cm.ValidateTemplate(
                CTX,
                StackInput(
                    template={
                        "heat_template_version": "2018-08-31",
                        "resources": {
                            "a": {"type": "Test::Secret", "properties": {"x": 1}},
                            "b": 3,
                        },
                    }
                ),
            )
        )
    assert len(found.value.errors) == 2  # type: ignore[attr-defined]


def test_services_up_within_two_report_intervals(parts, handlers):
    clock = parts.deps.clock
    start = clock.now()
    with dbe.write(parts.deps.db) as conn:
        edb.register_engine(conn, "e-a", host="h1", pid=1, now=start)
    clock.advance(2 * REPORT_INTERVAL)
    (service,) = handlers.services(cm.ListServices(CTX)).services
    assert (service.status, service.engine_id, service.report_interval) == ("up", "e-a", 5)
    assert (service.created_at, service.updated_at, service.deleted_at) == (start, start, None)
    clock.advance(1)
    assert handlers.services(cm.ListServices(CTX)).services[0].status == "down"


def test_build_info(handlers):
    assert handlers.build_info(cm.GetBuildInfo(CTX)).engine_revision == "r-42"


def test_services_judge_engines_by_the_configured_heartbeat(tmp_path):
    db = open_database(f"sqlite:///{tmp_path / 'kiln.db'}")
    parts = build_engine(db, engine_id="e1", clock=VirtualClock(), heartbeat_interval=0.5)
    start = parts.deps.clock.now()
    with dbe.write(db) as conn:
        edb.register_engine(conn, "e-a", host="h1", pid=1, now=start)
    parts.deps.clock.advance(2)  # four missed heartbeats: down, not within 2 x 5 s
    (service,) = parts.handlers[cm.ListServices](cm.ListServices(CTX)).services
    assert (service.status, service.report_interval) == ("down", 1)
