"""Parameter schemas and values: types, conversion, display, pseudo parameters.

A :class:`ParameterSchema` is one declared parameter, whatever the template
format (CFN types are mapped to the HOT names). :func:`convert_value` turns a
user value, environment default or template default into the value
``get_param`` sees (reference section 3.3); :func:`display_value` renders a
value the way stack representations show it; :func:`parameter_property_schema`
gives the property a template resource exposes for the parameter (section 7.2).
Declarations are parsed in ``kiln.template.parameters``. Imports: kiln.core, kiln.schema,
kiln.template.loader (its nesting bound).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.core.paths import Path, PathSegment
from kiln.schema.constraints import Constraint
from kiln.schema.properties import PropertySchema, PropertyType
from kiln.schema.types import NO_DEFAULT, parse_bool, str_to_num
from kiln.template.loader import MAX_DEPTH, depth_ok

if TYPE_CHECKING:
    from kiln.template.versions import TemplateVersion

STRING = "string"
NUMBER = "number"
COMMA_DELIMITED_LIST = "comma_delimited_list"
JSON = "json"
BOOLEAN = "boolean"
PARAMETER_TYPES = (STRING, NUMBER, COMMA_DELIMITED_LIST, JSON, BOOLEAN)

# CFN spelling -> HOT spelling, and back (the validate API reports CFN names).
CFN_TYPES = {
    "String": STRING,
    "Number": NUMBER,
    "CommaDelimitedList": COMMA_DELIMITED_LIST,
    "Json": JSON,
    "Boolean": BOOLEAN,
}
CFN_TYPE_NAMES = {hot: cfn for cfn, hot in CFN_TYPES.items()}

HOT_PSEUDO_PARAMETERS = ("OS::stack_name", "OS::stack_id", "OS::project_id")
CFN_PSEUDO_PARAMETERS = ("AWS::StackId", "AWS::StackName", "AWS::Region")
PSEUDO_PARAMETER_NAMES = frozenset(HOT_PSEUDO_PARAMETERS + CFN_PSEUDO_PARAMETERS)
AWS_REGIONS = (
    "us-east-1",
    "us-west-1",
    "us-west-2",
    "sa-east-1",
    "eu-west-1",
    "ap-southeast-1",
    "ap-northeast-1",
)
DEFAULT_AWS_REGION = "ap-southeast-1"

HIDDEN_TEXT = "******"

ErrorKind = type[KilnError]


@dataclass(frozen=True)
class ParameterSchema:
    """One declared parameter. ``default`` is the raw template default, or NO_DEFAULT.

    ``section`` is the key of the section that declares it (``parameters`` or
    ``Parameters``), so errors about the parameter carry the template's own path.
    """

    name: str
    type: str
    label: str | None = None
    description: str = ""
    default: Any = NO_DEFAULT
    hidden: bool = False
    immutable: bool = False
    constraints: tuple[Constraint, ...] = ()
    tags: tuple[str, ...] | None = None
    section: str = "parameters"

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def path(self) -> Path:
        return (self.section, self.name)

    @property
    def cfn_type(self) -> str:
        """The type as the validate API names it (``CommaDelimitedList``, ...)."""
        return CFN_TYPE_NAMES.get(self.type, self.type)

    def invalid(
        self,
        message: str,
        kind: ErrorKind = StackValidationFailed,
        *subpath: PathSegment,
    ) -> KilnError:
        """``Parameter 'NAME' is invalid: <message>``, located at the declaration."""
        return kind(f"Parameter '{self.name}' is invalid: {message}", path=(*self.path, *subpath))


def _to_string(value: Any) -> str:
    if isinstance(value, list | dict):
        raise ValueError(f"Value must be a string; got {json.dumps(value, default=str)}")
    return str(value)


def _to_list(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [str(item) for item in value]
    if isinstance(value, str):
        # No trimming: "x, y" is ["x", " y"], as in Heat.
        return value.split(",") if value else []
    raise ValueError(
        f"Value must be a comma-delimited list string: {json.dumps(value, default=str)}"
    )


def _to_json(value: Any) -> Any:
    if isinstance(value, str):
        if not value:
            return value
        try:
            loaded = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"Value must be valid JSON: {exc}") from None
        except RecursionError:
            loaded = _TOO_DEEP  # nested past what the decoder can recurse into
    else:
        try:
            # A round trip rejects what JSON cannot hold and copies what it can.
            loaded = json.loads(json.dumps(value)) if depth_ok(value) else _TOO_DEEP
        except (TypeError, ValueError) as exc:
            raise ValueError(f"Value must be valid JSON: {exc}") from None
    # The loader's bound on nesting, so that no deeper value reaches the evaluator.
    if loaded is _TOO_DEEP or not depth_ok(loaded):
        raise ValueError(
            f"Value must be valid JSON: nesting depth exceeds maximum allowed depth ({MAX_DEPTH})"
        )
    return loaded


_TOO_DEEP = object()


def _convert(type_name: str, raw: Any) -> Any:
    if type_name == STRING:
        return _to_string(raw)
    if type_name == NUMBER:
        return str_to_num(raw)
    if type_name == BOOLEAN:
        return parse_bool(raw)
    if type_name == COMMA_DELIMITED_LIST:
        return _to_list(raw)
    if type_name == JSON:
        return _to_json(raw)
    raise ValueError(f"Invalid type ({type_name})")


def convert_value(schema: ParameterSchema, raw: Any) -> Any:
    """The value ``get_param`` sees for ``raw`` (reference 3.3).

    Raises StackValidationFailed "Parameter 'NAME' is invalid: <message>".
    """
    try:
        return _convert(schema.type, raw)
    except (TypeError, ValueError) as exc:
        raise schema.invalid(str(exc)) from None


def display_value(schema: ParameterSchema, value: Any) -> str:
    """A value as stack representations show it: hidden masked, lists joined, JSON as text."""
    if schema.hidden:
        return HIDDEN_TEXT
    if schema.type == COMMA_DELIMITED_LIST and isinstance(value, list | tuple):
        return ",".join("" if item is None else str(item) for item in value)
    if schema.type == JSON and not isinstance(value, str):
        return json.dumps(value)
    return str(value)


_PROPERTY_TYPES = {
    STRING: PropertyType.STRING,
    NUMBER: PropertyType.NUMBER,
    COMMA_DELIMITED_LIST: PropertyType.LIST,
    JSON: PropertyType.MAP,
    BOOLEAN: PropertyType.BOOLEAN,
}


def parameter_property_schema(
    parameter: ParameterSchema, *, has_env_default: bool = False
) -> PropertySchema:
    """The property a template resource exposes for one provider parameter (7.2).

    Required iff the parameter has no default, counting an environment
    ``parameter_defaults`` entry (``has_env_default``). No default is carried:
    unset properties are left out of the nested stack's parameters, so the
    nested template's own default applies. Every property is updatable.
    """
    property_type = _PROPERTY_TYPES[parameter.type]
    return PropertySchema(
        property_type,
        description=parameter.description,
        required=not (parameter.has_default or has_env_default),
        constraints=parameter.constraints,
        update_allowed=True,
        allow_conversion=property_type in (PropertyType.LIST, PropertyType.MAP),
    )


def pseudo_parameter_values(
    version: TemplateVersion,
    *,
    stack_name: str,
    stack_id: str | None,
    project_id: str,
) -> dict[str, str]:
    """The pseudo parameters of a template of this version (3.2 and 1.6).

    ``OS::stack_id`` is the string ``"None"`` until the stack is stored.
    """
    if version.is_hot:
        return {
            "OS::stack_name": stack_name,
            "OS::stack_id": str(stack_id),
            "OS::project_id": project_id,
        }
    return {
        "AWS::StackId": f"arn:openstack:heat::{project_id}:stacks/{stack_name}/{stack_id}",
        "AWS::StackName": stack_name,
        "AWS::Region": DEFAULT_AWS_REGION,
    }
