"""The ``parameter_groups`` section: checking that groups name real parameters, once.

Groups are informational (a UI lays out its form with them); the template-validate
API returns them unchanged. Errors are StackValidationFailed in the category
"Parameter Groups error" at ``parameter_groups.<label>`` (the group's index when it
has no label), as reference section 3.6 describes. Pseudo parameter names count
as parameters (quirk 19). Imports: kiln.core, kiln.template.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.core.paths import PathSegment
from kiln.template.parameter_types import PSEUDO_PARAMETER_NAMES

SECTION = "parameter_groups"
CATEGORY = "Parameter Groups error"


def _error(message: str, *where: PathSegment) -> KilnError:
    return StackValidationFailed(message, path=(SECTION, *where), category=CATEGORY)


def validate_parameter_groups(section: Any, parameter_names: Collection[str]) -> list[KilnError]:
    """Every problem in the ``parameter_groups`` section; empty when it is absent."""
    if not section:
        return []
    if not isinstance(section, list):
        return [_error(f"The {SECTION} should be a list.")]
    errors: list[KilnError] = []
    grouped: list[Any] = []
    for index, group in enumerate(section):
        where: PathSegment = index
        if not isinstance(group, dict):
            errors.append(_error("Each parameter group should be a mapping.", where))
            continue
        label = group.get("label")
        if isinstance(label, str) and label:
            where = label
        parameters = group.get("parameters")
        if parameters is None:
            errors.append(
                _error("The parameters must be provided for each parameter group.", where)
            )
            continue
        if not isinstance(parameters, list):
            errors.append(_error("The parameters of parameter group should be a list.", where))
            continue
        for name in parameters:
            if name in grouped:
                message = f"The {name} parameter must be assigned to one parameter group only."
                errors.append(_error(message, where))
                continue
            grouped.append(name)
            if not _is_parameter(name, parameter_names):
                message = f"The grouped parameter {name} does not reference a valid parameter."
                errors.append(_error(message, where))
    return errors


def _is_parameter(name: Any, parameter_names: Collection[str]) -> bool:
    return isinstance(name, str) and (name in parameter_names or name in PSEUDO_PARAMETER_NAMES)
