"""What every OS::Neutron::* plugin shares (no resource type lives here).

Reference resource-types.md section 2, "Common to all": request bodies (``None``
dropped, the physical name as default ``name``, ``value_specs`` merged in), the
``is_built`` status check, the delete pattern (DELETE, 404 = done, then poll GET until
404), tags, attributes read from the live object, and the crash-safe lookup
(:meth:`NeutronResource.find_existing`, by a ``kiln-resource`` tag or the deterministic
physical name). Hidden alias properties are declared in ``property_aliases`` and
translated here, on raw template properties (:func:`translate_aliases`) and on typed
ones (:meth:`NeutronResource.prop`).
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from kiln.cloud.api.errors import NotFound
from kiln.cloud.api.network import NetworkApi
from kiln.cloud.api.records import Record
from kiln.core.errors import KilnError, StackValidationFailed, raise_all
from kiln.plugin import Resource, ResourceFailure
from kiln.plugin.resource import Cookie
from kiln.schema.constraints import CustomConstraint
from kiln.schema.properties import PropertySchema, PropertyType, SupportStatus

#: the tag handle_create adds, so a create repeated after a crash finds the object
TAG_PREFIX = "kiln-resource="
#: value_specs keys that are never allowed (besides the type's own property names)
FORBIDDEN_VALUE_SPECS = ("shared", "tenant_id")

_STRING, _MAP, _LIST = PropertyType.STRING, PropertyType.MAP, PropertyType.LIST


# -- schema building blocks -------------------------------------------------------------
def custom(name: str) -> tuple[CustomConstraint]:
    return (CustomConstraint(name=name),)


def hidden(new_name: str) -> SupportStatus:
    """The status of an old spelling that a translation copies into ``new_name``."""
    return SupportStatus(
        "HIDDEN",
        message=f"Use property {new_name}.",
        previous_status=SupportStatus("DEPRECATED"),
    )


def name_schema(what: str) -> PropertySchema:
    return PropertySchema(
        _STRING,
        f"A symbolic name for the {what} (default: the physical name).",
        update_allowed=True,
    )


def value_specs_schema(*, update_allowed: bool = True) -> PropertySchema:
    return PropertySchema(
        _MAP,
        "Extra parameters for the create request, merged into its body.",
        default={},
        update_allowed=update_allowed,
    )


def tags_schema(what: str) -> PropertySchema:
    return PropertySchema(
        _LIST,
        f"Tags of the {what}.",
        update_allowed=True,
        schema=PropertySchema(_STRING, "A tag."),
    )


def tenant_id_schema(what: str) -> PropertySchema:
    return PropertySchema(
        _STRING, f"The project that owns the {what} (admin only; replaces on change)."
    )


# -- alias translation -----------------------------------------------------------------
def translate_aliases(
    raw: Mapping[str, Any], aliases: Mapping[str, str], list_aliases: Mapping[str, Any]
) -> dict[str, Any]:
    """Raw properties with each hidden alias moved to its new name (the new name wins).

    ``aliases`` maps old -> new top-level names; ``list_aliases`` maps a list property
    to ``{old key: new key}`` of its items (``fixed_ips[].subnet_id``).
    """
    out = dict(raw)
    for old, new in aliases.items():
        value = out.pop(old, None)
        if value is not None and out.get(new) is None:
            out[new] = value
    for list_name, key_aliases in list_aliases.items():
        items = out.get(list_name)
        if isinstance(items, list):
            out[list_name] = [
                translate_aliases(item, key_aliases, {}) if isinstance(item, Mapping) else item
                for item in items
            ]
    return out


# -- status ----------------------------------------------------------------------------
def is_built(record: Record) -> bool:
    """Heat's ``is_built``: BUILD waits, ACTIVE/DOWN are done, ERROR/DEGRADED fail."""
    status = record.status
    if status == "BUILD":
        return False
    if status in ("ACTIVE", "DOWN"):
        return True
    if status in ("ERROR", "DEGRADED"):
        raise ResourceFailure(f'Went to status {status} due to "Unknown"')
    raise ResourceFailure(f'Resource is not built: Unknown status {status} due to "Unknown"')


def drop_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


# -- the base class ----------------------------------------------------------------------
class NeutronResource(Resource):
    """A plugin whose physical resource is one Neutron object of ``entity``."""

    #: the client's method suffix and JSON name (``network`` -> ``get_network``)
    entity: ClassVar[str] = ""
    #: the REST collection, for tags and list lookups (``networks``)
    collection: ClassVar[str] = ""
    #: the client's list method suffix (``networks`` -> ``list_networks``)
    plural: ClassVar[str] = ""
    #: property -> request body key, for values sent as they are when set
    body_keys: ClassVar[Mapping[str, str]] = {}
    #: whether the object has a ``name`` (the physical name is the default)
    has_name: ClassVar[bool] = True
    #: hidden old property name -> its new name
    property_aliases: ClassVar[Mapping[str, str]] = {}
    #: list property -> {hidden item key: new item key}
    item_aliases: ClassVar[Mapping[str, Mapping[str, str]]] = {}
    #: whether the object can be waited on through its ``status`` (create/update)
    polls_status: ClassVar[bool] = True

    # -- aliases and properties ---------------------------------------------------------
    @classmethod
    def translate(cls, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Raw template properties with hidden aliases moved to their new names."""
        return translate_aliases(raw, cls.property_aliases, cls.item_aliases)

    def prop(self, name: str, properties: Mapping[str, Any] | None = None) -> Any:
        """A typed property, falling back to its hidden alias when unset."""
        props = self.properties if properties is None else properties
        value = props.get(name)
        if value is None:
            for old, new in self.property_aliases.items():
                if new == name and props.get(old) is not None:
                    return props[old]
        return value

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        errors: list[KilnError] = []
        specs = properties.get("value_specs") or {}
        for key in specs:
            if key in FORBIDDEN_VALUE_SPECS or key in cls.properties_schema:
                errors.append(
                    StackValidationFailed(
                        f"{key} not allowed in value_specs", path=("value_specs",)
                    )
                )
        for old, new in cls.property_aliases.items():
            if properties.get(old) is not None and properties.get(new) is not None:
                errors.append(
                    StackValidationFailed(
                        f"Cannot define the following properties at the same time: {old}, {new}"
                    )
                )
        return errors

    def check_valid(self) -> None:
        """Raise the :meth:`validate` problems (the engine may act on unvalidated values)."""
        raise_all(self.validate(self.properties))

    # -- the client ----------------------------------------------------------------------
    @property
    def network(self) -> NetworkApi:
        client: NetworkApi = self.ctx.client("network")
        return client

    def _method(self, verb: str) -> Callable[..., Any]:
        suffix = self.plural if verb == "list" else self.entity
        method: Callable[..., Any] = getattr(self.network, f"{verb}_{suffix}")
        return method

    def live(self) -> Any:
        """The object as the cloud shows it now (NotFound when it is gone)."""
        assert self.ctx.physical_id is not None
        return self._method("get")(self.ctx.physical_id)

    # -- bodies --------------------------------------------------------------------------
    def default_name(self, properties: Mapping[str, Any] | None = None) -> str:
        props = self.properties if properties is None else properties
        return props.get("name") or self.ctx.physical_resource_name()

    def base_body(self) -> dict[str, Any]:
        """``body_keys`` values that are set, the name, and ``value_specs`` merged in."""
        body = {key: self.properties.get(p) for p, key in self.body_keys.items()}
        body = drop_none(body)
        if self.has_name:
            body["name"] = self.default_name()
        body.update(self.properties.get("value_specs") or {})
        return body

    def base_update_body(self, changed: Mapping[str, Any]) -> dict[str, Any]:
        """The PUT body of changed ``body_keys``, the name and the changed value_specs."""
        body = {key: changed[p] for p, key in self.body_keys.items() if p in changed}
        body = drop_none(body)
        if self.has_name and "name" in changed:
            body["name"] = changed["name"] or self.ctx.physical_resource_name()
        if "value_specs" in changed:
            old = self.properties.get("value_specs") or {}
            new = changed["value_specs"] or {}
            body.update({k: v for k, v in new.items() if old.get(k) != v})
        return body

    # -- tags and the crash-safe lookup ------------------------------------------------
    def kiln_tag(self) -> str:
        return f"{TAG_PREFIX}{self.ctx.physical_resource_name()}"

    def apply_tags(self, object_id: str, tags: list[str] | None) -> None:
        """The template's tags plus the lookup tag (``PUT .../tags`` replaces all)."""
        wanted = [*(tags or []), self.kiln_tag()]
        self.network.set_tags(self.collection, object_id, list(dict.fromkeys(wanted)))

    def find_existing(self) -> str | None:
        """By the lookup tag, else by the physical name when the template sets no name."""
        found = self._method("list")(tags=self.kiln_tag())
        if not found and self.has_name and not self.properties.get("name"):
            found = self._method("list")(name=self.ctx.physical_resource_name())
        if len(found) == 1:
            return str(found[0].id)
        return None

    # -- create and update polling ---------------------------------------------------------
    def check_create_complete(self, cookie: Cookie) -> bool:
        return is_built(self.live()) if self.polls_status else True

    def check_update_complete(self, cookie: Cookie) -> bool:
        return is_built(self.live()) if self.polls_status else True

    # -- attributes ------------------------------------------------------------------------
    def get_attribute(self, name: str) -> Any:
        if name == "show":
            return self._show()
        if not self.ctx.physical_id:
            return None
        try:
            return self.live().raw.get(name)
        except NotFound:
            return None

    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        try:
            return self.live().show()
        except NotFound:
            return None

    # -- delete ----------------------------------------------------------------------------
    def handle_delete(self) -> Cookie:
        if not self.ctx.physical_id:
            return None
        try:
            self._method("delete")(self.ctx.physical_id)
        except NotFound:
            return None
        return {"deleting": self.ctx.physical_id}

    def check_delete_complete(self, cookie: Cookie) -> bool:
        if not cookie:
            return True
        try:
            self._method("get")(cookie["deleting"])
        except NotFound:
            return True
        return False
