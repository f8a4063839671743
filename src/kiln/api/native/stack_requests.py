"""Stack request bodies and list queries, turned into engine messages (heat-api.md 2.1).

Templates and environments go to the engine as given, data or JSON/YAML text:
the engine parses text, so a bad document comes back with its file:line:col,
and ``call`` words that as Heat's API does ("Template not in valid format:
..."). What only the API can check is checked here: sizes, value types, tags,
booleans and integers (Heat's messages), ``template_url`` (fetched here), and
the environment files, which name entries of ``files``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import falcon

from kiln.api.faults import HTTPError, bad_request
from kiln.api.native.support import MISSING_BODY, ApiDeps, query_bool, query_int, query_list
from kiln.api.native.template_fetch import fetch_template
from kiln.core.errors import KilnError, NotSupported, RequestLimitExceeded
from kiln.rpc import messages as m

#: Body keys that carry the template and what goes with it; the rest are "arguments"
INPUT_KEYS = frozenset(
    (
        "stack_name",
        "template",
        "template_url",
        "parameters",
        "environment",
        "files",
        "environment_files",
        "files_container",
    )
)

#: List filters (heat-api.md 2.1.3) and the stack column each one reads
LIST_FILTERS = {
    "id": "id",
    "name": "name",
    "stack_name": "name",
    "status": "status",
    "stack_status": "status",
    "action": "action",
    "stack_action": "action",
    "tenant": "project_id",
    "username": "user_id",
    "stack_owner": "user_id",
    "owner_id": "owner_id",
    "parent": "owner_id",
    "stack_status_reason": "status_reason",
    "disable_rollback": "disable_rollback",
    "timeout_mins": "timeout_mins",
    # Kiln's stack user project is the stack's own project.
    "stack_user_project_id": "project_id",
}

#: API sort keys and the columns they sort on; any other key is dropped
SORT_KEYS = {
    "stack_name": "name",
    "stack_status": "status",
    "creation_time": "created_at",
    "updated_time": "updated_at",
}

STATUSES = ("IN_PROGRESS", "COMPLETE", "FAILED")
T = TypeVar("T")
MAX_TAG_LENGTH = 80


# -- values ---------------------------------------------------------------------------------
def parse_bool(name: str, value: Any) -> bool:
    """A body boolean as Heat reads it: true/false, or their text in any case."""
    text = str(value).lower()
    if text not in ("true", "false"):
        raise bad_request(
            f'Unrecognized value "{value}" for "{name}", acceptable values are: true, false.'
        )
    return text == "true"


def parse_timeout(value: Any, name: str = "timeout_mins") -> int | None:
    """A non-negative integer (or its digits); None when not given."""
    if value is None:
        return None
    text = (
        str(value).strip() if isinstance(value, int | str) and not isinstance(value, bool) else ""
    )
    digits = text[1:] if text[:1] in "+-" else text
    if not digits.isdigit():
        raise bad_request(f"Only integer is acceptable by '{name}'.")
    number = int(text)
    if number < 0:
        raise bad_request(
            f"Value '{value}' is invalid for '{name}' which only accepts non-negative integer."
        )
    return number


def parse_tags(value: Any) -> tuple[str, ...] | None:
    """Tags as a comma string (heatclient, gophercloud) or a list (openstacksdk).

    Empty items are dropped (gophercloud may send ``",,a"``). None: not given.
    """
    if value is None:
        return None
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = list(value)
        for item in items:
            if "," in item:
                raise bad_request(f'Invalid tag, "{item}" contains a comma')
    else:
        raise bad_request("Invalid tags: a comma separated string or a list of strings")
    for item in items:
        if len(item) > MAX_TAG_LENGTH:
            raise bad_request(f'Invalid tag, "{item}" is longer than {MAX_TAG_LENGTH} characters')
    return tuple(item for item in items if item)


def _template_limit(deps: ApiDeps, size: int) -> None:
    limit = deps.settings.max_template_size
    if size > limit:
        raise RequestLimitExceeded(
            f"Request limit exceeded: Template size ({size} bytes) exceeds maximum allowed "
            f"size ({limit} bytes)."
        )


def _json_size(data: Any) -> int:
    try:
        return len(json.dumps(data, default=str))
    except (ValueError, RecursionError):
        raise bad_request(MISSING_BODY) from None


# -- the template and what goes with it ----------------------------------------------------
def template_of(deps: ApiDeps, data: Mapping[str, Any], *, patch: bool) -> Any:
    """The request's template: data, text, or None (a PATCH that keeps the stored one)."""
    template = data.get("template")
    if template is None and data.get("template_url") is not None:
        template = fetch_template(
            data["template_url"],
            timeout=deps.settings.template_fetch_timeout,
            max_size=deps.settings.max_template_size,
        )
    if template is None:
        if patch:
            return None
        raise bad_request("No template specified")
    if isinstance(template, str):
        _template_limit(deps, len(template))
        return template
    if isinstance(template, dict):
        _template_limit(deps, _json_size(template))
        return template
    raise bad_request(
        "Template not in valid format: The template is not a JSON object or YAML mapping."
    )


def stack_input(deps: ApiDeps, data: Mapping[str, Any], *, patch: bool = False) -> m.StackInput:
    files = data.get("files")
    if files is None:
        files = {}
    if not isinstance(files, dict):
        raise bad_request(MISSING_BODY)
    parameters = data.get("parameters")
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        raise bad_request(MISSING_BODY)
    if data.get("files_container") is not None:
        raise NotSupported("Reading files from a container (files_container) is not supported.")
    names = data.get("environment_files") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise bad_request("environment_files must be a list of file names")
    missing = [n for n in names if n not in files]
    if missing:
        raise bad_request(f"Environment files not found in files: {', '.join(missing)}")
    environment = None if names else data.get("environment")
    if environment is not None and not isinstance(environment, dict | str):
        raise bad_request(
            "Environment not in valid format: The environment is not a valid YAML mapping "
            "data type."
        )
    return m.StackInput(
        template=template_of(deps, data, patch=patch),
        environment=environment,
        environment_files=tuple((n, files[n]) for n in names),
        files=files,
        parameters=parameters,
    )


# -- messages -------------------------------------------------------------------------------
def create_message(
    deps: ApiDeps, ctx: m.Context, data: Mapping[str, Any]
) -> m.CreateStack | m.AdoptStack:
    """S1: a create, or an adopt when the body has ``adopt_stack_data``."""
    if "stack_name" not in data:
        raise bad_request("No stack name specified")
    if "converge" in data:
        raise bad_request(
            "converge flag only supported in stack update (or update preview) request."
        )
    name = data["stack_name"]
    timeout = parse_timeout(data.get("timeout_mins"))
    tags = parse_tags(data.get("tags")) or ()
    rollback = data.get("disable_rollback")
    disable_rollback = True if rollback is None else parse_bool("disable_rollback", rollback)
    limit = deps.settings.max_stacks_per_tenant
    if "adopt_stack_data" in data:
        if not deps.settings.enable_stack_adopt:
            raise NotSupported("Stack Adopt is not supported.")
        parameters = data.get("parameters") or {}
        if not isinstance(parameters, dict):
            raise bad_request(MISSING_BODY)
        adopt = _adopt_data(deps, data["adopt_stack_data"])
        return m.AdoptStack(ctx, name, adopt, parameters, max_stacks_per_tenant=limit)
    return m.CreateStack(
        ctx,
        name,
        stack_input(deps, data),
        timeout_mins=timeout,
        disable_rollback=disable_rollback,
        tags=tags,
        max_stacks_per_tenant=limit,
    )


def _adopt_data(deps: ApiDeps, raw: Any) -> Any:
    """Abandon data (an object, or its JSON or YAML text; YAML is left to the engine)."""
    parsed = raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return raw
    if not isinstance(parsed, dict):
        raise bad_request("Invalid adopt data: it must be an object holding a template")
    template = parsed.get("template")
    if not isinstance(template, dict):
        raise bad_request("Invalid adopt data: 'template'")
    _template_limit(deps, _json_size(template))
    return parsed


def preview_message(deps: ApiDeps, ctx: m.Context, data: Mapping[str, Any]) -> m.PreviewCreate:
    """S2: as a create (the same checks), nothing stored."""
    if "stack_name" not in data:
        raise bad_request("No stack name specified")
    if "converge" in data:
        raise bad_request(
            "converge flag only supported in stack update (or update preview) request."
        )
    parse_timeout(data.get("timeout_mins"))
    parse_tags(data.get("tags"))
    if data.get("disable_rollback") is not None:
        parse_bool("disable_rollback", data["disable_rollback"])
    return m.PreviewCreate(ctx, data["stack_name"], stack_input(deps, data))


def update_message(
    deps: ApiDeps,
    ctx: m.Context,
    stack_name: str,
    stack_id: str,
    data: Mapping[str, Any],
    *,
    patch: bool,
) -> m.UpdateStack:
    """S9/S10: PUT (``existing`` makes it a PATCH) or PATCH."""
    existing = patch or (
        data.get("existing") is not None and parse_bool("existing", data["existing"])
    )
    rollback = data.get("disable_rollback")
    converge = data.get("converge")
    return m.UpdateStack(
        ctx,
        stack_id,
        stack_input(deps, data, patch=existing),
        timeout_mins=parse_timeout(data.get("timeout_mins")),
        disable_rollback=None if rollback is None else parse_bool("disable_rollback", rollback),
        tags=parse_tags(data.get("tags")),
        existing=existing,
        clear_parameters=_clear_parameters(data),
        converge=False if converge is None else parse_bool("converge", converge),
        stack_name=stack_name,
    )


def preview_update_message(
    deps: ApiDeps,
    ctx: m.Context,
    stack_name: str,
    stack_id: str,
    data: Mapping[str, Any],
    *,
    patch: bool,
    show_nested: bool,
) -> m.PreviewUpdate:
    """S11/S12: the body of an update, nothing changed."""
    update = update_message(deps, ctx, stack_name, stack_id, data, patch=patch)
    return m.PreviewUpdate(
        ctx,
        stack_id,
        update.input,
        existing=update.existing,
        clear_parameters=update.clear_parameters,
        show_nested=show_nested,
        stack_name=stack_name,
    )


def _clear_parameters(data: Mapping[str, Any]) -> tuple[str, ...]:
    value = data.get("clear_parameters")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad_request("clear_parameters must be a list of parameter names")
    return tuple(value)


def is_no_change(data: Mapping[str, Any]) -> bool:
    """A PATCH that changes nothing (policy ``stacks:update_no_change``): no template,
    no environment or parameters, no files, and no other argument but ``existing``."""
    environment = None if data.get("environment_files") else data.get("environment")
    return (
        data.get("template") is None
        and data.get("template_url") is None
        and not environment
        and not data.get("parameters")
        and not data.get("files")
        and not data.get("environment_files")
        and data.get("files_container") is None
        and all(k == "existing" for k in data if k not in INPUT_KEYS)
    )


def list_message(req: falcon.Request, ctx: m.Context, deps: ApiDeps) -> m.ListStacks:
    """S3's query string (heat-api.md 2.1.3)."""
    filters: dict[str, list[str]] = {}
    for key, column in LIST_FILTERS.items():
        values = query_list(req, key)
        if not values:
            continue
        if column in filters:  # two aliases of one column: both must match
            values = [v for v in values if v in filters[column]]
        filters[column] = values
    _split_status(filters)
    sort_keys = [SORT_KEYS[k] for k in query_list(req, "sort_keys") if k in SORT_KEYS]
    return m.ListStacks(
        ctx,
        limit=query_int(req, "limit"),
        marker=req.get_param("marker") or None,
        show_deleted=query_bool(req, "show_deleted"),
        show_nested=query_bool(req, "show_nested"),
        filters=filters,
        sort_keys=tuple(sort_keys),
        sort_dir=_sort_dir(req.get_param("sort_dir")),
        tags=_query_tags(req, "tags"),
        tags_any=_query_tags(req, "tags_any"),
        not_tags=_query_tags(req, "not_tags"),
        not_tags_any=_query_tags(req, "not_tags_any"),
        hidden_tags=tuple(deps.settings.hidden_stack_tags),
        show_hidden=query_bool(req, "show_hidden"),
        global_tenant=query_bool(req, "global_tenant"),
        with_count=bool(req.get_param("with_count")) and query_bool(req, "with_count"),
    )


def _split_status(filters: dict[str, list[str]]) -> None:
    """``CREATE_FAILED`` filters action CREATE and status FAILED; ``FAILED`` the status."""
    if "status" not in filters:
        return
    actions: list[str] = []
    statuses: list[str] = []
    for value in filters["status"]:
        for status in STATUSES:
            if value.endswith("_" + status) and len(value) > len(status) + 1:
                actions.append(value[: -len(status) - 1])
                statuses.append(status)
                break
        else:
            statuses.append(value)
    filters["status"] = statuses
    if actions:
        filters["action"] = [*filters.get("action", []), *actions]


def _sort_dir(value: str | None) -> str | None:
    if value is None:
        return None
    direction, _, nulls = value.lower().partition("-")
    if direction not in ("asc", "desc") or nulls not in ("", "nullsfirst", "nullslast"):
        raise HTTPError(
            400,
            "HTTPBadRequest",
            f"Unknown sort direction '{value}', must be one of: asc, desc",
        )
    return direction


def _query_tags(req: falcon.Request, name: str) -> tuple[str, ...]:
    return parse_tags(req.get_param(name)) or ()


def for_visible_stack(
    deps: ApiDeps, ctx: m.Context, stack_name: str, stack_id: str, build: Callable[[], T]
) -> T:
    """``build()`` (a message from a body); if the body is bad, a stack the caller
    cannot see is still a 404: nothing is told about it, not even that."""
    try:
        return build()
    except KilnError as exc:
        if exc.http_status != 400:
            raise
        gone = HTTPError(404, "EntityNotFound", f"The Stack ({stack_name}) could not be found.")
        try:
            ref = deps.call(m.LookupStack(ctx, stack_id))
        except KilnError:
            raise gone from None
        if (ref.id, ref.name) != (stack_id, stack_name):
            raise gone from None
        raise


# -- calling the engine ---------------------------------------------------------------------
PARSE_ERRORS = {
    "TemplateParseError": "Template not in valid format",
    "EnvironmentParseError": "Environment not in valid format",
}


def call(deps: ApiDeps, message: Any) -> Any:
    """Send ``message``; a document the engine could not parse is Heat's 400 from the API."""
    try:
        return deps.call(message)
    except KilnError as exc:
        prefix = PARSE_ERRORS.get(exc.kind)
        if prefix is None:
            raise
        if isinstance(message, m.AdoptStack):
            prefix = "Invalid adopt data"
        where = f"{exc.location}: " if exc.location is not None else ""
        error = bad_request(f"{prefix}: {where}{exc.full_message}")
        error.location = exc.location
        raise error from None
