"""How intrinsic functions are recognised, parsed, validated and resolved.

A one-key mapping whose key is in the active *function table* is a call. Parsing
turns template data into the same data with :class:`Function` objects in place
of calls; shape errors are raised while parsing. Resolution turns it back into
plain data, bottom-up. ``if`` and other *macros* see their raw arguments and
return already parsed data (so an untaken branch is never looked at).

Each family of functions lives in its own module beside this one; the tables
that say which names a template version knows are in ``kiln.template.versions``.
Imports: kiln.core only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.core.paths import Path, render_path

if TYPE_CHECKING:
    from kiln.template.versions import TemplateVersion


class _Absent:
    """The value of a two-argument ``if`` whose condition is false."""

    _instance: ClassVar[_Absent | None] = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()


class FunctionContext(Protocol):
    """What functions may ask of the stack they are evaluated in.

    The template layer implements it for validation and offline resolution
    (resources not created yet); the engine implements it with live state.
    """

    def param_value(self, name: str) -> Any:
        """The typed value of a parameter or pseudo parameter.

        Raises UserParameterMissing when there is none.
        """

    def has_parameter(self, name: str) -> bool:
        """Whether ``name`` is a declared or pseudo parameter (it may lack a value)."""

    def has_resource(self, name: str) -> bool:
        """Whether ``name`` is an enabled resource of this template."""

    def resource_reference(self, name: str) -> Any:
        """``get_resource``: the reference id, or the name before creation."""

    def resource_attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any:
        """``get_attr`` with an attribute name and a path handed to the resource."""

    def resource_attributes(self, name: str) -> Any:
        """``get_attr: [name]``: every attribute but ``show``; null before creation."""

    def check_attribute(self, name: str, attribute: str) -> str | None:
        """At validation: an error message when the type has no such attribute."""

    def file_content(self, key: str) -> str | None:
        """The entry of the files map named exactly ``key``, or None."""

    def condition(self, name: str) -> bool:
        """The value of a condition of the conditions section.

        Raises StackValidationFailed 'Invalid condition "X"' when unknown.
        """

    def facade(self, what: str) -> Any:
        """``resource_facade``: the parent resource's metadata/deletion/update policy."""

    def availability_zones(self) -> list[str]:
        """``Fn::GetAZs``: the compute service's availability zone names."""

    def mapping(self, name: str, key: str, value: str) -> Any:
        """``Fn::FindInMap`` over the CFN ``Mappings`` section."""


class Function:
    """A parsed call of an intrinsic function.

    ``args`` holds the parsed argument (which may contain further functions);
    ``path`` is the path of the function key itself, e.g.
    ``("resources", "web", "properties", "name", "str_split")``. Subclasses
    check the argument's shape in ``__init__`` (via :meth:`check`), extra
    validation in :meth:`validate` and compute the value in :meth:`result`.
    """

    def __init__(self, fn_name: str, args: Any, path: Path, version: TemplateVersion) -> None:
        self.fn_name = fn_name
        self.args = args
        self.path = path
        self.version = version
        self.check()

    def check(self) -> None:
        """Shape checks at parse time; raise :meth:`error` on bad arguments."""

    def validate(self, ctx: FunctionContext) -> None:
        """Checks at validation time; arguments are validated separately."""

    def result(self, ctx: FunctionContext) -> Any:
        """The value of the call; arguments resolved with :func:`resolve` as needed."""
        raise NotImplementedError

    def dependencies(self, ctx: FunctionContext) -> Iterator[str]:
        """Names of the resources this call itself refers to (not its arguments)."""
        return iter(())

    def error(self, message: str, kind: type[KilnError] = StackValidationFailed) -> KilnError:
        """An error located at this call."""
        return kind(message, path=self.path)

    @property
    def where(self) -> str:
        """Heat's "(in X)" location: ``web.Properties.net`` for resources, else ``unknown``."""
        return reference_location(self.path[:-1])

    def __repr__(self) -> str:
        return f"{{{self.fn_name!r}: {self.args!r}}}"

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, Function)
            and other.fn_name == self.fn_name
            and other.args == self.args
        )

    def __hash__(self) -> int:
        return hash((type(self), self.fn_name))


def reference_location(path: Path) -> str:
    """Heat's short location of a reference, as in 'The specified reference ...'.

    ``path`` is where the referring value sits (without the function's own key):
    ``resources.web.properties.net`` renders ``web.Properties.net``; anything
    outside a resource's properties or metadata renders ``unknown``.
    """
    if len(path) >= 3 and path[0] == "resources":
        section = {"properties": "Properties", "metadata": "Metadata"}.get(str(path[2]))
        if section:
            return render_path((path[1], section, *path[3:]))
        return str(path[1])
    return "unknown"


# A table entry builds the parsed form of one call from its *raw* argument.
# Ordinary functions parse the argument first; macros (``if``) do not.
Builder = Callable[["Parser", str, Any, Path], Any]


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    """How one function name is handled in one table."""

    build: Builder

    @staticmethod
    def of(cls: type[Function]) -> FunctionSpec:
        """An ordinary function: parse the argument, then construct the class."""

        def build(parser: Parser, name: str, raw: Any, path: Path) -> Any:
            args = parser.parse(raw, path)
            return cls(name, args, path, parser.version)

        return FunctionSpec(build)


FunctionTable = Mapping[str, FunctionSpec]


_CONTAINERS = (dict, list)


def _plain(data: Any) -> Any:
    return dict(data) if isinstance(data, dict) else list(data)


class Parser:
    """Turns raw template data into parsed data, with one function table.

    ``conditions`` answers condition names for the ``if`` macro. ``condition_table``
    is the table used in condition contexts; macros use :meth:`in_condition_context`.
    """

    def __init__(
        self,
        version: TemplateVersion,
        table: FunctionTable,
        condition_table: FunctionTable,
        conditions: Callable[[Any, Path], bool] | None = None,
    ) -> None:
        self.version = version
        self.table = table
        self.condition_table = condition_table
        self.conditions = conditions

    def parse(self, data: Any, path: Path) -> Any:
        """Parse ``data`` found at ``path``."""
        # Hot path: every node of every resource passes here once. Scalars are
        # returned without building their path.
        if type(data) is dict:
            if len(data) == 1:
                key = next(iter(data))
                spec = self.table.get(key) if type(key) is str else None
                if spec is not None:
                    return spec.build(self, key, data[key], (*path, key))
            return {
                k: (self.parse(v, (*path, k)) if type(v) in _CONTAINERS else v)
                for k, v in data.items()
            }
        if type(data) is list:
            return [
                self.parse(v, (*path, i)) if type(v) in _CONTAINERS else v
                for i, v in enumerate(data)
            ]
        if isinstance(data, dict | list):  # subclasses: rare, take the general route
            return self.parse(_plain(data), path)
        return data

    def in_condition_context(self) -> Parser:
        """A parser for condition contexts (conditions, ``condition`` keys, ``if``)."""
        return Parser(self.version, self.condition_table, self.condition_table, self.conditions)

    def evaluate_condition(self, raw: Any, path: Path) -> bool:
        """Parse ``raw`` as a condition and evaluate it now (for ``if``)."""
        if self.conditions is None:
            raise StackValidationFailed("Conditions are not available here", path=path)
        return self.conditions(raw, path)


def resolve(value: Any, ctx: FunctionContext) -> Any:
    """Resolve parsed data to plain data; absent items vanish from lists and maps."""
    if isinstance(value, Function):
        return value.result(ctx)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            r = resolve(v, ctx)
            if r is not ABSENT:
                out[k] = r
        return out
    if isinstance(value, list):
        return [r for r in (resolve(v, ctx) for v in value) if r is not ABSENT]
    return value


def resolve_top(value: Any, ctx: FunctionContext) -> Any:
    """Resolve a top-level value (an output, a property): absent becomes None."""
    result = resolve(value, ctx)
    return None if result is ABSENT else result


def iter_functions(value: Any) -> Iterator[Function]:
    """Every function call in parsed data, outermost first."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Function):
            yield item
            stack.append(item.args)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def dependencies(value: Any, ctx: FunctionContext) -> set[str]:
    """Names of every resource referenced anywhere in parsed data."""
    names: set[str] = set()
    for fn in iter_functions(value):
        names.update(fn.dependencies(ctx))
    return names


def validate_functions(value: Any, ctx: FunctionContext) -> list[KilnError]:
    """Run every call's validation, collecting the errors instead of stopping."""
    errors: list[KilnError] = []
    for fn in iter_functions(value):
        try:
            fn.validate(ctx)
        except KilnError as err:
            errors.append(err)
    return errors
