"""OS::Heat::RandomString: a random string, e.g. for passwords.

The string is drawn once, at create, from character classes and custom
sequences, each with a minimum count; it lives in the resource data (redacted)
and ``get_resource`` returns it. Nothing updates in place: any change, ``salt``
included, replaces the resource and so draws a new string. The hidden
``sequence`` property is the old spelling of one character class.
Imports: kiln.plugin, kiln.schema, kiln.core.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from random import Random
from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed, raise_all
from kiln.plugin import Resource, resource_type
from kiln.plugin.resource import Cookie
from kiln.schema.constraints import AllowedValues, Range
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType, SupportStatus

CLASS_CHARACTERS: Mapping[str, str] = {
    "lettersdigits": string.ascii_letters + string.digits,
    "letters": string.ascii_letters,
    "lowercase": string.ascii_lowercase,
    "uppercase": string.ascii_uppercase,
    "digits": string.digits,
    "hexdigits": "0123456789ABCDEF",  # upper case only, as Heat
    "octdigits": string.octdigits,
}
_CLASSES = AllowedValues(tuple(CLASS_CHARACTERS))
_MIN_COUNT = Range(1, 512)
DEFAULT_CLASSES = [{"class": "lettersdigits", "min": 1}]
TOO_SHORT = (
    "Length property cannot be smaller than combined character class and "
    "character sequence minimums"
)


def alphabets(properties: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(characters, minimum count) of every class then every sequence.

    ``sequence: X`` stands for ``character_classes: [{class: X, min: 1}]``: it
    takes the place of the default classes, or joins classes given explicitly.
    """
    classes = list(properties.get("character_classes") or [])
    legacy = properties.get("sequence")
    if legacy:
        extra = {"class": legacy, "min": 1}
        classes = [extra] if classes == DEFAULT_CLASSES else [*classes, extra]
    found = [(CLASS_CHARACTERS[c["class"]], c["min"]) for c in classes]
    for seq in properties.get("character_sequences") or []:
        found.append(("".join(dict.fromkeys(seq["sequence"])), seq["min"]))
    return found


def generate(length: int, pools: list[tuple[str, int]], rng: Random) -> str:
    """``min`` characters from each pool, the rest from all of them, shuffled."""
    chars = [rng.choice(pool) for pool, count in pools for _ in range(count)]
    everything = "".join(dict.fromkeys("".join(pool for pool, _ in pools)))
    chars += [rng.choice(everything) for _ in range(length - len(chars))]
    rng.shuffle(chars)
    return "".join(chars)


@resource_type("OS::Heat::RandomString")
class RandomString(Resource):
    """A random string drawn at create; ``get_resource`` and attribute ``value`` give it."""

    properties_schema = {
        "length": PropertySchema(
            PropertyType.INTEGER,
            "Length of the string to generate.",
            default=32,
            constraints=(Range(1, 512),),
        ),
        "sequence": PropertySchema(
            PropertyType.STRING,
            "Character class of the string (use character_classes).",
            constraints=(_CLASSES,),
            support_status=SupportStatus("HIDDEN", message="Use property character_classes."),
        ),
        "character_classes": PropertySchema(
            PropertyType.LIST,
            "Character classes to draw from, each with a minimum count.",
            default=DEFAULT_CLASSES,
            schema={
                "class": PropertySchema(
                    PropertyType.STRING,
                    "A character class.",
                    default="lettersdigits",
                    constraints=(_CLASSES,),
                ),
                "min": PropertySchema(
                    PropertyType.INTEGER,
                    "Least number of characters of this class in the string.",
                    default=1,
                    constraints=(_MIN_COUNT,),
                ),
            },
        ),
        "character_sequences": PropertySchema(
            PropertyType.LIST,
            "Custom alphabets to draw from, each with a minimum count.",
            schema={
                "sequence": PropertySchema(
                    PropertyType.STRING, "The characters of the alphabet.", required=True
                ),
                "min": PropertySchema(
                    PropertyType.INTEGER,
                    "Least number of characters of this alphabet in the string.",
                    default=1,
                    constraints=(_MIN_COUNT,),
                ),
            },
        ),
        "salt": PropertySchema(
            PropertyType.STRING,
            "Not used to draw the string: change it to get a new string.",
        ),
    }
    attributes_schema = {
        "value": AttributeSchema(
            "The generated string (also what get_resource returns).", type=PropertyType.STRING
        ),
    }

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        errors: list[KilnError] = []
        for i, seq in enumerate(properties.get("character_sequences") or []):
            if not seq["sequence"]:
                errors.append(
                    StackValidationFailed(
                        "A character sequence must not be empty",
                        path=("character_sequences", i, "sequence"),
                    )
                )
        pools = alphabets(properties)
        if not pools:
            errors.append(
                StackValidationFailed(
                    "At least one character class or character sequence is required",
                    path=("character_classes",),
                )
            )
        if sum(count for _, count in pools) > properties["length"]:
            errors.append(StackValidationFailed(TOO_SHORT, path=("length",)))
        return errors

    def get_attribute(self, name: str) -> Any:
        if name == "value":
            return self.ctx.data_get("value")
        return super().get_attribute(name)

    def reference_id(self) -> Any:
        if self.ctx.physical_id:
            return self.ctx.data_get("value")
        return self.ctx.name

    def handle_create(self) -> Cookie:
        raise_all(self.validate(self.properties))
        value = generate(self.properties["length"], alphabets(self.properties), self.ctx.random)
        self.ctx.data_set("value", value, redact=True)
        self.ctx.set_physical_id(self.ctx.physical_resource_name())
        return None
