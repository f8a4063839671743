"""Functions that refer to other parts of the stack: parameters, resources, files.

``get_param``, ``get_resource``, ``get_attr``, ``get_file``, ``resource_facade``
and their CFN spellings (``Ref``, ``Fn::GetAtt``, ``Fn::ResourceFacade``), plus
the two sentinels every table needs: a function *removed* in this version, and
an ordinary function used in a condition context. Reference sections 2.1-2.4,
2.19-2.21. Imports: kiln.core and the framework beside this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kiln.core.errors import (
    InvalidTemplateReference,
    KilnError,
    StackValidationFailed,
)
from kiln.core.paths import Path
from kiln.template.functions.base import Function, FunctionContext, Parser, resolve


def _reference_error(fn: Function, name: object) -> KilnError:
    return fn.error(
        f'The specified reference "{name}" (in {fn.where}) is incorrect.',
        InvalidTemplateReference,
    )


def _literal_or_resolved(value: Any, ctx: FunctionContext) -> Any:
    """A name that may be computed by a parse-time function such as get_param."""
    if isinstance(value, Function):
        try:
            return resolve(value, ctx)
        except KilnError:
            return None
    return value


class GetParam(Function):
    """``get_param: NAME`` or ``get_param: [NAME, key_or_index, ...]``."""

    def check(self) -> None:
        args = self.args
        if isinstance(args, Function):
            return
        if args is None or args == [] or args == "":
            raise self.error(f'Function "{self.fn_name}" must have arguments')
        if isinstance(args, dict):
            raise self.error(f'Argument to "{self.fn_name}" must be string or list')
        if isinstance(args, list) and not isinstance(args[0], str | Function):
            raise self.error(f'Parameter name in "{self.fn_name}" must be string')
        if not isinstance(args, str | list):
            raise self.error(f'Argument to "{self.fn_name}" must be string or list')

    def validate(self, ctx: FunctionContext) -> None:
        name = self.args[0] if isinstance(self.args, list) else self.args
        if isinstance(name, str) and not ctx.has_parameter(name):
            # Reported at the value's path, as Heat reports a failed property.
            raise StackValidationFailed(
                f"The Parameter ({name}) was not provided.", path=self.path[:-1]
            )

    def result(self, ctx: FunctionContext) -> Any:
        args = resolve(self.args, ctx)
        if isinstance(args, list):
            if not args:
                raise self.error(f'Function "{self.fn_name}" must have arguments')
            name, path = args[0], args[1:]
        else:
            name, path = args, []
        if not isinstance(name, str):
            raise self.error(f'Parameter name in "{self.fn_name}" must be string')
        value = ctx.param_value(name)
        for key in path:
            value = _param_step(value, key)
            if value is _MISSING:
                return ""
        return value


_MISSING = object()


def _param_step(value: Any, key: Any) -> Any:
    """One step of a get_param path; any failure is _MISSING (rendered as "")."""
    if isinstance(key, bool) or not isinstance(key, str | int):
        return _MISSING
    if isinstance(value, dict):
        return value.get(key, _MISSING)  # map keys are never converted
    if isinstance(value, list | str):
        index = key if isinstance(key, int) else _as_int(key)
        if index is None:
            return _MISSING
        try:
            return value[index]
        except IndexError:
            return _MISSING
    return _MISSING


def _as_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


class GetResource(Function):
    """``get_resource: NAME``: the reference id of a resource (its name before creation)."""

    def check(self) -> None:
        if not isinstance(self.args, str | Function):
            raise self.error(f'Argument to "{self.fn_name}" must be a string')

    def _name(self, ctx: FunctionContext) -> Any:
        return _literal_or_resolved(self.args, ctx)

    def dependencies(self, ctx: FunctionContext) -> Iterator[str]:
        name = self._name(ctx)
        if isinstance(name, str) and ctx.has_resource(name):
            yield name

    def validate(self, ctx: FunctionContext) -> None:
        name = self._name(ctx)
        if not isinstance(name, str) or not ctx.has_resource(name):
            raise _reference_error(self, name)

    def result(self, ctx: FunctionContext) -> Any:
        name = resolve(self.args, ctx)
        if not isinstance(name, str) or not ctx.has_resource(name):
            raise _reference_error(self, name)
        return ctx.resource_reference(name)


def select_path(value: Any, path: tuple[Any, ...] | list[Any]) -> Any:
    """Walk an attribute path: map keys and list indexes as given; any miss is None."""
    for key in path:
        if isinstance(value, dict):
            try:
                value = value.get(key)
            except TypeError:  # unhashable key
                return None
        elif isinstance(value, list) and isinstance(key, int) and not isinstance(key, bool):
            try:
                value = value[key]
            except IndexError:
                return None
        else:
            return None
        if value is None:
            return None
    return value


class GetAttr(Function):
    """``get_attr: [RESOURCE, ATTRIBUTE, path...]``; ``[RESOURCE]`` from 2015-10-15."""

    min_args = 2

    @property
    def all_attributes_form(self) -> bool:
        return self.fn_name == "get_attr" and self.version.hot_at_least("2015-10-15")

    def check(self) -> None:
        args = self.args
        if isinstance(args, Function):
            return
        if not isinstance(args, list):
            raise self.error(f'Argument to "{self.fn_name}" must be a list')
        if self.all_attributes_form:
            if not args:
                raise self.error(
                    f'Arguments to "{self.fn_name}" can be of the next forms: '
                    "[resource_name] or [resource_name, attribute, (path), ...]"
                )
        elif len(args) < 2:
            raise self.error(
                f'Arguments to "{self.fn_name}" must be of the form '
                "[resource_name, attribute, (path), ...]"
            )

    def _name(self, ctx: FunctionContext) -> Any:
        if not isinstance(self.args, list) or not self.args:
            return None
        return _literal_or_resolved(self.args[0], ctx)

    def dependencies(self, ctx: FunctionContext) -> Iterator[str]:
        name = self._name(ctx)
        if isinstance(name, str) and ctx.has_resource(name):
            yield name

    def validate(self, ctx: FunctionContext) -> None:
        if not isinstance(self.args, list):
            return
        name = self._name(ctx)
        if not isinstance(name, str) or not ctx.has_resource(name):
            raise _reference_error(self, name)
        if len(self.args) > 1:
            attr = _literal_or_resolved(self.args[1], ctx)
            if isinstance(attr, str):
                problem = ctx.check_attribute(name, attr)
                if problem is not None:
                    raise self.error(problem)

    def result(self, ctx: FunctionContext) -> Any:
        args = resolve(self.args, ctx)
        if not isinstance(args, list) or not args:
            raise self.error(f'Argument to "{self.fn_name}" must be a list')
        name = args[0]
        if not isinstance(name, str) or not ctx.has_resource(name):
            raise _reference_error(self, name)
        if len(args) == 1:
            return ctx.resource_attributes(name)
        attr = args[1]
        if not isinstance(attr, str):
            raise self.error(f'Attribute name in "{self.fn_name}" must be a string')
        path = tuple(args[2:])
        if self.version.is_hot and self.version.hot_at_least("2014-10-16"):
            return ctx.resource_attribute(name, attr, path)
        # 2013-05-23 and CFN: fetch the whole attribute, then select.
        return select_path(ctx.resource_attribute(name, attr, ()), path)


class FnGetAtt(GetAttr):
    """``Fn::GetAtt: [RESOURCE, ATTRIBUTE]`` (exactly two items)."""

    def check(self) -> None:
        if isinstance(self.args, Function):
            return
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(
                'Arguments to "Fn::GetAtt" must be of the form [resource_name, attribute]'
            )


class GetFile(Function):
    """``get_file: KEY``: the files-map entry named exactly KEY."""

    def check(self) -> None:
        if not isinstance(self.args, str | Function):
            raise self.error(f'Argument to "{self.fn_name}" must be a string')

    def validate(self, ctx: FunctionContext) -> None:
        if isinstance(self.args, str) and ctx.file_content(self.args) is None:
            raise self._missing(self.args)

    def _missing(self, key: str) -> KilnError:
        return self.error(f'No content found in the "files" section for {self.fn_name} path: {key}')

    def result(self, ctx: FunctionContext) -> Any:
        key = resolve(self.args, ctx)
        if not isinstance(key, str):
            raise self.error(f'Argument to "{self.fn_name}" must be a string')
        content = ctx.file_content(key)
        if content is None:
            raise self._missing(key)
        return content


class Ref(Function):
    """``Ref: NAME``: a resource's reference id, else a parameter's value."""

    def check(self) -> None:
        if not isinstance(self.args, str | Function):
            raise self.error(f'Argument to "{self.fn_name}" must be a string')

    def dependencies(self, ctx: FunctionContext) -> Iterator[str]:
        name = _literal_or_resolved(self.args, ctx)
        if isinstance(name, str) and ctx.has_resource(name):
            yield name

    def validate(self, ctx: FunctionContext) -> None:
        name = _literal_or_resolved(self.args, ctx)
        if not isinstance(name, str) or not (ctx.has_resource(name) or ctx.has_parameter(name)):
            raise self.error(
                f'The specified reference "{name}" (in unknown) is incorrect.',
                InvalidTemplateReference,
            )

    def result(self, ctx: FunctionContext) -> Any:
        name = resolve(self.args, ctx)
        if isinstance(name, str) and ctx.has_resource(name):
            return ctx.resource_reference(name)
        if isinstance(name, str) and ctx.has_parameter(name):
            return ctx.param_value(name)
        raise self.error(
            f'The specified reference "{name}" (in unknown) is incorrect.',
            InvalidTemplateReference,
        )


class ParamRef(Ref):
    """``Ref`` in an AWS condition context: parameters only."""

    def dependencies(self, ctx: FunctionContext) -> Iterator[str]:
        return iter(())

    def validate(self, ctx: FunctionContext) -> None:
        name = _literal_or_resolved(self.args, ctx)
        if not isinstance(name, str) or not ctx.has_parameter(name):
            raise self.error(
                f'The specified reference "{name}" (in unknown) is incorrect.',
                InvalidTemplateReference,
            )

    def result(self, ctx: FunctionContext) -> Any:
        self.validate(ctx)
        return ctx.param_value(resolve(self.args, ctx))


_FACADE_HOT = ("metadata", "deletion_policy", "update_policy")
_FACADE_CFN = {
    "Metadata": "metadata",
    "DeletionPolicy": "deletion_policy",
    "UpdatePolicy": "update_policy",
}


class ResourceFacade(Function):
    """``resource_facade`` / ``Fn::ResourceFacade``: the parent resource's definition parts."""

    def _choices(self) -> tuple[str, ...]:
        return tuple(_FACADE_CFN) if self.fn_name.startswith("Fn::") else _FACADE_HOT

    def check(self) -> None:
        if self.args not in self._choices():
            raise self.error(
                f'Incorrect arguments to "{self.fn_name}" should be one of: '
                + ", ".join(self._choices())
            )

    def result(self, ctx: FunctionContext) -> Any:
        what = _FACADE_CFN.get(self.args, self.args)
        return ctx.facade(what)


class RemovedFunction(Function):
    """A function this version no longer supports: fails validation and resolution."""

    def _removed(self) -> KilnError:
        return self.error(
            f"The template version is invalid: The function {self.fn_name} is not "
            "supported in this version of HOT."
        )

    def validate(self, ctx: FunctionContext) -> None:
        raise self._removed()

    def result(self, ctx: FunctionContext) -> Any:
        raise self._removed()


def build_removed(parser: Parser, name: str, raw: Any, path: Path) -> Any:
    """Table entry for a removed function: parse fine, fail at validation."""
    return RemovedFunction(name, raw, path, parser.version)


def build_invalid(parser: Parser, name: str, raw: Any, path: Path) -> Any:
    """Table entry for an ordinary function inside a condition context."""
    raise StackValidationFailed(f'The function "{name}" is invalid in this context', path=path)
