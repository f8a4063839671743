"""``kiln stack|event|resource|output|resource-type ...``: the API's client commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from kiln.cli.client.connection import connect
from kiln.cli.client.output import FORMATS, show_record, show_rows, show_value
from kiln.cli.client.progress import report_end, wait_for
from kiln.cli.local_files import read_local_input
from kiln.core.errors import KilnError

STACK_COLUMNS = ("id", "stack_name", "stack_status", "creation_time", "updated_time")
RESOURCE_COLUMNS = (
    "resource_name",
    "physical_resource_id",
    "resource_type",
    "resource_status",
    "updated_time",
)
EVENT_COLUMNS = ("event_time", "resource_name", "resource_status", "resource_status_reason")


def _cloud_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--os-cloud",
        "cloud",
        envvar="OS_CLOUD",
        default="kiln",
        show_default=True,
        help="Cloud of clouds.yaml to use.",
    )(fn)


def _format_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("-f", "--format", "fmt", type=FORMATS, default="table")(fn)


def _parameters(values: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in values:
        for part in item.split(";"):
            if "=" not in part:
                raise click.BadParameter(
                    f"expected KEY=VALUE, got {part!r}", param_hint="--parameter"
                )
            key, value = part.split("=", 1)
            found[key] = value
    return found


def stack_body(
    template: str | None, environments: tuple[str, ...], parameters: tuple[str, ...]
) -> dict[str, Any]:
    """Template, environments and files read from disk the way heatclient sends them."""
    body: dict[str, Any] = {"parameters": _parameters(parameters)}
    if template is None:
        return body
    try:
        local = read_local_input(template, list(environments))
    except KilnError as err:
        raise click.ClickException(str(err)) from None
    files = dict(local.files)
    files.update((url, json.dumps(data)) for url, data in local.templates.items())
    names = []
    for url, doc in local.environments:
        files[url] = json.dumps(doc.data)
        names.append(url)
    body.update(template=local.template.data, files=files, environment_files=names)
    return body


SUMMARY = (
    "id",
    "stack_name",
    "stack_status",
    "stack_status_reason",
    "creation_time",
    "updated_time",
)


def _summary(stack: dict[str, Any], fmt: str) -> dict[str, Any]:
    """After create or update, people want the outcome; scripts get everything."""
    return {k: stack.get(k) for k in SUMMARY} if fmt == "table" else stack


def _wait_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--wait", is_flag=True, help="Follow the action to its end.")(fn)


@click.group("stack")
def stack() -> None:
    """Create, update, delete and inspect stacks."""


@stack.command("create")
@click.argument("name")
@click.option("-t", "--template", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("-e", "--environment", "environments", multiple=True, type=click.Path(exists=True))
@click.option("--parameter", "parameters", multiple=True, metavar="KEY=VALUE")
@click.option("--timeout", type=int, help="Minutes.")
@click.option("--enable-rollback", is_flag=True)
@click.option("--tags", default=None, help="Comma-separated tags.")
@click.option("--dry-run", is_flag=True, help="Preview the stack; create nothing.")
@_wait_option
@_cloud_option
@_format_option
def create(
    name: str,
    template: str,
    environments: tuple[str, ...],
    parameters: tuple[str, ...],
    timeout: int | None,
    enable_rollback: bool,
    tags: str | None,
    dry_run: bool,
    wait: bool,
    cloud: str,
    fmt: str,
) -> None:
    api = connect(cloud)
    body = stack_body(template, environments, parameters)
    body.update(stack_name=name, disable_rollback=not enable_rollback)
    if timeout is not None:
        body["timeout_mins"] = timeout
    if tags:
        body["tags"] = tags
    if dry_run:
        found = api.post("/stacks/preview", body)["stack"]
        show_rows(
            found.get("resources", []), ("resource_name", "resource_type", "required_by"), fmt
        )
        return
    created = api.post("/stacks", body)["stack"]
    path = f"/stacks/{name}/{created['id']}"
    if wait:
        report_end(api, path, wait_for(api, path, "CREATE"), "CREATE")
    show_record(_summary(api.get(path)["stack"], fmt), fmt)


@stack.command("preview")
@click.argument("name")
@click.option("-t", "--template", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("-e", "--environment", "environments", multiple=True, type=click.Path(exists=True))
@click.option("--parameter", "parameters", multiple=True, metavar="KEY=VALUE")
@_cloud_option
@_format_option
def preview(
    name: str,
    template: str,
    environments: tuple[str, ...],
    parameters: tuple[str, ...],
    cloud: str,
    fmt: str,
) -> None:
    """What a create would build; builds nothing."""
    api = connect(cloud)
    body = stack_body(template, environments, parameters)
    body["stack_name"] = name
    found = api.post("/stacks/preview", body)["stack"]
    show_rows(found.get("resources", []), ("resource_name", "resource_type", "required_by"), fmt)


@stack.command("update")
@click.argument("name")
@click.option("-t", "--template", type=click.Path(exists=True, dir_okay=False))
@click.option("-e", "--environment", "environments", multiple=True, type=click.Path(exists=True))
@click.option("--parameter", "parameters", multiple=True, metavar="KEY=VALUE")
@click.option("--existing", is_flag=True, help="Keep what the stack has unless given (PATCH).")
@click.option("--clear-parameter", "clear", multiple=True)
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@_wait_option
@_cloud_option
@_format_option
def update(
    name: str,
    template: str | None,
    environments: tuple[str, ...],
    parameters: tuple[str, ...],
    existing: bool,
    clear: tuple[str, ...],
    dry_run: bool,
    wait: bool,
    cloud: str,
    fmt: str,
) -> None:
    if template is None and not existing:
        raise click.UsageError("give a template (-t) or --existing")
    api = connect(cloud)
    path = api.stack_path(name)
    body = stack_body(template, environments, parameters)
    if clear:
        body["clear_parameters"] = list(clear)
    send = api.patch if existing else api.put
    if dry_run:
        changes = send(f"{path}/preview", body)["resource_changes"]
        rows = [
            {
                "change": kind,
                "resource_name": r.get("resource_name"),
                "resource_type": r.get("resource_type"),
            }
            for kind, found in changes.items()
            for r in found
        ]
        show_rows(rows, ("change", "resource_name", "resource_type"), fmt)
        return
    send(path, body)
    if wait:
        report_end(api, path, wait_for(api, path, "UPDATE"), "UPDATE")
    show_record(_summary(api.get(path)["stack"], fmt), fmt)


@stack.command("delete")
@click.argument("names", nargs=-1, required=True)
@_wait_option
@_cloud_option
def delete(names: tuple[str, ...], wait: bool, cloud: str) -> None:
    api = connect(cloud)
    for name in names:
        path = api.stack_path(name)
        api.delete(path)
        if wait:
            report_end(api, path, wait_for(api, path, "DELETE", deleting=True), "DELETE")


@stack.command("list")
@click.option("--all-projects", is_flag=True)
@click.option("--nested", is_flag=True)
@_cloud_option
@_format_option
def list_stacks(all_projects: bool, nested: bool, cloud: str, fmt: str) -> None:
    api = connect(cloud)
    params: dict[str, Any] = {}
    if all_projects:
        params["global_tenant"] = "true"
    if nested:
        params["show_nested"] = "true"
    show_rows(api.get("/stacks", **params)["stacks"], STACK_COLUMNS, fmt)


@stack.command("show")
@click.argument("name")
@_cloud_option
@_format_option
def show(name: str, cloud: str, fmt: str) -> None:
    api = connect(cloud)
    show_record(api.get(api.stack_path(name))["stack"], fmt)


@click.group("event")
def event() -> None:
    """A stack's events."""


@event.command("list")
@click.argument("name")
@click.option("--nested-depth", type=int, default=None)
@_cloud_option
@_format_option
def event_list(name: str, nested_depth: int | None, cloud: str, fmt: str) -> None:
    api = connect(cloud)
    path = api.stack_path(name)
    found = api.get(f"{path}/events", nested_depth=nested_depth, sort_dir="asc")["events"]
    show_rows(found, EVENT_COLUMNS, fmt)


@click.group("resource")
def resource() -> None:
    """A stack's resources."""


@resource.command("list")
@click.argument("name")
@click.option("-n", "--nested-depth", type=int, default=None)
@_cloud_option
@_format_option
def resource_list(name: str, nested_depth: int | None, cloud: str, fmt: str) -> None:
    api = connect(cloud)
    path = api.stack_path(name)
    found = api.get(f"{path}/resources", nested_depth=nested_depth)["resources"]
    columns = RESOURCE_COLUMNS + (("stack_name",) if nested_depth else ())
    show_rows(found, columns, fmt)


@click.group("output")
def output() -> None:
    """A stack's outputs."""


@output.command("show")
@click.argument("name")
@click.argument("key", required=False)
@click.option("--all", "show_all", is_flag=True)
@_cloud_option
@_format_option
def output_show(name: str, key: str | None, show_all: bool, cloud: str, fmt: str) -> None:
    if key is None and not show_all:
        raise click.UsageError("give an output KEY or --all")
    api = connect(cloud)
    path = api.stack_path(name)
    if key is not None:
        show_record(api.get(f"{path}/outputs/{key}")["output"], fmt)
        return
    found = api.get(path)["stack"].get("outputs") or []
    show_value(
        {o["output_key"]: o.get("output_value") for o in found}, "yaml" if fmt == "table" else fmt
    )


@click.group("resource-type")
def resource_type() -> None:
    """The resource types the service knows."""


@resource_type.command("list")
@click.option("--name", default=None, help="A regular expression types must match.")
@_cloud_option
@_format_option
def resource_type_list(name: str | None, cloud: str, fmt: str) -> None:
    api = connect(cloud)
    found = api.get("/resource_types", name=name)["resource_types"]
    show_rows(
        [{"resource_type": t} if isinstance(t, str) else t for t in found], ("resource_type",), fmt
    )


@resource_type.command("show")
@click.argument("type_name")
@_cloud_option
@_format_option
def resource_type_show(type_name: str, cloud: str, fmt: str) -> None:
    from urllib.parse import quote

    api = connect(cloud)
    show_value(
        api.get(f"/resource_types/{quote(type_name, safe='')}"), "yaml" if fmt == "table" else fmt
    )


def remote_validate(
    cloud: str, template: str, environments: tuple[str, ...], parameters: tuple[str, ...], fmt: str
) -> None:
    """``kiln template validate --os-cloud C``: Heat's validate, answered by the server."""
    api = connect(cloud)
    body = stack_body(template, environments, parameters)
    show_value(api.post("/validate", body), "json" if fmt == "json" else "yaml")


COMMANDS = (stack, event, resource, output, resource_type)
