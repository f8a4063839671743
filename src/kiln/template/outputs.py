"""The outputs section (reference 4.3): structure, parsing and per-output values.

An output whose condition is false keeps its description, has a null value and
is never parsed. Resolving an output never fails the stack: a failure becomes
that output's ``error``. Imports: kiln.core, kiln.template.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.template.functions.base import resolve_top, validate_functions

if TYPE_CHECKING:
    from kiln.template.stack import StackDefinition

CATEGORY = "Output validation error"
_CFN_KEYS = {"Value": "value", "Description": "description", "Condition": "condition"}


@dataclass(frozen=True)
class OutputDefinition:
    """One output: its parsed value (None when its condition is false)."""

    name: str
    value: Any
    description: str | None
    enabled: bool = True


@dataclass(frozen=True)
class OutputValue:
    """An output as the API shows it."""

    key: str
    value: Any
    description: str
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "output_key": self.key,
            "description": self.description,
            "output_value": self.value,
        }
        if self.error is not None:
            out["output_error"] = self.error
        return out


def parse_outputs(stack: StackDefinition) -> tuple[dict[str, OutputDefinition], list[KilnError]]:
    """Check and parse every output, collecting errors."""
    template = stack.template
    section, errors = template.mapping_section("outputs")
    section_key = template.section_key("outputs")
    allowed = set(template.version.output_keys)
    outputs: dict[str, OutputDefinition] = {}
    for name, body in section.items():
        path = (section_key, name)
        if not isinstance(body, dict):
            errors.append(
                StackValidationFailed(
                    f"Output definitions must be a map. Found a {type(body).__name__} instead",
                    path=path,
                    category=CATEGORY,
                )
            )
            continue
        bad = [k for k in body if k not in allowed]
        for key in bad:
            errors.append(
                StackValidationFailed(
                    f'"{key}" is not a valid keyword inside a output definition',
                    path=(*path, key),
                    category=CATEGORY,
                )
            )
        fields = {(_CFN_KEYS.get(k, k) if template.version.is_cfn else k): k for k in body}
        if "value" not in fields:
            errors.append(
                StackValidationFailed(
                    "Each output definition must contain a value key.",
                    path=path,
                    category=CATEGORY,
                )
            )
            continue
        description = body.get(fields.get("description", "description"))
        enabled = True
        if "condition" in fields:
            key = fields["condition"]
            try:
                enabled = stack.conditions.evaluate(body[key], (*path, key))
            except KilnError as err:
                errors.append(err)
        value = None
        if enabled:
            key = fields["value"]
            try:
                value = stack.parser.parse(body[key], (*path, key))
            except KilnError as err:
                errors.append(err)
                continue
            errors.extend(validate_functions(value, stack))
        outputs[name] = OutputDefinition(
            name=name,
            value=value,
            description=description if isinstance(description, str) else None,
            enabled=enabled,
        )
    return outputs, errors


def resolve_output(stack: StackDefinition, output: OutputDefinition) -> OutputValue:
    """Resolve one output now; a failure is recorded, not raised."""
    description = output.description or "No description given"
    if not output.enabled:
        return OutputValue(output.name, None, description)
    try:
        value = resolve_top(output.value, stack)
    except KilnError as err:
        return OutputValue(output.name, None, description, err.full_message)
    return OutputValue(output.name, value, description)
