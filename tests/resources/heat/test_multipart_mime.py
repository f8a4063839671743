"""OS::Heat::MultipartMime: the multipart/mixed message, references to other configs."""

from __future__ import annotations

import email
from email.message import Message
from typing import Any

import pytest
from heat_schema_support import NO_DEFAULT, allowed, table, undocumented

from kiln.core.errors import StackValidationFailed
from kiln.resources.heat.multipart_mime import MultipartMime
from kiln.testing.plugin_context import decide, fake_resource, run_action

CONFIG_ID = "6f1f1d3c-0d8a-4c7e-9b1e-2a1b3c4d5e6f"
OTHER = {"id": CONFIG_ID, "group": "Heat::Ungrouped", "config": "#cloud-config\nruncmd: []\n"}


def test_schema_matches_the_reference() -> None:
    assert table(MultipartMime.properties_schema) == {
        "group": ("string", False, "Heat::Ungrouped", False, []),
        "parts": ("list", False, [], False, []),
        "parts[].config": ("string", True, NO_DEFAULT, False, []),
        "parts[].filename": ("string", False, NO_DEFAULT, False, []),
        "parts[].type": ("string", False, "text", False, [allowed("text", "multipart")]),
        "parts[].subtype": ("string", False, NO_DEFAULT, False, []),
    }
    assert list(MultipartMime.attributes_schema) == ["config"]
    assert undocumented(MultipartMime) == []


def message_of(parts: list[dict[str, Any]], **kw: Any) -> tuple[str, Message]:
    res, ctx = fake_resource(MultipartMime, {"parts": parts}, **kw)
    run_action(res, "create")
    text = res.get_attribute("config")
    assert isinstance(text, str) and text == ctx.data["config"]
    return text, email.message_from_string(text)


def leaves(message: Message) -> list[tuple[str, str | None, str, str]]:
    """(content type, filename, charset, decoded text) of each part."""
    found = []
    for part in message.get_payload():
        assert isinstance(part, Message)
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        charset = part.get_content_charset() or ""
        found.append(
            (part.get_content_type(), part.get_filename(), charset, payload.decode(charset))
        )
    return found


def test_text_parts() -> None:
    _, message = message_of(
        [
            {"config": "plain text"},
            {"config": "#!/bin/sh\necho hi\n", "filename": "x-shellscript.sh"},
            {"config": "#cloud-config\n", "subtype": "cloud-config", "filename": "cc.yaml"},
            {"config": "héllo", "subtype": "x-greeting"},
        ]
    )
    assert message.get_content_type() == "multipart/mixed"
    assert message["MIME-Version"] == "1.0"
    assert leaves(message) == [
        ("text/plain", None, "us-ascii", "plain text"),
        ("text/x-shellscript", "x-shellscript.sh", "us-ascii", "#!/bin/sh\necho hi\n"),
        ("text/cloud-config", "cc.yaml", "us-ascii", "#cloud-config\n"),
        ("text/x-greeting", None, "utf-8", "héllo"),
    ]
    payload = message.get_payload()
    assert isinstance(payload, list)
    attachment = payload[1]
    assert isinstance(attachment, Message)
    assert attachment["Content-Disposition"] == 'attachment; filename="x-shellscript.sh"'


def test_no_parts_is_an_empty_multipart_message() -> None:
    text, message = message_of([])
    boundary = message.get_boundary()
    # The stdlib writes one empty body between the delimiters of an empty multipart.
    assert text.endswith(f"\n\n--{boundary}\n\n--{boundary}--\n")


def test_a_config_id_is_replaced_by_that_configs_text() -> None:
    _, message = message_of(
        [{"config": CONFIG_ID, "filename": "cloud-config"}],
        clients={"software_config": {CONFIG_ID: OTHER}},
    )
    assert leaves(message) == [("text/cloud-config", "cloud-config", "us-ascii", OTHER["config"])]


def test_a_structured_configs_map_travels_as_json() -> None:
    other = {"id": CONFIG_ID, "config": {"a": 1}}
    _, message = message_of(
        [{"config": CONFIG_ID}], clients={"software_config": {CONFIG_ID: other}}
    )
    assert leaves(message)[0][3] == '{"a": 1}'


@pytest.mark.parametrize(
    "clients",
    [
        {},  # the engine supplies no software-config store yet
        {"software_config": {}},  # no config has that id
    ],
)
def test_an_id_that_cannot_be_looked_up_is_inline_text(clients: dict[str, Any]) -> None:
    _, message = message_of([{"config": CONFIG_ID}], clients=clients)
    assert leaves(message)[0][3] == CONFIG_ID


def test_multipart_parts_are_spliced_in() -> None:
    inner, _ = message_of(
        [{"config": "one", "filename": "a.txt", "subtype": "plain"}, {"config": "twö"}]
    )
    _, message = message_of(
        [{"config": "first"}, {"config": inner, "type": "multipart"}, {"config": "last"}], seed=9
    )
    assert leaves(message) == [
        ("text/plain", None, "us-ascii", "first"),
        ("text/plain", "a.txt", "us-ascii", "one"),
        ("text/plain", None, "utf-8", "twö"),
        ("text/plain", None, "us-ascii", "last"),
    ]


def test_a_referenced_multipart_message_is_spliced_in() -> None:
    inner, _ = message_of([{"config": "one"}])
    store = {CONFIG_ID: {"id": CONFIG_ID, "config": inner}}
    _, message = message_of(
        [{"config": CONFIG_ID, "type": "multipart"}], clients={"software_config": store}
    )
    assert leaves(message) == [("text/plain", None, "us-ascii", "one")]


def test_multipart_text_that_is_not_multipart_adds_nothing() -> None:
    text, _ = message_of([{"config": "just text", "type": "multipart"}])
    assert text == message_of([])[0]


def test_message_is_replayable_with_the_same_seed() -> None:
    parts = [{"config": "a"}, {"config": "b"}]
    assert message_of(parts, seed=1)[0] == message_of(parts, seed=1)[0]
    assert message_of(parts, seed=1)[0] != message_of(parts, seed=2)[0]


def test_stored_as_a_software_config() -> None:
    res, ctx = fake_resource(MultipartMime, {"group": "script", "parts": [{"config": "x"}]})
    run_action(res, "create")
    assert ctx.data["group"] == "script"
    assert (ctx.data["options"], ctx.data["inputs"], ctx.data["outputs"]) == ({}, [], [])
    assert res.reference_id() == ctx.physical_id


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ([{"filename": "a"}], "Property config not assigned"),
        ([{"config": "x", "type": "binary"}], '"binary" is not an allowed value'),
    ],
)
def test_schema_errors(parts: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(StackValidationFailed, match=message):
        fake_resource(MultipartMime, {"parts": parts})


def test_any_change_replaces() -> None:
    parts = [{"config": "a"}]
    res, _ = fake_resource(MultipartMime, {"parts": parts})
    assert decide(res, {"parts": [{"config": "b"}]}).kind == "replace"
    assert decide(res, {"parts": parts, "group": "script"}).kind == "replace"
    assert decide(res, {"parts": parts}).kind == "unchanged"
