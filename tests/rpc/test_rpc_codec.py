"""The wire codec: every message round-trips through JSON; errors keep what the API needs."""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rpc_samples import IST, rpc_dataclasses, sample, strategy

from kiln.core.errors import (
    ActionInProgress,
    KilnError,
    StackValidationFailed,
    UserParameterMissing,
    ValidationFailed,
)
from kiln.core.paths import Location
from kiln.db.errors import NotFound
from kiln.rpc import codec, messages
from kiln.rpc.errors import CodecError, RemoteError
from kiln.rpc.transport import InProcessTransport

CLASSES = rpc_dataclasses()


def wire(value: Any) -> Any:
    """Encode, pass through JSON text as a broker would, decode."""
    return codec.decode(json.loads(json.dumps(codec.encode(value))))


def test_messages_module_is_covered() -> None:
    names = {cls.__name__ for cls in CLASSES if cls.__module__ == "kiln.rpc.messages"}
    assert {"CreateStack", "StackView", "SnapshotList", "Context"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_dataclass_round_trips(cls: type) -> None:
    value = sample(cls)
    assert wire(value) == value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CLASSES).flatmap(strategy))
def test_any_generated_message_round_trips(value: Any) -> None:
    back = wire(value)
    assert back == value
    assert type(back) is type(value)


def test_stack_view_keeps_nested_types_and_time_zones() -> None:
    created = datetime(2024, 1, 2, 3, 4, 5, tzinfo=IST)
    view = sample(messages.StackView)
    view = dataclasses.replace(
        view,
        created_at=created,
        updated_at=datetime(2024, 1, 2, 3, 4, 5),  # naive stays naive
        tags=("a", "b"),
        outputs=[messages.Output("ip", {"x": (1, 2)}, "the address")],
    )
    back = wire(view)
    assert back == view
    assert back.created_at.utcoffset() == created.utcoffset()
    assert back.updated_at.tzinfo is None
    assert isinstance(back.tags, tuple)
    assert isinstance(back.outputs, list)
    assert back.outputs[0].value == {"x": (1, 2)}


def test_mappings_with_other_keys_or_the_tag_key() -> None:
    value = {1: "one", (2, "b"): [None], "x": {codec.TAG: "dataclass", "type": "os:system"}}
    assert wire(value) == value


def test_fields_a_newer_sender_added_are_dropped() -> None:
    data = codec.encode(messages.Context("p1", "u1"))
    data["fields"]["request_priority"] = "high"
    assert codec.decode(data) == messages.Context("p1", "u1")


def test_a_missing_required_field_is_a_codec_error() -> None:
    data = codec.encode(messages.Context("p1"))
    del data["fields"]["project_id"]
    with pytest.raises(CodecError, match=r"cannot build kiln\.rpc\.messages:Context"):
        codec.decode(data)


@pytest.mark.parametrize(
    "type_tag",
    [
        "os:system",
        "builtins:dict",
        "subprocess:Popen",
        "kiln.core.paths:Location",  # a dataclass, but not a message
        "kiln.rpc.messages:datetime",  # imported into a message module, not defined there
        "kiln.rpc.messages:Mapping",
        "kiln.rpc.codec:CodecError",  # defined in kiln.rpc, but no dataclass
        "kiln.rpc.messages:__class__",
        "kiln.rpc.messages:StackView.__init__",
        "kiln.rpc..messages:StackView",
        "kiln.rpcx.messages:StackView",
        "kiln.rpc.no_such_module:Thing",
        "kiln.rpc.messages",
    ],
)
def test_decoding_refuses_anything_but_kiln_rpc_dataclasses(type_tag: str) -> None:
    loaded = set(sys.modules)
    with pytest.raises(CodecError, match=r"refusing|unknown message module"):
        codec.decode({codec.TAG: "dataclass", "type": type_tag, "fields": {}})
    assert not {"subprocess", "kiln.rpcx"} & (set(sys.modules) - loaded)


def test_encoding_refuses_foreign_dataclasses_and_unknown_types_with_the_path() -> None:
    @dataclasses.dataclass(frozen=True)
    class Local:
        x: int

    with pytest.raises(CodecError, match=r"only classes defined in kiln\.rpc"):
        codec.encode(Local(1))
    message = messages.ListStacks(messages.Context("p"), filters={"name": {"a", "b"}})
    with pytest.raises(CodecError) as caught:
        codec.encode(message)
    assert caught.value.path == ("filters", "name")
    assert caught.value.kind == "InternalError"
    assert "set" in caught.value.full_message


@pytest.mark.parametrize("payload", [{codec.TAG: "nope"}, {codec.TAG: "tuple"}, object()])
def test_malformed_payloads_are_codec_errors(payload: Any) -> None:
    with pytest.raises(CodecError):
        codec.decode(payload)


# -- errors ---------------------------------------------------------------------------------
def error_wire(exc: BaseException) -> RemoteError:
    return codec.decode_error(json.loads(json.dumps(codec.encode_error(exc))))


def assert_same_error(remote: RemoteError, original: KilnError) -> None:
    assert isinstance(remote, KilnError)
    assert (remote.kind, remote.http_status) == (original.kind, original.http_status)
    assert remote.full_message == original.full_message
    assert str(remote) == str(original)
    assert (remote.message, remote.path) == (original.message, original.path)
    assert (remote.location, remote.category) == (original.location, original.category)
    assert remote.to_dict() == original.to_dict()


def test_entity_not_found_keeps_kind_and_404() -> None:
    original = NotFound("Stack", "web")
    remote = error_wire(original)
    assert_same_error(remote, original)
    assert (remote.kind, remote.http_status) == ("EntityNotFound", 404)


def test_action_in_progress_keeps_409() -> None:
    remote = error_wire(ActionInProgress("Stack web already has an action (CREATE) in progress."))
    assert (remote.kind, remote.http_status) == ("ActionInProgress", 409)


def test_path_location_and_category_survive() -> None:
    original = StackValidationFailed(
        "Value must be a string",
        path=("resources", "web", "properties", "networks", 0, "port"),
        location=Location("web.yaml", 12, 7),
        category="Property error",
    )
    assert_same_error(error_wire(original), original)


def test_validation_failed_keeps_every_sub_error() -> None:
    first = StackValidationFailed(
        "unknown flavor", path=("resources", "a"), location=Location("t.yaml", 3, 5)
    )
    second = UserParameterMissing("The Parameter (key) was not provided.", path=("parameters",))
    original = ValidationFailed([first, second])
    remote = error_wire(original)
    assert_same_error(remote, original)
    assert remote.kind == "StackValidationFailed"
    assert len(remote.errors) == 2
    for got, want in zip(remote.errors, (first, second), strict=True):
        assert_same_error(got, want)


def test_an_overridden_full_message_is_kept() -> None:
    class Odd(KilnError):
        @property
        def full_message(self) -> str:
            return "rendered by the sender"

    assert error_wire(Odd("m")).full_message == "rendered by the sender"


def test_unexpected_errors_become_a_generic_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    try:
        raise RuntimeError("password=hunter2")
    except RuntimeError as exc:
        with caplog.at_level(logging.ERROR, logger="kiln.rpc.codec"):
            data = codec.encode_error(exc)
    remote = codec.decode_error(data)
    assert (remote.kind, remote.http_status) == ("InternalError", 500)
    assert "hunter2" not in json.dumps(data)
    assert "Traceback" not in json.dumps(data)
    reference = remote.message.split("reference ")[1].rstrip(").")
    assert reference in caplog.text  # the log says which error the user was shown
    assert "hunter2" in caplog.text  # ... with its traceback, server-side only


# -- InProcessTransport through the codec ---------------------------------------------------------
def test_in_process_transport_can_serialize_like_the_bus() -> None:
    def create(msg: messages.CreateStack) -> messages.StackCreated:
        assert isinstance(msg.input.environment_files, tuple)
        return messages.StackCreated("id-1", msg.name)

    def delete(msg: messages.DeleteStack) -> None:
        raise NotFound("Stack", msg.stack_id)

    transport = InProcessTransport(
        {messages.CreateStack: create, messages.DeleteStack: delete}, serialize=True
    )
    assert transport.call(sample(messages.CreateStack)) == messages.StackCreated(
        "id-1", "sample-text"
    )
    with pytest.raises(RemoteError) as caught:
        transport.call(messages.DeleteStack(messages.Context("p"), "gone"))
    assert (caught.value.kind, caught.value.http_status) == ("EntityNotFound", 404)
    with pytest.raises(RemoteError, match="no engine handler for ListStacks"):
        transport.call(messages.ListStacks(messages.Context("p")))
