"""Resource registry: resolution (6.5, 7.1), per-resource section, child registries (7.3)."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.template.registry import (
    VALID_HOOKS,
    Resolution,
    ResourceRegistry,
    is_template_location,
)

BUILTINS = frozenset(
    {
        "OS::Heat::None",
        "OS::Heat::Value",
        "OS::Nova::Server",
        "OS::Nova::KeyPair",
        "OS::Neutron::Net",
        "OS::Neutron::Port",
    }
)


def builtin(name: str) -> bool:
    return name in BUILTINS


def resolve(
    entries: dict[str, Any] | None,
    type_name: str,
    resource_name: str | None = "r",
    *,
    global_entries: dict[str, Any] | None = None,
) -> Resolution:
    parent = ResourceRegistry(global_entries, system=True) if global_entries is not None else None
    return ResourceRegistry(entries, parent=parent).resolve(type_name, resource_name, builtin)


# -- 6.5 entry kinds -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entries", "type_name", "kind", "target"),
    [
        # no registry: builtins resolve to themselves, anything else is missing
        ({}, "OS::Heat::Value", "builtin", "OS::Heat::Value"),
        ({}, "My::Thing", "missing", "My::Thing"),
        # alias, and alias of an alias (recursively)
        ({"My::Alias": "OS::Heat::Value"}, "My::Alias", "builtin", "OS::Heat::Value"),
        ({"A": "B", "B": "OS::Heat::Value"}, "A", "builtin", "OS::Heat::Value"),
        # alias to an unknown type
        ({"My::Alias": "No::Such"}, "My::Alias", "missing", "My::Alias"),
        # template resources: value ends with .yaml or .template
        ({"My::Box": "box.yaml"}, "My::Box", "template", "box.yaml"),
        ({"My::Box": "https://h/box.template"}, "My::Box", "template", "https://h/box.template"),
        # E06: .yml is not a template suffix -> an alias to an unknown type
        ({"My::Box": "box.yml"}, "My::Box", "missing", "My::Box"),
        ({"My::Box": "box.YAML"}, "My::Box", "missing", "My::Box"),
        # a type that is itself a file name is a template resource
        ({}, "box.yaml", "template", "box.yaml"),
        ({}, "http://h/x.template", "template", "http://h/x.template"),
        # ... unless an exact entry with that key says where the template is
        ({"box.yaml": "https://h/real.yaml"}, "box.yaml", "template", "https://h/real.yaml"),
        ({"box.yaml": "https://h/real"}, "box.yaml", "template", "https://h/real"),
        # alias to a template location
        ({"A": "B", "B": "b.yaml"}, "A", "template", "b.yaml"),
        # OS::Heat::None is just a builtin name (7, A-14)
        ({"OS::Nova::KeyPair": "OS::Heat::None"}, "OS::Nova::KeyPair", "builtin", "OS::Heat::None"),
        # a registry entry overrides a builtin of the same name
        ({"OS::Nova::Server": "srv.yaml"}, "OS::Nova::Server", "template", "srv.yaml"),
    ],
)
def test_entry_kinds(entries: dict[str, Any], type_name: str, kind: str, target: str) -> None:
    found = resolve(entries, type_name)
    assert (found.kind, found.target, found.type_name) == (kind, target, type_name)
    assert found.found == (kind != "missing")


def test_template_suffixes_are_exact() -> None:
    assert is_template_location("a.yaml")
    assert is_template_location("a.template")
    assert not is_template_location("a.yml")
    assert not is_template_location("a.json")
    assert not is_template_location("yaml")


# -- wildcards ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entries", "type_name", "kind", "target"),
    [
        # wildcard to a single target
        ({"Legacy::*": "OS::Heat::None"}, "Legacy::Thing", "builtin", "OS::Heat::None"),
        ({"Legacy::*": "OS::Heat::None"}, "Legacy::", "builtin", "OS::Heat::None"),
        ({"Legacy::*": "OS::Heat::None"}, "Other::Thing", "missing", "Other::Thing"),
        # suffix substitution
        (
            {"OS::Networking::*": "OS::Neutron::*"},
            "OS::Networking::Net",
            "builtin",
            "OS::Neutron::Net",
        ),
        (
            {"OS::Networking::*": "OS::Neutron::*"},
            "OS::Networking::Port",
            "builtin",
            "OS::Neutron::Port",
        ),
        (
            {"OS::Networking::*": "OS::Neutron::*"},
            "OS::Networking::Nope",
            "missing",
            "OS::Networking::Nope",
        ),
        # suffix substitution into template locations
        # (a type that itself ends in .yaml is a literal template: wildcards do not apply)
        ({"Tmpl::*": "https://h/*"}, "Tmpl::x.yaml", "template", "Tmpl::x.yaml"),
        ({"Tmpl::*": "stub.yaml"}, "Tmpl::Anything", "template", "stub.yaml"),
        # a wildcard never matches its own target
        ({"OS::Heat::*": "OS::Heat::None"}, "OS::Heat::None", "builtin", "OS::Heat::None"),
        (
            {"My::*": "My::Base", "My::Base": "OS::Heat::Value"},
            "My::X",
            "builtin",
            "OS::Heat::Value",
        ),
        ({"My::*": "My::Base"}, "My::Base", "missing", "My::Base"),
        # the longest matching wildcard wins
        (
            {"X::*": "OS::Heat::Value", "X::Nova::*": "OS::Heat::None"},
            "X::Nova::Server",
            "builtin",
            "OS::Heat::None",
        ),
    ],
)
def test_wildcards(entries: dict[str, Any], type_name: str, kind: str, target: str) -> None:
    found = resolve(entries, type_name)
    assert (found.kind, found.target) == (kind, target)


def test_wildcard_stubs_builtins_of_its_namespace() -> None:
    entries = {"OS::Nova::*": "OS::Heat::None"}
    assert resolve(entries, "OS::Nova::Server").target == "OS::Heat::None"
    assert resolve(entries, "OS::Neutron::Net").target == "OS::Neutron::Net"


def test_exact_entry_beats_wildcard_whatever_the_key_order() -> None:
    # Heat sorts by key string, so "OS::Nova::*" would win (quirk 24); the Rec is exact first.
    for entries in (
        {"OS::Nova::*": "OS::Heat::None", "OS::Nova::Server": "OS::Heat::Value"},
        {"OS::Nova::Server": "OS::Heat::Value", "OS::Nova::*": "OS::Heat::None"},
    ):
        assert resolve(entries, "OS::Nova::Server").target == "OS::Heat::Value"
        assert resolve(entries, "OS::Nova::KeyPair").target == "OS::Heat::None"


def test_e01_alias_and_wildcard() -> None:
    registry = ResourceRegistry({"My::Alias": "OS::Heat::Value", "Legacy::*": "OS::Heat::None"})
    a = registry.resolve("My::Alias", "a", builtin)
    b = registry.resolve("Legacy::Thing", "b", builtin)
    assert (a.kind, a.target) == ("builtin", "OS::Heat::Value")
    assert (b.kind, b.target) == ("builtin", "OS::Heat::None")


def test_e06_yml_value_is_an_alias_not_a_template() -> None:
    found = ResourceRegistry({"My::Box": "box.yml"}).resolve("My::Box", "n", builtin)
    assert found.kind == "missing"
    assert found.type_name == "My::Box"


# -- loops and backtracking --------------------------------------------------------------


@pytest.mark.parametrize(
    "entries",
    [
        {"A": "A"},
        {"A": "B", "B": "A"},
        {"A": "B", "B": "C", "C": "A"},
        {"A::*": "B::*", "B::*": "A::*"},
        # suffix substitution that grows the name without bound
        {"A::*": "A::A::*"},
    ],
)
def test_alias_loops_are_type_not_found(entries: dict[str, Any]) -> None:
    found = resolve(entries, "A::x" if any("*" in k for k in entries) else "A")
    assert found.kind == "missing"


def test_first_candidate_that_resolves_wins() -> None:
    # the exact alias leads nowhere, so the wildcard is tried next
    entries = {"My::T": "No::Such", "My::*": "OS::Heat::Value"}
    assert resolve(entries, "My::T").target == "OS::Heat::Value"
    # a failing user alias of a builtin name falls back to the builtin itself
    assert resolve({"OS::Nova::Server": "Typo"}, "OS::Nova::Server").target == "OS::Nova::Server"


def test_loop_in_one_branch_does_not_hide_another() -> None:
    entries = {"A": "B", "B": "A", "A*": "OS::Heat::Value"}
    assert resolve(entries, "A").target == "OS::Heat::Value"


def test_resolution_reports_the_template_entry() -> None:
    found = resolve({"A": "B", "B": "b.yaml"}, "A")
    assert found.entry == ("B",)
    assert found.system is False
    assert resolve({}, "x.yaml").entry is None
    per_resource = resolve({"resources": {"r": {"A": "r.yaml"}}}, "A", "r")
    assert per_resource.entry == ("resources", "r", "A")


# -- per-resource type overrides ------------------------------------------------------------


def test_e07_per_resource_override_to_a_template() -> None:
    registry = ResourceRegistry(
        {"My::Alias": "OS::Heat::None", "resources": {"c": {"My::Alias": "alt.yaml"}}}
    )
    a = registry.resolve("My::Alias", "a", builtin)
    c = registry.resolve("My::Alias", "c", builtin)
    assert (a.kind, a.target) == ("builtin", "OS::Heat::None")
    assert (c.kind, c.target) == ("template", "alt.yaml")


def test_per_resource_override_applies_to_the_exact_name_only() -> None:
    registry = ResourceRegistry(
        {"resources": {"db*": {"My::T": "OS::Heat::None"}, "db": {"My::T": "OS::Heat::Value"}}}
    )
    assert registry.resolve("My::T", "db", builtin).target == "OS::Heat::Value"
    assert registry.resolve("My::T", "db2", builtin).kind == "missing"
    assert registry.resolve("My::T", None, builtin).kind == "missing"


def test_per_resource_alias_override_has_no_side_effects() -> None:
    # Heat quirk 24: resolving an alias override for one resource leaked to others.
    registry = ResourceRegistry(
        {"My::T": "OS::Heat::Value", "resources": {"special": {"My::T": "OS::Heat::None"}}}
    )
    before = registry.to_dict()
    assert registry.resolve("My::T", "special", builtin).target == "OS::Heat::None"
    assert registry.resolve("My::T", "other", builtin).target == "OS::Heat::Value"
    assert registry.resolve("My::T", "special", builtin).target == "OS::Heat::None"
    assert registry.to_dict() == before


def test_per_resource_override_applies_along_an_alias_chain() -> None:
    registry = ResourceRegistry(
        {"My::T": "My::U", "My::U": "OS::Heat::Value", "resources": {"r": {"My::U": "u.yaml"}}}
    )
    assert registry.resolve("My::T", "r", builtin).target == "u.yaml"
    assert registry.resolve("My::T", "s", builtin).target == "OS::Heat::Value"


def test_per_resource_wildcard_type_key() -> None:
    registry = ResourceRegistry({"resources": {"r": {"OS::Nova::*": "OS::Heat::None"}}})
    assert registry.resolve("OS::Nova::Server", "r", builtin).target == "OS::Heat::None"
    assert registry.resolve("OS::Nova::Server", "s", builtin).target == "OS::Nova::Server"


# -- layers ----------------------------------------------------------------------------------


def test_user_layer_before_global_layer() -> None:
    found = resolve(
        {"My::T": "OS::Heat::Value"},
        "My::T",
        global_entries={"My::T": "OS::Heat::None", "Glob::T": "OS::Heat::None"},
    )
    assert found.target == "OS::Heat::Value"
    also = resolve({}, "Glob::T", global_entries={"Glob::T": "OS::Heat::None"})
    assert also.target == "OS::Heat::None"


def test_user_wildcard_beats_global_exact() -> None:
    found = resolve(
        {"My::*": "OS::Heat::Value"}, "My::T", global_entries={"My::T": "OS::Heat::None"}
    )
    assert found.target == "OS::Heat::Value"


def test_global_template_entries_are_system() -> None:
    found = resolve({}, "Srv", global_entries={"Srv": "file:///etc/heat/templates/srv.yaml"})
    assert (found.kind, found.target, found.system) == (
        "template",
        "file:///etc/heat/templates/srv.yaml",
        True,
    )
    user = resolve({"Srv": "file:///x/srv.yaml"}, "Srv")
    assert (user.kind, user.system) == ("template", False)


def test_user_null_does_not_delete_global_entry() -> None:
    found = resolve({"My::T": None}, "My::T", global_entries={"My::T": "OS::Heat::Value"})
    assert found.target == "OS::Heat::Value"


def test_user_alias_to_a_global_alias() -> None:
    found = resolve({"My::T": "Site::T"}, "My::T", global_entries={"Site::T": "OS::Heat::Value"})
    assert found.target == "OS::Heat::Value"


# -- null removal and merging ----------------------------------------------------------------


def test_null_removes_an_earlier_entry_of_the_same_layer() -> None:
    registry = ResourceRegistry({"My::Old": "OS::Heat::Value"})
    assert registry.resolve("My::Old", None, builtin).found
    merged = registry.merged_with({"My::Old": None})
    assert merged.resolve("My::Old", None, builtin).kind == "missing"
    assert "My::Old" not in merged.to_dict()
    # the original is unchanged
    assert registry.resolve("My::Old", None, builtin).found


def test_null_wildcard_removes_every_entry_with_the_prefix() -> None:
    registry = ResourceRegistry(
        {"Old::A": "OS::Heat::Value", "Old::*": "OS::Heat::None", "New::A": "OS::Heat::Value"}
    )
    merged = registry.merged_with({"Old::*": None})
    assert merged.to_dict() == {"New::A": "OS::Heat::Value", "resources": {}}


def test_null_within_one_mapping_applies_in_order() -> None:
    registry = ResourceRegistry({"Old::A": "OS::Heat::Value", "Old::*": None, "Old::B": "X"})
    assert registry.to_dict() == {"Old::B": "X", "resources": {}}


def test_merged_with_is_recursive_for_the_per_resource_section() -> None:
    first = ResourceRegistry(
        {"A": "a.yaml", "resources": {"x": {"hooks": "pre-create"}, "y": {"A": "y.yaml"}}}
    )
    merged = first.merged_with(
        {"B": "b.yaml", "resources": {"x": {"restricted_actions": "update"}, "y": None}}
    )
    assert merged.to_dict() == {
        "A": "a.yaml",
        "B": "b.yaml",
        "resources": {"x": {"hooks": "pre-create", "restricted_actions": "update"}},
    }
    # a later value replaces (hooks are not accumulated)
    again = merged.merged_with({"resources": {"x": {"hooks": ["pre-delete"]}}})
    assert again.hooks_for("x") == frozenset({"pre-delete"})


def test_merged_with_keeps_the_parent_layer() -> None:
    glob = ResourceRegistry({"G": "OS::Heat::Value"}, system=True)
    merged = ResourceRegistry({}, parent=glob).merged_with({"U": "OS::Heat::None"})
    assert merged.parent is glob
    assert merged.resolve("G", None, builtin).target == "OS::Heat::Value"


# -- hooks and restricted actions -------------------------------------------------------------


def test_hooks_by_exact_name_and_fnmatch_pattern() -> None:
    registry = ResourceRegistry(
        {
            "resources": {
                "db": {"hooks": ["pre-create", "pre-update"]},
                "*_server": {"hooks": "pre-create"},
                "web?": {"hooks": "post-delete"},
                "[ab]x": {"hooks": "post-update"},
            }
        }
    )
    assert registry.hooks_for("db") == frozenset({"pre-create", "pre-update"})
    assert registry.hooks_for("web_server") == frozenset({"pre-create"})
    assert registry.hooks_for("web1") == frozenset({"post-delete"})
    assert registry.hooks_for("web12") == frozenset()
    assert registry.hooks_for("ax") == frozenset({"post-update"})
    assert registry.hooks_for("cx") == frozenset()
    assert registry.hooks_for("DB") == frozenset()  # case-sensitive
    assert registry.hooks_for("other") == frozenset()


def test_hooks_union_of_every_matching_entry_and_both_layers() -> None:
    glob = ResourceRegistry({"resources": {"*": {"hooks": "pre-delete"}}}, system=True)
    registry = ResourceRegistry(
        {"resources": {"db": {"hooks": "pre-create"}, "d*": {"hooks": "post-create"}}},
        parent=glob,
    )
    assert registry.hooks_for("db") == frozenset({"pre-create", "post-create", "pre-delete"})


def test_restricted_actions_patterns() -> None:
    registry = ResourceRegistry(
        {
            "resources": {
                "db": {"restricted_actions": "replace"},
                "*": {"restricted_actions": ["update"]},
            }
        }
    )
    assert registry.restricted_actions_for("db") == frozenset({"replace", "update"})
    assert registry.restricted_actions_for("x") == frozenset({"update"})
    assert ResourceRegistry().restricted_actions_for("x") == frozenset()


def test_valid_hooks() -> None:
    assert set(VALID_HOOKS) == {
        "pre-create",
        "post-create",
        "pre-update",
        "post-update",
        "pre-delete",
        "post-delete",
    }


# -- child registries (7.3 and nested narrowing of 6.5) -------------------------------------


def test_child_narrows_the_per_resource_section() -> None:
    registry = ResourceRegistry(
        {
            "My::T": "OS::Heat::Value",
            "resources": {
                "nested_stack": {
                    "hooks": "pre-create",
                    "My::T": "n.yaml",
                    "inner_resource": {"hooks": "pre-update"},
                    "deeper": {"leaf": {"hooks": "pre-delete"}},
                },
                "other": {"x": {"hooks": "post-create"}},
            },
        }
    )
    child = registry.child("nested_stack", exclude_type=None)
    assert child.hooks_for("inner_resource") == frozenset({"pre-update"})
    # the parent resource's own hooks and type overrides stay outside its stack
    assert child.hooks_for("nested_stack") == frozenset()
    assert child.hooks_for("x") == frozenset()
    assert child.resolve("My::T", "inner_resource", builtin).target == "OS::Heat::Value"
    # to any depth
    grandchild = child.child("deeper", exclude_type=None)
    assert grandchild.hooks_for("leaf") == frozenset({"pre-delete"})
    assert child.to_dict()["resources"] == {
        "inner_resource": {"hooks": "pre-update"},
        "deeper": {"leaf": {"hooks": "pre-delete"}},
    }


def test_child_section_is_union_of_matching_patterns_exact_last() -> None:
    registry = ResourceRegistry(
        {
            "resources": {
                "stack_a": {"inner": {"hooks": "pre-create", "My::T": "exact.yaml"}},
                "stack_*": {
                    "inner": {"hooks": "pre-update", "My::T": "pattern.yaml"},
                    "extra": {"restricted_actions": "replace"},
                },
            }
        }
    )
    child = registry.child("stack_a", exclude_type=None)
    assert child.hooks_for("inner") == frozenset({"pre-create"})  # exact applied last
    assert child.resolve("My::T", "inner", builtin).target == "exact.yaml"
    assert child.restricted_actions_for("extra") == frozenset({"replace"})
    other = registry.child("stack_b", exclude_type=None)
    assert other.resolve("My::T", "inner", builtin).target == "pattern.yaml"
    assert registry.child("zzz", exclude_type=None).to_dict()["resources"] == {}


def test_child_drops_the_mapping_that_made_the_template_resource() -> None:
    registry = ResourceRegistry({"OS::Nova::Server": "srv.yaml", "My::T": "t.yaml"})
    child = registry.child("web", exclude_type="OS::Nova::Server")
    # inside the provider, OS::Nova::Server is the real implementation again
    assert child.resolve("OS::Nova::Server", "server", builtin).kind == "builtin"
    assert child.resolve("My::T", "x", builtin).target == "t.yaml"
    # the parent is untouched
    assert registry.resolve("OS::Nova::Server", "web", builtin).target == "srv.yaml"


def test_child_exclusion_follows_the_alias_chain() -> None:
    registry = ResourceRegistry({"My::A": "My::B", "My::B": "b.yaml"})
    child = registry.child("r", exclude_type="My::A")
    assert child.to_dict() == {"My::A": "My::B", "resources": {}}
    assert child.resolve("My::A", "x", builtin).kind == "missing"


def test_child_exclusion_of_a_global_mapping() -> None:
    glob = ResourceRegistry({"OS::Nova::Server": "file:///srv.yaml"}, system=True)
    registry = ResourceRegistry({}, parent=glob)
    child = registry.child("web", exclude_type="OS::Nova::Server")
    assert child.resolve("OS::Nova::Server", "s", builtin).kind == "builtin"
    assert registry.resolve("OS::Nova::Server", "s", builtin).kind == "template"
    assert glob.to_dict()["OS::Nova::Server"] == "file:///srv.yaml"


def test_child_of_literal_template_type_excludes_nothing() -> None:
    registry = ResourceRegistry({"My::T": "t.yaml"})
    child = registry.child("r", exclude_type="box.yaml")
    assert child.to_dict() == {"My::T": "t.yaml", "resources": {}}


def test_child_keeps_the_global_layer() -> None:
    glob = ResourceRegistry({"G::T": "OS::Heat::Value"}, system=True)
    child = ResourceRegistry({}, parent=glob).child("r", exclude_type=None)
    assert child.parent is glob
    assert child.resolve("G::T", None, builtin).target == "OS::Heat::Value"


# -- views -----------------------------------------------------------------------------------


def test_template_locations() -> None:
    registry = ResourceRegistry(
        {
            "A": "a.yaml",
            "B": "OS::Heat::Value",
            "C": "https://h/c.template",
            "d.yaml": "https://h/d",
            "E": "a.yaml",
            "resources": {
                "r": {"A": "r.yaml", "hooks": "pre-create", "inner": {"X": "inner.yaml"}},
            },
        }
    )
    assert registry.template_locations() == [
        "a.yaml",
        "https://h/c.template",
        "https://h/d",
        "r.yaml",
        "inner.yaml",
    ]


def test_to_dict_always_has_resources_and_only_this_layer() -> None:
    assert ResourceRegistry().to_dict() == {"resources": {}}
    glob = ResourceRegistry({"G": "OS::Heat::Value"}, system=True)
    user = ResourceRegistry({"U": "OS::Heat::None"}, parent=glob)
    assert user.to_dict() == {"U": "OS::Heat::None", "resources": {}}


def test_to_dict_is_a_copy() -> None:
    registry = ResourceRegistry({"resources": {"r": {"hooks": ["pre-create"]}}})
    out = registry.to_dict()
    out["resources"]["r"]["hooks"].append("pre-delete")
    assert registry.hooks_for("r") == frozenset({"pre-create"})


def test_registry_does_not_alias_its_input() -> None:
    data: dict[str, Any] = {"resources": {"r": {"hooks": ["pre-create"]}}}
    registry = ResourceRegistry(data)
    data["resources"]["r"]["hooks"].append("pre-delete")
    assert registry.hooks_for("r") == frozenset({"pre-create"})


def test_equality_compares_entries_and_layers() -> None:
    glob = ResourceRegistry({"G": "OS::Heat::Value"}, system=True)
    assert ResourceRegistry({"A": "a.yaml"}, parent=glob) == ResourceRegistry(
        {"A": "a.yaml"}, parent=glob
    )
    assert ResourceRegistry({"A": "a.yaml"}) != ResourceRegistry({"A": "b.yaml"})
    assert ResourceRegistry({"A": "a.yaml"}, parent=glob) != ResourceRegistry({"A": "a.yaml"})
    assert ResourceRegistry(system=True) != ResourceRegistry()
