"""Template versions: which version keys and values exist and what each allows.

A :class:`TemplateVersion` says which sections, resource keys, output keys,
deletion policies and parameter keys a version accepts, and gives its function
tables (built in ``kiln.template.functions.tables``). Functions with variants
ask ``version.hot_at_least("2015-10-15")``. Imports: kiln.core, kiln.template.functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from kiln.core.errors import InvalidTemplateVersion

if TYPE_CHECKING:
    from kiln.template.functions.base import FunctionTable

HOT_KEY = "heat_template_version"
AWS_KEY = "AWSTemplateFormatVersion"
HEAT_CFN_KEY = "HeatTemplateFormatVersion"
VERSION_KEYS = (HOT_KEY, AWS_KEY, HEAT_CFN_KEY)

HOT_DATES = (
    "2013-05-23",
    "2014-10-16",
    "2015-04-30",
    "2015-10-15",
    "2016-04-08",
    "2016-10-14",
    "2017-02-24",
    "2017-09-01",
    "2018-03-02",
    "2018-08-31",
    "2021-04-16",
)
HOT_ALIASES = {
    "newton": "2016-10-14",
    "ocata": "2017-02-24",
    "pike": "2017-09-01",
    "queens": "2018-03-02",
    "rocky": "2018-08-31",
    "wallaby": "2021-04-16",
}
RELEASE_NAMES = {
    "2013-05-23": "icehouse",
    "2014-10-16": "juno",
    "2015-04-30": "kilo",
    "2015-10-15": "liberty",
    "2016-04-08": "mitaka",
    **{date: name for name, date in HOT_ALIASES.items()},
}

HOT_BASE_SECTIONS = (
    "heat_template_version",
    "description",
    "parameter_groups",
    "parameters",
    "resources",
    "outputs",
)
HOT_BASE_RESOURCE_KEYS = (
    "type",
    "properties",
    "metadata",
    "depends_on",
    "update_policy",
    "deletion_policy",
    "description",
)
HOT_BASE_PARAMETER_KEYS = (
    "type",
    "label",
    "description",
    "default",
    "hidden",
    "immutable",
    "constraints",
    "schema",
)
CFN_SECTIONS = ("Description", "Mappings", "Parameters", "Resources", "Outputs")
CFN_RESOURCE_KEYS = (
    "Type",
    "Properties",
    "Metadata",
    "DependsOn",
    "DeletionPolicy",
    "UpdatePolicy",
    "Description",
)
CFN_PARAMETER_KEYS = (
    "Type",
    "Default",
    "NoEcho",
    "AllowedValues",
    "AllowedPattern",
    "MinLength",
    "MaxLength",
    "MinValue",
    "MaxValue",
    "Description",
    "ConstraintDescription",
    "Label",
)


@dataclass(frozen=True)
class TemplateVersion:
    """One accepted (key, value) pair and everything that follows from it."""

    key: str
    date: str
    aliases: tuple[str, ...] = field(default=())

    # -- identity -------------------------------------------------------------
    @property
    def is_hot(self) -> bool:
        return self.key == HOT_KEY

    @property
    def is_cfn(self) -> bool:
        return not self.is_hot

    @property
    def name(self) -> str:
        """``heat_template_version.2016-10-14``, as the template-versions API lists it."""
        return f"{self.key}.{self.date}"

    def hot_at_least(self, date: str) -> bool:
        """True for HOT versions on or after ``date``."""
        return self.is_hot and self.date >= date

    @property
    def has_conditions(self) -> bool:
        return self.hot_at_least("2016-10-14") or self.key == AWS_KEY

    # -- structure ------------------------------------------------------------
    @property
    def sections(self) -> tuple[str, ...]:
        if self.is_hot:
            extra = ("conditions",) if self.has_conditions else ()
            return HOT_BASE_SECTIONS + extra
        extra = ("Conditions",) if self.has_conditions else ()
        return (self.key, *CFN_SECTIONS, *extra)

    @property
    def resource_keys(self) -> tuple[str, ...]:
        if self.is_hot:
            hot_extra: tuple[str, ...] = ("external_id", "condition")
            return HOT_BASE_RESOURCE_KEYS + (hot_extra if self.has_conditions else ())
        cfn_extra: tuple[str, ...] = ("Condition",)
        return CFN_RESOURCE_KEYS + (cfn_extra if self.has_conditions else ())

    @property
    def output_keys(self) -> tuple[str, ...]:
        if self.is_hot:
            return ("description", "value") + (("condition",) if self.has_conditions else ())
        return ("Description", "Value") + (("Condition",) if self.has_conditions else ())

    @property
    def deletion_policies(self) -> tuple[str, ...]:
        base = ("Delete", "Retain", "Snapshot")
        if self.hot_at_least("2016-10-14"):
            return (*base, "delete", "retain", "snapshot")
        return base

    @property
    def parameter_keys(self) -> tuple[str, ...]:
        if self.is_hot:
            extra = ("tags",) if self.hot_at_least("2018-03-02") else ()
            return HOT_BASE_PARAMETER_KEYS + extra
        return CFN_PARAMETER_KEYS

    @property
    def has_modulo(self) -> bool:
        return self.hot_at_least("2017-02-24")

    # -- functions ------------------------------------------------------------
    @cached_property
    def functions(self) -> FunctionTable:
        """The table used outside condition contexts."""
        from kiln.template.functions.tables import function_table

        return function_table(self)

    @cached_property
    def condition_functions(self) -> FunctionTable:
        """The table used in condition contexts."""
        from kiln.template.functions.tables import condition_table

        return condition_table(self)


def _build_registry() -> dict[tuple[str, str], TemplateVersion]:
    reg: dict[tuple[str, str], TemplateVersion] = {}
    by_date = {d: tuple(a for a, ad in HOT_ALIASES.items() if ad == d) for d in HOT_DATES}
    for date in HOT_DATES:
        v = TemplateVersion(HOT_KEY, date, by_date[date])
        reg[(HOT_KEY, date)] = v
        for alias in by_date[date]:
            reg[(HOT_KEY, alias)] = v
    reg[(AWS_KEY, "2010-09-09")] = TemplateVersion(AWS_KEY, "2010-09-09")
    reg[(HEAT_CFN_KEY, "2012-12-12")] = TemplateVersion(HEAT_CFN_KEY, "2012-12-12")
    return reg


REGISTRY = _build_registry()


def all_versions() -> list[TemplateVersion]:
    """Every distinct version, CFN first, then HOT by date."""
    seen: dict[str, TemplateVersion] = {}
    for v in REGISTRY.values():
        seen.setdefault(v.name, v)
    return sorted(seen.values(), key=lambda v: (v.is_hot, v.date))


def get_version(value: str, key: str = HOT_KEY) -> TemplateVersion:
    """Look up a version by key and value (date or alias)."""
    try:
        return REGISTRY[(key, value)]
    except KeyError:
        raise _unknown(key, value) from None


def _unknown(key: str, value: str) -> InvalidTemplateVersion:
    accepted = sorted(v for (k, v) in REGISTRY if k == key)
    if len(accepted) == 1:
        expected = f'"{key}" should be: {accepted[0]}'
    else:
        expected = f'"{key}" should be one of: {", ".join(accepted)}'
    return InvalidTemplateVersion(
        f'The template version is invalid: "{key}: {value}". {expected}', path=(key,)
    )


def detect_version(template: dict[str, Any]) -> TemplateVersion:
    """Choose the version of a loaded template (reference 1.1)."""
    found = [(k, template[k]) for k in VERSION_KEYS if isinstance(template.get(k), str)]
    if not found:
        raise InvalidTemplateVersion(
            "The template version is invalid: Template version was not provided"
        )
    if len(found) > 1:
        names = ", ".join(f"{k}: {v}" for k, v in found)
        raise InvalidTemplateVersion(
            f"The template version is invalid: Ambiguous versions ({names})"
        )
    key, value = found[0]
    return get_version(value, key)
