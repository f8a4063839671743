"""OS::Nova::Server user data: RAW, SOFTWARE_CONFIG and HEAT_CFNTOOLS documents."""

from __future__ import annotations

import base64
import email
import json
from email.message import Message
from random import Random
from typing import Any

from kiln.resources.nova.server_user_data import build_user_data, encoded

CONFIG_ID = "0b5c2d4e-8f7a-4b6c-9d1e-2f3a4b5c6d7e"
CONFIGS = {CONFIG_ID: {"id": CONFIG_ID, "config": "#!/bin/sh\necho from config\n"}}


def build(user_data: str, fmt: str, metadata: Any = None, configs: Any = CONFIGS) -> str:
    props = {"user_data": user_data, "user_data_format": fmt}
    return build_user_data(props, metadata, configs, Random(1))


def parts(text: str) -> dict[str, tuple[str, str]]:
    """filename -> (content type, decoded text) of each part."""
    message = email.message_from_string(text)
    assert message.is_multipart()
    found = {}
    for part in message.get_payload():
        assert isinstance(part, Message)
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        found[str(part.get_filename())] = (part.get_content_type(), payload.decode())
    return found


def test_raw_is_passed_as_is() -> None:
    assert build("#!/bin/sh\necho hi\n", "RAW") == "#!/bin/sh\necho hi\n"


def test_raw_with_a_software_config_id_gives_its_config() -> None:
    assert build(CONFIG_ID, "RAW") == "#!/bin/sh\necho from config\n"
    assert build(CONFIG_ID, "RAW", configs=None) == CONFIG_ID
    structured = {CONFIG_ID: {"config": {"a": 1}}}
    assert json.loads(build(CONFIG_ID, "RAW", configs=structured)) == {"a": 1}


def test_heat_cfntools_builds_a_mime_document() -> None:
    found = parts(build("#!/bin/sh\necho hi\n", "HEAT_CFNTOOLS", metadata={"k": "v"}))
    assert found["cfn-userdata"] == ("text/x-cfninitdata", "#!/bin/sh\necho hi\n")
    assert found["cloud-config"][0] == "text/cloud-config"
    assert found["boothook.sh"][0] == "text/cloud-boothook"
    assert found["part-handler.py"][0] == "text/part-handler"
    assert found["loguserdata.py"][0] == "text/x-shellscript"
    assert json.loads(found["cfn-init-data"][1]) == {"k": "v"}


def test_software_config_wraps_the_config_without_cfntools_parts() -> None:
    found = parts(build(CONFIG_ID, "SOFTWARE_CONFIG"))
    assert found["userdata"] == ("text/x-shellscript", "#!/bin/sh\necho from config\n")
    assert "loguserdata.py" not in found and "cfn-userdata" not in found
    assert json.loads(found["cfn-init-data"][1]) == {}


def test_the_document_is_the_same_for_the_same_seed() -> None:
    assert build("x", "HEAT_CFNTOOLS") == build("x", "HEAT_CFNTOOLS")


def test_ignition_gets_the_metadata_as_a_file() -> None:
    ignition = json.dumps({"ignition": {"version": "3.0.0"}})
    document = json.loads(build(ignition, "HEAT_CFNTOOLS", metadata={"a": 1}))
    (item,) = document["storage"]["files"]
    assert item["path"] == "/var/lib/heat-cfntools/cfn-init-data"
    assert item["contents"]["source"].startswith("data:,")


def test_encoded_is_base64() -> None:
    assert base64.b64decode(encoded("héllo")).decode() == "héllo"
