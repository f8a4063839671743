"""``kiln template validate|resolve|graph``: offline template tools.

Exit status: 0 when the template is valid, 1 when it has errors (all of them
are printed, each with its path and file:line:col), 2 for usage errors.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click
import yaml

from kiln.cli.local_files import load_local_stack
from kiln.core.errors import KilnError, ValidationFailed
from kiln.graph.render import render_dot, render_text
from kiln.template.report import resolved_outputs, resolved_resources, validate_document
from kiln.template.stack import StackDefinition, StackIdentity


def _parse_parameters(values: tuple[str, ...]) -> dict[str, str]:
    params: dict[str, str] = {}
    for item in values:
        for pair in item.split(";") if ";" in item else [item]:
            if "=" not in pair:
                raise click.BadParameter(f"{pair!r} is not key=value", param_hint="-P")
            key, value = pair.split("=", 1)
            params[key] = value
    return params


def _common(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json"]),
        default="text",
        help="Output format.",
    )(fn)
    fn = click.option(
        "-P",
        "--parameter",
        "parameters",
        multiple=True,
        metavar="KEY=VALUE",
        help="A parameter value (repeatable; KEY1=V1;KEY2=V2 also accepted).",
    )(fn)
    fn = click.option(
        "-e",
        "--environment",
        "environments",
        multiple=True,
        type=click.Path(exists=True, dir_okay=False),
        help="An environment file (repeatable).",
    )(fn)
    fn = click.argument("template_path", type=click.Path(exists=True, dir_okay=False))(fn)
    return fn


def _load(
    template_path: str, environments: tuple[str, ...], parameters: tuple[str, ...]
) -> StackDefinition:
    return load_local_stack(
        template_path,
        list(environments),
        _parse_parameters(parameters),
        identity=StackIdentity(name="stack"),
    )


def _errors_of(exc: KilnError) -> list[KilnError]:
    return exc.errors if isinstance(exc, ValidationFailed) else [exc]


def _report_errors(errors: list[KilnError], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps({"errors": [e.to_dict() for e in errors]}, indent=2))
        return
    for err in errors:
        where = f"{err.location}: " if err.location else ""
        click.echo(f"{where}{err.full_message} [{err.kind}]", err=False)
    click.echo(f"{len(errors)} error{'s' if len(errors) != 1 else ''} found.", err=True)


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (scripts, configuration files) as literal blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # The emitter falls back to a quoted style when a literal block cannot hold it.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _emit(data: Any, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
        click.echo(text.rstrip())


def _run(
    template_path: str,
    environments: tuple[str, ...],
    parameters: tuple[str, ...],
    fmt: str,
    produce: Callable[[StackDefinition], Any],
) -> None:
    try:
        stack = _load(template_path, environments, parameters)
    except KilnError as exc:
        _report_errors(_errors_of(exc), fmt)
        sys.exit(1)
    if stack.errors:
        _report_errors(stack.errors, fmt)
        sys.exit(1)
    produce(stack)


@click.group()
def template() -> None:
    """Validate, resolve and draw templates offline."""


@template.command()
@_common
@click.option(
    "--os-cloud", "cloud", default=None, help="Validate on this cloud's API instead of offline."
)
def validate(
    template_path: str,
    environments: tuple[str, ...],
    parameters: tuple[str, ...],
    fmt: str,
    cloud: str | None,
) -> None:
    """Validate TEMPLATE; print Heat's validate document or every error."""
    if cloud is not None:
        from kiln.cli.client.stack_cmds import remote_validate

        remote_validate(cloud, template_path, environments, parameters, fmt)
        return
    _run(
        template_path,
        environments,
        parameters,
        fmt,
        lambda stack: _emit(validate_document(stack), fmt),
    )


@template.command()
@_common
def resolve(
    template_path: str, environments: tuple[str, ...], parameters: tuple[str, ...], fmt: str
) -> None:
    """Print the resolved resource definitions in dependency order."""
    _run(
        template_path,
        environments,
        parameters,
        fmt,
        lambda stack: _emit(
            {"resources": resolved_resources(stack), "outputs": resolved_outputs(stack)}, fmt
        ),
    )


@template.command()
@click.argument("template_path", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "-e",
    "--environment",
    "environments",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="An environment file.",
)
@click.option("-P", "--parameter", "parameters", multiple=True, metavar="KEY=VALUE")
@click.option("--format", "fmt", type=click.Choice(["text", "dot"]), default="text")
def graph(
    template_path: str, environments: tuple[str, ...], parameters: tuple[str, ...], fmt: str
) -> None:
    """Print the dependency graph (text, or Graphviz DOT)."""

    def produce(stack: StackDefinition) -> None:
        click.echo((render_dot(stack.graph) if fmt == "dot" else render_text(stack.graph)).rstrip())

    _run(template_path, environments, parameters, "text", produce)
