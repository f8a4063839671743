"""The user data an OS::Nova::Server boots with, per ``user_data_format``.

* RAW: the text as given; a software config id is replaced by that config's text.
* SOFTWARE_CONFIG: the same lookup, then the MIME document below (without the
  cfn-tools parts).
* HEAT_CFNTOOLS (the default): a multipart/mixed MIME document for cloud-init:
  a cloud-config part, a boothook that prepares the agent's directory, a
  part-handler that writes every ``x-cfninitdata`` part into that directory,
  the user's data (as ``cfn-userdata``, run by ``loguserdata.py``) and
  ``cfn-init-data``, the resource metadata as JSON.

An Ignition document (JSON with an ``ignition.version``) is not wrapped: the
metadata is added to it as a file instead. Nova wants the result base64-encoded
(:func:`encoded`). The parts' scripts are written for Kiln, not taken from Heat;
the metadata server URL and boto config parts of Heat are not produced, since a
plugin does not know the orchestration endpoint nor the stack user's keys.
Imports: stdlib, kiln.plugin.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Mapping
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from random import Random
from typing import Any
from urllib.parse import quote

from kiln.plugin.software_configs import SoftwareConfigs

AGENT_DIR = "/var/lib/heat-cfntools"

CLOUD_CONFIG = """#cloud-config
# Written by Kiln: keep the user's own cloud-config parts mergeable with this one.
merge_how: dict(recurse_array)+list(append)
"""

BOOTHOOK = f"""#!/bin/sh
# Written by Kiln: the directory the part-handler below fills, readable by root only.
mkdir -p {AGENT_DIR}
chmod 700 {AGENT_DIR}
"""

PART_HANDLER = f'''#part-handler
# Written by Kiln: store each text/x-cfninitdata part as a file of {AGENT_DIR}.
import errno
import os


def list_types():
    return ["text/x-cfninitdata"]


def handle_part(data, ctype, filename, payload):
    if ctype in ("__begin__", "__end__"):
        return
    try:
        os.makedirs("{AGENT_DIR}", 0o700)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise
    path = os.path.join("{AGENT_DIR}", filename)
    with open(path, "wb") as stream:
        stream.write(payload.encode("utf-8") if isinstance(payload, str) else payload)
'''

LOG_USER_DATA = f"""#!/usr/bin/env python3
# Written by Kiln: run the user's data (cfn-userdata) once, logging what it prints.
import os
import subprocess
import sys

script = os.path.join("{AGENT_DIR}", "cfn-userdata")
log = "/var/log/heat-provision.log"
os.chmod(script, 0o700)
with open(log, "ab") as out:
    code = subprocess.call([script], stdout=out, stderr=subprocess.STDOUT)
with open(os.path.join("{AGENT_DIR}", "provision-finished"), "w") as done:
    done.write(str(code))
sys.exit(code)
"""


def is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def resolve_config(user_data: str, configs: SoftwareConfigs | None) -> str:
    """``user_data`` itself, or the text of the software config whose id it is."""
    if configs is None or not is_uuid(user_data):
        return user_data
    found = configs.get(user_data)
    if found is None:
        return user_data
    config = found.get("config")
    if config is None:
        return ""
    # A structured config's map is delivered as JSON text.
    return config if isinstance(config, str) else json.dumps(config)


def _part(text: str, subtype: str, filename: str) -> MIMEText:
    part = MIMEText(text, subtype, "us-ascii" if text.isascii() else "utf-8")
    part.add_header("Content-Disposition", "attachment", filename=filename)
    return part


def _user_part_subtype(text: str) -> str:
    """The cloud-init type of the user's own text, from its first line."""
    if text.startswith("#!"):
        return "x-shellscript"
    if text.startswith("#cloud-config"):
        return "cloud-config"
    if text.startswith("#cloud-boothook"):
        return "cloud-boothook"
    if text.startswith("#include"):
        return "x-include-url"
    return "plain"


def ignition_with_metadata(text: str, metadata: Any) -> str | None:
    """An Ignition document with the metadata added as a file; None if not Ignition."""
    try:
        document = json.loads(text)
    except ValueError:
        return None
    ignition = document.get("ignition") if isinstance(document, dict) else None
    if not isinstance(ignition, dict) or "version" not in ignition:
        return None
    storage = document.setdefault("storage", {})
    files = storage.setdefault("files", [])
    files.append(
        {
            "path": f"{AGENT_DIR}/cfn-init-data",
            "mode": 0o600,
            "contents": {"source": "data:," + quote(json.dumps(metadata or {}))},
        }
    )
    return json.dumps(document)


def _boundary(rng: Random, texts: list[str]) -> str:
    # Drawn from the context's randomness so seeded runs give the same document.
    while True:
        boundary = f"{'=' * 15}{rng.randrange(10**19):019d}=="
        if not any(boundary in t for t in texts):
            return boundary


def mime_user_data(user_data: str, metadata: Any, *, cfntools: bool, rng: Random) -> str:
    """The multipart MIME document of a HEAT_CFNTOOLS or SOFTWARE_CONFIG server."""
    parts = [
        _part(CLOUD_CONFIG, "cloud-config", "cloud-config"),
        _part(BOOTHOOK, "cloud-boothook", "boothook.sh"),
        _part(PART_HANDLER, "part-handler", "part-handler.py"),
    ]
    if cfntools:
        if user_data:
            parts.append(_part(user_data, "x-cfninitdata", "cfn-userdata"))
        parts.append(_part(LOG_USER_DATA, "x-shellscript", "loguserdata.py"))
    elif user_data:
        parts.append(_part(user_data, _user_part_subtype(user_data), "userdata"))
    parts.append(_part(json.dumps(metadata or {}), "x-cfninitdata", "cfn-init-data"))
    boundary = _boundary(rng, [p.as_string() for p in parts])
    return MIMEMultipart(boundary=boundary, _subparts=parts).as_string()


def build_user_data(
    properties: Mapping[str, Any],
    metadata: Any,
    configs: SoftwareConfigs | None,
    rng: Random,
) -> str:
    """The user data text of a server with these (typed) properties."""
    user_data = properties.get("user_data") or ""
    user_format = properties["user_data_format"]
    if user_format in ("RAW", "SOFTWARE_CONFIG"):
        user_data = resolve_config(user_data, configs)
    if user_format == "RAW":
        return str(user_data)
    injected = ignition_with_metadata(user_data, metadata) if user_data else None
    if injected is not None:
        return injected
    return mime_user_data(user_data, metadata, cfntools=user_format == "HEAT_CFNTOOLS", rng=rng)


def encoded(user_data: str) -> str:
    """Base64 text of the user data, as Nova's API takes it."""
    return base64.b64encode(user_data.encode("utf-8")).decode("ascii")
