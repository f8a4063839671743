"""OS::Heat::MultipartMime: several configs joined in one multipart/mixed MIME message.

Each part's ``config`` is inline text, or the id of another software config
whose text is used. ``type: text`` adds one ``text/<subtype>`` part (subtype
defaulting to the filename without its extension, else ``plain``; charset
us-ascii, or utf-8 when needed; ``Content-Disposition: attachment`` when a
filename is given). ``type: multipart`` parses the text as a MIME message and
adds each of its parts. The message is stored as a software config (``group``
property); any change replaces it.

Other configs are looked up through ``ctx.client("software_config")``
(kiln.plugin.software_configs), which the engine will supply; without it, or
when no config has the id, the value is inline text. The boundary is drawn from
``ctx.random`` so that seeded runs give the same message.
Imports: kiln.plugin, kiln.schema, stdlib email and the SoftwareConfig plugin
it extends.
"""

from __future__ import annotations

import email
import json
import os.path
import uuid
from collections.abc import Mapping
from email.message import Message
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from random import Random
from typing import Any

from kiln.plugin import resource_type
from kiln.plugin.software_configs import SoftwareConfigs, software_configs
from kiln.resources.heat.software_config import GROUP, SoftwareConfig
from kiln.schema.constraints import AllowedValues
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

T = PropertyType


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def part_text(config: str, configs: SoftwareConfigs | None) -> str:
    """The text of a part: the referenced config's text, or ``config`` itself."""
    if configs is None or not _is_uuid(config):
        return config
    found = configs.get(config)
    if found is None:
        return config
    text = found.get("config")
    if text is None:
        return ""
    # A structured config's map travels as JSON text.
    return text if isinstance(text, str) else json.dumps(text)


def text_part(text: str, subtype: str | None, filename: str | None) -> MIMEText:
    """One ``text/<subtype>`` part, an attachment when it has a filename."""
    if not subtype and filename:
        subtype = os.path.splitext(filename)[0]
    charset = "us-ascii" if text.isascii() else "utf-8"
    part = MIMEText(text, subtype or "plain", charset)
    if filename:
        part.add_header("Content-Disposition", "attachment", filename=filename)
    return part


def parts_of(text: str) -> list[MIMEText]:
    """The leaf parts of a MIME message, rebuilt; none when it is not multipart."""
    message = email.message_from_string(text)
    if not message.is_multipart():
        return []
    found = []
    for leaf in message.walk():
        if leaf.is_multipart():
            continue  # nested multiparts are flattened into their leaves
        found.append(text_part(_decoded(leaf), leaf.get_content_subtype(), leaf.get_filename()))
    return found


def _decoded(part: Message) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return str(part.get_payload())
    return payload.decode(part.get_content_charset() or "us-ascii", errors="replace")


def _boundary(rng: Random, parts: list[MIMEText]) -> str:
    # The stdlib's boundary shape, drawn from the context's randomness; redrawn
    # in the (vanishingly rare) case it occurs in a part.
    texts = [p.as_string() for p in parts]
    while True:
        boundary = f"{'=' * 15}{rng.randrange(10**19):019d}=="
        if not any(boundary in t for t in texts):
            return boundary


def build_message(
    parts: list[Mapping[str, Any]], configs: SoftwareConfigs | None, rng: Random
) -> str:
    """The multipart/mixed message of ``parts`` (the ``parts`` property, typed)."""
    subparts: list[MIMEText] = []
    for part in parts:
        text = part_text(part["config"], configs)
        if part["type"] == "multipart":
            subparts.extend(parts_of(text))
        else:
            subparts.append(text_part(text, part["subtype"], part["filename"]))
    message = MIMEMultipart(boundary=_boundary(rng, subparts), _subparts=subparts)
    return message.as_string()


@resource_type("OS::Heat::MultipartMime")
class MultipartMime(SoftwareConfig):
    """Joins configs into one multipart/mixed MIME message (e.g. for cloud-init)."""

    properties_schema = {
        "group": GROUP,
        "parts": PropertySchema(
            T.LIST,
            "The parts of the message, in order.",
            default=[],
            schema={
                "config": PropertySchema(
                    T.STRING, "Inline text, or the id of a software config.", required=True
                ),
                "filename": PropertySchema(T.STRING, "File name of the part (an attachment)."),
                "type": PropertySchema(
                    T.STRING,
                    "text: one part; multipart: the parts of the MIME message config holds.",
                    default="text",
                    constraints=(AllowedValues(("text", "multipart")),),
                ),
                "subtype": PropertySchema(
                    T.STRING,
                    "MIME subtype of a text part (default: the filename without extension).",
                ),
            },
        ),
    }
    attributes_schema = {
        "config": AttributeSchema("The MIME message.", type=T.STRING),
    }

    def config_fields(self) -> dict[str, Any]:
        message = build_message(
            self.properties["parts"], software_configs(self.ctx), self.ctx.random
        )
        return {
            "group": self.properties["group"],
            "config": message,
            "options": {},
            "inputs": [],
            "outputs": [],
        }
