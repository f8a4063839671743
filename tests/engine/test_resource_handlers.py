"""The engine side of the resource and event reads: scope, lookups, signal checks."""

from __future__ import annotations

import pathlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.core.clock import VirtualClock
from kiln.core.errors import NotSupported
from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db.engine import create_engine
from kiln.db.errors import NotFound
from kiln.db.migrate import upgrade
from kiln.engine.plan import current_rows
from kiln.engine.resource_handlers import (
    PhysicalResourceIDAmbiguity,
    ResourceActionNotSupported,
    ResourceHandlers,
    ResourceNotAvailable,
    ResourceNotFound,
    stack_in_scope,
)
from kiln.engine.service import StackService
from kiln.engine.steps import EngineDeps
from kiln.engine.worker import Worker
from kiln.plugin import Resource, resource_type
from kiln.plugin.registry import PluginRegistry
from kiln.rpc import messages as m
from kiln.rpc import resource_messages as rm
from kiln.rpc.transport import InProcessTransport
from kiln.schema.custom import CustomConstraints

OWNER = m.Context(CALLER.project_id, CALLER.user_id)
STRANGER = m.Context("project-2")
ADMIN = m.Context("project-2", is_admin=True)

TEMPLATE = """\
heat_template_version: 2021-04-16
resources:
  a: {type: OS::Heat::Value, properties: {value: 1}}
  b: {type: OS::Heat::Value, properties: {value: {get_attr: [a, value]}}}
  g:
    type: OS::Heat::ResourceGroup
    properties: {count: 2, resource_def: {type: OS::Heat::None}}
"""


@resource_type("Test::Signalled")
class Signalled(Resource):
    """A type that takes signals (none of the built-in ones does yet)."""

    def handle_signal(self, details: Mapping[str, Any] | None) -> None:
        return None


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    return make_harness(tmp_path)


def rpc(h: Harness) -> InProcessTransport:
    return InProcessTransport(ResourceHandlers(h.service).table())


def created(h: Harness, template: str = TEMPLATE) -> str:
    sid = h.create(template, name="s")
    h.run()
    return sid


def test_scope_name_project_admin_and_deleted(h: Harness) -> None:
    sid = created(h)
    with dbe.read(h.deps.db) as conn:
        assert stack_in_scope(conn, OWNER, "s", sid, show_deleted=False).id == sid
        assert stack_in_scope(conn, ADMIN, "s", sid, show_deleted=False).id == sid
        for ctx, name in ((OWNER, "t"), (STRANGER, "s")):
            with pytest.raises(NotFound, match=rf"The Stack \({name}\) could not be found"):
                stack_in_scope(conn, ctx, name, sid, show_deleted=False)
        with pytest.raises(NotFound, match=r"Stack \(s\)"):
            stack_in_scope(conn, OWNER, "s", "no-such-id", show_deleted=True)
    h.service.delete_stack(CALLER, sid)
    h.run()
    with dbe.read(h.deps.db) as conn:
        assert stack_in_scope(conn, OWNER, "s", sid, show_deleted=True).id == sid
        with pytest.raises(NotFound):
            stack_in_scope(conn, OWNER, "s", sid, show_deleted=False)


def test_list_show_and_nested_resources(h: Harness) -> None:
    sid = created(h)
    call = rpc(h).call
    found = call(rm.ListStackResources(OWNER, "s", sid, nested_depth=1)).resources
    assert [r.name for r in found] == ["a", "b", "g", "0", "1"]
    by_name = {r.name: r for r in found[:3]}
    assert by_name["a"].required_by == ("b",)
    assert by_name["g"].nested is not None and by_name["g"].nested.id == by_name["g"].physical_id
    child = by_name["g"].nested
    assert [(r.parent_resource, r.stack) for r in found[3:]] == [("g", child), ("g", child)]
    assert all(r.attributes is None and r.description is None for r in found)
    shown = call(rm.ShowResource(OWNER, child.name, child.id, "0"))
    assert shown.parent_resource == "g" and shown.attributes is not None
    b = call(rm.ShowResource(OWNER, "s", sid, "b"))
    assert b.attributes == {"value": 1, "show": None}
    filtered = call(rm.ListStackResources(OWNER, "s", sid, {"type": ["None"]}, nested_depth=5))
    assert [r.name for r in filtered.resources] == ["0", "1"]
    with pytest.raises(
        ResourceNotFound, match=r"The Resource \(zz\) could not be found in Stack s"
    ):
        call(rm.ShowResource(OWNER, "s", sid, "zz"))
    with pytest.raises(NotFound):
        call(rm.ListStackResources(STRANGER, "s", sid))


def test_find_by_physical_id_and_ambiguity(h: Harness) -> None:
    sid = created(h)
    call = rpc(h).call
    rows = h.service.resources(sid)
    physical = {r.name: r.physical_id for r in rows}
    assert call(rm.FindResource(OWNER, "s", sid, "b")).name == "b"
    assert call(rm.FindResource(OWNER, "s", sid, str(physical["a"]))).name == "a"
    with dbe.write(h.deps.db) as conn:
        row = current_rows(rdb.list_resources(conn, sid))["b"]
        change = rdb.ResourceChange(physical_id=physical["a"])
        rdb.update_resource(conn, row.id, change, now=h.clock.now(), expected_version=row.version)
    with pytest.raises(PhysicalResourceIDAmbiguity):
        call(rm.FindResource(OWNER, "s", sid, str(physical["a"])))
    with pytest.raises(ResourceNotFound):
        call(rm.FindResource(OWNER, "s", sid, "nothing"))


def test_signal_checks(h: Harness) -> None:
    sid = created(h)
    call = rpc(h).call
    with pytest.raises(ResourceActionNotSupported, match=r"signal is not supported for resource\."):
        call(rm.FindResource(OWNER, "s", sid, "a", rm.SIGNAL, details={"x": 1}))
    hook = {"unset_hook": "pre-create"}
    assert call(rm.FindResource(OWNER, "s", sid, "a", rm.SIGNAL, details=hook)).name == "a"
    with pytest.raises(ResourceNotFound):
        call(rm.FindResource(OWNER, "s", sid, "zz", rm.SIGNAL))
    with dbe.write(h.deps.db) as conn:  # a resource of the template without a row
        rdb.delete_resource(conn, current_rows(rdb.list_resources(conn, sid))["b"].id)
    with pytest.raises(ResourceNotAvailable, match=r"The Resource \(b\) is not available."):
        call(rm.FindResource(OWNER, "s", sid, "b", rm.SIGNAL))
    h.service.delete_stack(CALLER, sid)
    h.run()
    with pytest.raises(NotFound):
        call(rm.FindResource(OWNER, "s", sid, "a", rm.SIGNAL))


def test_a_type_that_takes_signals(tmp_path: pathlib.Path) -> None:
    registry = PluginRegistry.discover()
    registry.register(Signalled)
    db = create_engine(f"sqlite:///{tmp_path / 'kiln.db'}")
    upgrade(db)
    deps = EngineDeps(
        db=db,
        registry=registry,
        custom=registry.custom_constraints(CustomConstraints.offline()),
        clock=VirtualClock(),
        engine_id="engine-1",
    )
    service = StackService(deps)
    from kiln.engine.service import StackRequest

    template = {
        "heat_template_version": "2021-04-16",
        "resources": {"s": {"type": "Test::Signalled"}},
    }
    sid = service.create_stack(CALLER, StackRequest(name="st", template=template))
    Worker(deps).run_until_idle()
    call = InProcessTransport(ResourceHandlers(service).table()).call
    assert call(rm.FindResource(OWNER, "st", sid, "s", rm.SIGNAL, details={"a": 1})).name == "s"
    service.stack_action(CALLER, sid, "SUSPEND")
    Worker(deps).run_until_idle()
    with pytest.raises(NotSupported, match=r"Signal resource during SUSPEND is not supported\."):
        call(rm.FindResource(OWNER, "st", sid, "s", rm.SIGNAL, details={"a": 1}))


def test_events_marker_of_another_stack_is_ignored(h: Harness) -> None:
    sid = created(h)
    other = h.create(TEMPLATE.replace("value: 1", "value: 2"), name="o")
    h.run()
    call = rpc(h).call
    mine = call(rm.ListStackEvents(OWNER, "s", sid, sort_dir="asc")).events
    theirs = call(rm.ListStackEvents(OWNER, "o", other, sort_dir="asc")).events
    again = call(rm.ListStackEvents(OWNER, "s", sid, marker=theirs[0].id, sort_dir="asc")).events
    assert [e.id for e in again] == [e.id for e in mine]
    assert all(e.root_stack is None and e.resource_properties is None for e in mine)
    nested = call(rm.ListStackEvents(OWNER, "s", sid, nested_depth=1)).events
    assert {e.stack.id for e in nested} > {sid}
    assert all(e.root_stack == m.StackRef(sid, "s", CALLER.project_id) for e in nested)
    shown = call(rm.ShowEvent(OWNER, "s", sid, "a", mine[1].id)).events
    assert [(e.id, e.resource_properties) for e in shown] == [(mine[1].id, {})]
    assert call(rm.ShowEvent(OWNER, "s", sid, "b", mine[1].id)).events == ()


def test_messages_cross_the_bus_codec(h: Harness) -> None:
    codec = pytest.importorskip("kiln.rpc.codec")
    sid = created(h)
    request = rm.ListStackResources(OWNER, "s", sid, {"name": ["a"]}, 1, True)
    assert codec.decode(codec.encode(request)) == request
    reply = rpc(h).call(request)
    decoded = codec.decode(codec.encode(reply))
    assert decoded == replace(reply, resources=tuple(reply.resources))
    events = rpc(h).call(rm.ListStackEvents(OWNER, "s", sid, nested_depth=1))
    assert codec.decode(codec.encode(events)) == events
