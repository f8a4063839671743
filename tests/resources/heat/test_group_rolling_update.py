"""ResourceGroup rolling_update: the batch planner (pure) and the plugin's batches."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kiln.plugin.nested import CHILD_POLL_SECONDS
from kiln.resources.heat.group_batches import (
    Batch,
    in_service,
    member_names,
    next_batch,
    pack_sources,
    plan_rolling_update,
    unpack_sources,
)
from kiln.resources.heat.resource_group import GIVEN_KEY, ROLLING_KEY, ResourceGroup
from kiln.testing.plugin_context import FakeNestedStacks, fake_resource, run_action


def names(n: int) -> list[str]:
    return [str(i) for i in range(n)]


def plan(
    present: list[str],
    count: int,
    size: int,
    floor: int = 0,
    fresh: tuple[str, ...] = (),
    skip: tuple[str, ...] = (),
) -> list[tuple[list[str], list[str]]]:
    """The batches as ([members after], [updated]) pairs, for short expectations."""
    batches = plan_rolling_update(present, fresh, count, skip, size, floor)
    return [(list(b.members), list(b.updated)) for b in batches]


# -- the planner, by example ----------------------------------------------------------------
def test_five_members_two_at_a_time_highest_first() -> None:
    assert plan(names(5), 5, 2) == [
        (names(5), ["3", "4"]),
        (names(5), ["1", "2"]),
        (names(5), ["0"]),
    ]


def test_a_batch_larger_than_the_group_is_one_batch() -> None:
    assert plan(names(3), 3, 10) == [(names(3), ["0", "1", "2"])]


def test_min_in_service_grows_the_group_for_a_while() -> None:
    # Four must stay up while two change: an extra member 5 (new) joins first,
    # and leaves once the five of the target are new.
    assert plan(names(5), 5, 2, floor=4) == [
        (names(6), ["4", "5"]),
        (names(6), ["2", "3"]),
        (names(6), ["0", "1"]),
        (names(5), []),
    ]


def test_min_in_service_as_large_as_the_group_still_finishes() -> None:
    assert plan(names(3), 3, 1, floor=3) == [
        (names(4), ["3"]),
        (names(4), ["2"]),
        (names(4), ["1"]),
        (names(4), ["0"]),
        (names(3), []),
    ]


def test_a_scale_up_creates_new_members_in_the_batches_first() -> None:
    assert plan(names(3), 5, 2) == [
        (names(5), ["3", "4"]),
        (names(5), ["1", "2"]),
        (names(5), ["0"]),
    ]
    # Two must stay up: the group cannot shrink them away, so it grows by two first.
    assert plan(names(2), 5, 2, floor=2) == [
        (names(4), ["2", "3"]),
        (names(5), ["1", "4"]),
        (names(5), ["0"]),
    ]


def test_a_scale_down_removes_the_highest_members_in_the_first_batch() -> None:
    assert plan(names(5), 2, 2) == [(names(2), ["0", "1"])]
    assert plan(names(5), 2, 1) == [(names(2), ["1"]), (names(2), ["0"])]
    # Two must stay up: members 2 and 3 serve until 0 and 1 are new.
    assert plan(names(5), 2, 2, floor=2) == [(names(4), ["0", "1"]), (names(2), [])]


def test_removed_members_go_first_and_their_names_are_not_reused() -> None:
    assert plan(names(5), 4, 2, skip=("1",)) == [
        (["0", "2", "3", "4"], ["3", "4"]),
        (["0", "2", "3", "4"], ["0", "2"]),
    ]
    assert plan(names(3), 3, 1, skip=("0",)) == [
        (["1", "2", "3"], ["3"]),
        (["1", "2", "3"], ["2"]),
        (["1", "2", "3"], ["1"]),
    ]


def test_members_that_already_have_the_new_definition_are_left_alone() -> None:
    assert plan(names(5), 5, 2, fresh=("3", "4")) == [(names(5), ["1", "2"]), (names(5), ["0"])]
    assert plan(names(3), 3, 2, fresh=("0", "1", "2")) == []
    assert next_batch(names(3), names(3), 3, (), 2, 0) is None


def test_a_name_freed_from_the_skip_list_is_filled_without_breaking_the_batch_size() -> None:
    # removal_policies_mode update emptied the skip list: 1 is missing in the middle.
    assert plan(["0", "2", "3", "4"], 5, 1) == [
        (names(5), ["1"]),
        (names(5), ["4"]),
        (names(5), ["3"]),
        (names(5), ["2"]),
        (names(5), ["0"]),
    ]


def test_count_zero_removes_every_member_at_once() -> None:
    assert plan(names(4), 0, 1) == [([], [])]


def test_in_service_counts_kept_and_untouched_members() -> None:
    batch = Batch(("0", "1", "2", "5"), ("2", "5"))
    assert in_service({"0", "1", "2", "3"}, batch) == 2


def test_sources_survive_the_data_store() -> None:
    old = {"resource_def": {"type": "T"}, "index_var": "%index%"}
    new = {"resource_def": {"type": "U"}, "index_var": "%index%"}
    packed = pack_sources({"0": old, "10": new, "2": old})
    assert packed["variants"] == [old, new]
    unpacked = unpack_sources(packed)
    assert unpacked == {"0": old, "2": old, "10": new}
    assert unpacked is not None and list(unpacked) == ["0", "2", "10"]  # member order
    for bad in (None, "x", {"variants": [old]}, {"variants": [old], "members": {"0": 3}}):
        assert unpack_sources(bad) is None


# -- the planner, by property ---------------------------------------------------------------
@dataclass
class Case:
    present: list[str]
    fresh: set[str]
    count: int
    skip: set[str]
    size: int
    floor: int
    target: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.target = member_names(self.count, self.skip)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    old_skip = draw(st.sets(st.sampled_from(names(14)), max_size=4))
    present = member_names(draw(st.integers(0, 10)), old_skip)
    # The new skip list may add names (removal_policies) or drop some (mode update).
    skip = draw(st.sets(st.sampled_from(names(14)), max_size=4))
    fresh = draw(st.sets(st.sampled_from(present), max_size=len(present))) if present else set()
    return Case(
        present=present,
        fresh=fresh,
        count=draw(st.integers(0, 10)),
        skip=skip,
        size=draw(st.integers(1, 5)),
        floor=draw(st.integers(0, 12)),
    )


def _run(case: Case) -> list[Batch]:
    return plan_rolling_update(
        case.present, case.fresh, case.count, case.skip, case.size, case.floor
    )


@settings(max_examples=300, deadline=None)
@given(cases())
def test_every_member_changes_once_within_the_bounds(case: Case) -> None:
    batches = _run(case)
    members, fresh = list(case.present), set(case.fresh)
    changed: list[str] = []
    for batch in batches:
        live = [n for n in members if n not in case.skip]
        assert len(batch.updated) <= case.size
        assert set(batch.updated) <= set(batch.members)
        assert not set(batch.members) & case.skip  # skipped names are gone and never reused
        # Untouched members in service: at least min_in_service, as far as the group allows.
        assert in_service(live, batch) >= min(case.floor, len(case.target), len(live))
        assert len(batch.members) <= max(len(case.present), len(case.target)) + case.size
        changed += batch.updated
        members = list(batch.members)
        fresh = (fresh & set(members)) | set(batch.updated)
    assert len(changed) == len(set(changed))  # nothing changed twice
    assert members == case.target and fresh >= set(case.target)
    # Every member of the target that was not already new changed exactly once; of the
    # others only extra members made to keep the floor (never an old member to remove).
    needed = {n for n in case.target if n not in case.fresh or n not in case.present}
    assert needed <= set(changed)
    assert not (set(changed) - needed) & set(case.present)


@settings(max_examples=200, deadline=None)
@given(cases())
def test_planning_again_from_any_batch_gives_the_rest_of_the_plan(case: Case) -> None:
    # What a resumed step relies on: the next batch depends only on where the group is.
    batches = _run(case)
    members, fresh = list(case.present), set(case.fresh) & set(case.present)
    for index, batch in enumerate(batches):
        rest = plan_rolling_update(members, fresh, case.count, case.skip, case.size, case.floor)
        assert rest == batches[index:]
        members = list(batch.members)
        fresh = (fresh & set(members)) | set(batch.updated)


@settings(max_examples=200, deadline=None)
@given(cases())
def test_without_a_floor_batches_are_full_until_the_last(case: Case) -> None:
    case.floor = 0
    case.fresh = set()
    batches = _run(case)
    sizes = [len(b.updated) for b in batches]
    if len(case.target) and not set(case.present) - set(case.target) - case.skip:
        # The target takes ceil(n / size) batches when the group only grows or stays.
        assert len(batches) == -(-len(case.target) // case.size)
        assert all(s == case.size for s in sizes[:-1])


# -- the plugin ---------------------------------------------------------------------------
VALUE_DEF = {"type": "OS::Heat::Value", "properties": {"value": "v-%index%"}}
NEW_DEF = {"type": "OS::Heat::Value", "properties": {"value": "w-%index%"}}


@dataclass(eq=False)
class RecordingStacks(FakeNestedStacks):
    """A fake stacks client that keeps every template it was sent."""

    sent: list[dict[str, Any]] = field(default_factory=list)

    def update(self, stack_id: str, **kw: Any) -> None:
        self.sent.append(dict(kw["template"]))
        super().update(stack_id, **kw)


def values(template: dict[str, Any]) -> dict[str, str]:
    """Member -> its ``value`` property, from a child template."""
    return {n: d["properties"]["value"] for n, d in template["resources"].items()}


def rolling_group(
    policy: dict[str, Any] | None, count: int = 5, **properties: Any
) -> tuple[ResourceGroup, RecordingStacks, Any]:
    stacks = RecordingStacks()
    props = {"count": count, "resource_def": VALUE_DEF, **properties}
    update_policy = {} if policy is None else {"rolling_update": policy}
    res, ctx = fake_resource(
        ResourceGroup, props, clients={"stacks": stacks}, update_policy=update_policy
    )
    run_action(res, "create")
    return res, stacks, ctx


def test_a_changed_definition_reaches_the_members_in_batches_with_pauses() -> None:
    res, stacks, ctx = rolling_group({"max_batch_size": 2, "pause_time": 10})
    sid = ctx.physical_id
    started = ctx.now()
    polls = run_action(res, "update", new_properties={"count": 5, "resource_def": NEW_DEF})
    assert [values(t) for t in stacks.sent] == [
        {"0": "v-0", "1": "v-1", "2": "v-2", "3": "w-3", "4": "w-4"},
        {"0": "v-0", "1": "w-1", "2": "w-2", "3": "w-3", "4": "w-4"},
        {"0": "w-0", "1": "w-1", "2": "w-2", "3": "w-3", "4": "w-4"},
    ]
    assert stacks.children[sid].template == stacks.sent[-1]
    assert (ctx.now() - started).total_seconds() >= 20  # two pauses, one poll a second
    assert polls >= 20
    assert ROLLING_KEY not in ctx.data  # the rollout is over
    recorded = unpack_sources(ctx.data[GIVEN_KEY]) or {}
    assert {n: s["resource_def"]["properties"] for n, s in recorded.items()} == {
        str(i): NEW_DEF["properties"] for i in range(5)
    }
    assert res.get_attribute("value") == [f"w-{i}" for i in range(5)]


def test_the_poll_is_asked_for_when_the_pause_ends() -> None:
    res, _, ctx = rolling_group({"max_batch_size": 3, "pause_time": 30})
    cookie = res.handle_update({**ctx.properties, "resource_def": NEW_DEF}, {})
    assert cookie["rolling"] and res.poll_after(cookie) == CHILD_POLL_SECONDS  # waits on the child
    assert res.check_update_complete(cookie) is False  # the first batch runs
    assert res.check_update_complete(cookie) is False  # done: the pause starts
    assert res.poll_after(cookie) == 30
    ctx.advance(12)
    assert res.poll_after(cookie) == 18
    assert res.check_update_complete(cookie) is False
    ctx.advance(18)
    assert res.check_update_complete(cookie) is False  # the second batch is sent
    assert res.poll_after(cookie) == CHILD_POLL_SECONDS


def test_a_resumed_poll_sends_the_same_batch_again_never_the_next() -> None:
    res, stacks, ctx = rolling_group({"max_batch_size": 2})
    stacks.polls = 2  # a child update takes two polls
    cookie = res.handle_update({**ctx.properties, "resource_def": NEW_DEF}, {})  # batch 1
    assert res.check_update_complete(cookie) is False  # batch 1 runs
    assert res.check_update_complete(cookie) is False  # batch 2 is sent
    committed = dict(ctx.data)
    assert res.check_update_complete(cookie) is False  # batch 2 runs
    assert res.check_update_complete(cookie) is False  # batch 3 is sent...
    ctx.data = dict(committed)  # ...but the step died before its outcome was written
    while not res.check_update_complete(cookie):
        pass
    sent = [values(t) for t in stacks.sent]
    assert len(sent) == 4 and sent[2] == sent[3]  # batch 3 again, the same template
    changes = [
        {n for n, v in after.items() if before.get(n) != v}
        for before, after in itertools.pairwise(sent)
    ]
    assert changes == [{"1", "2"}, {"0"}, set()]  # so no member changes twice
    assert set(sent[0].values()) == {"v-0", "v-1", "v-2", "w-3", "w-4"}


def test_removal_policies_remove_first_and_new_members_come_in_the_batches() -> None:
    res, stacks, _ = rolling_group({"max_batch_size": 2}, count=3)
    props = {"count": 4, "resource_def": NEW_DEF, "removal_policies": [{"resource_list": ["0"]}]}
    run_action(res, "update", new_properties=props)
    assert [values(t) for t in stacks.sent] == [
        {"1": "v-1", "2": "v-2", "3": "w-3", "4": "w-4"},
        {"1": "w-1", "2": "w-2", "3": "w-3", "4": "w-4"},
    ]
    assert res.get_attribute("removed_rsrc_list") == ["0"]


@pytest.mark.parametrize(
    ("policy", "change"),
    [
        (None, {"resource_def": NEW_DEF}),  # no policy
        ({"max_batch_size": 1}, {"count": 8}),  # a resize only
        ({"max_batch_size": 5}, {"resource_def": NEW_DEF}),  # one batch holds them all
    ],
)
def test_one_child_update_when_no_batches_are_needed(
    policy: dict[str, Any] | None, change: dict[str, Any]
) -> None:
    res, stacks, ctx = rolling_group(policy)
    run_action(res, "update", new_properties={"count": 5, "resource_def": VALUE_DEF, **change})
    assert len(stacks.sent) == 1
    assert unpack_sources(ctx.data[GIVEN_KEY]) is not None


def test_without_a_record_of_the_members_an_update_is_one_child_update() -> None:
    res, stacks, ctx = rolling_group({"max_batch_size": 1})
    del ctx.data[GIVEN_KEY]  # a group made before the record existed
    run_action(res, "update", new_properties={"count": 5, "resource_def": NEW_DEF})
    assert len(stacks.sent) == 1 and set(values(stacks.sent[0]).values()) == {
        f"w-{i}" for i in range(5)
    }


def test_batch_create_records_what_each_batch_gave() -> None:
    stacks = RecordingStacks()
    res, ctx = fake_resource(
        ResourceGroup,
        {"count": 3, "resource_def": VALUE_DEF},
        clients={"stacks": stacks},
        update_policy={"batch_create": {"max_batch_size": 2}},
    )
    cookie = res.handle_create()
    assert list(unpack_sources(ctx.data[GIVEN_KEY]) or {}) == ["0", "1"]
    while not res.check_create_complete(cookie):
        pass
    assert list(unpack_sources(ctx.data[GIVEN_KEY]) or {}) == ["0", "1", "2"]


def test_a_changed_definition_on_an_empty_group_creates_in_batches() -> None:
    res, stacks, _ = rolling_group({"max_batch_size": 2}, count=0)
    run_action(res, "update", new_properties={"count": 3, "resource_def": NEW_DEF})
    assert [values(t) for t in stacks.sent] == [
        {"0": "w-0", "1": "w-1"},
        {"0": "w-0", "1": "w-1", "2": "w-2"},
    ]


def test_members_left_behind_by_an_interrupted_rollout_still_roll() -> None:
    res, stacks, ctx = rolling_group({"max_batch_size": 1})
    new = {**ctx.properties, "resource_def": NEW_DEF}
    cookie = res.handle_update(new, {"resource_def": NEW_DEF})  # batch 1: member 4
    assert res.check_update_complete(cookie) is False  # batch 2 (member 3), then it fails
    stacks.sent.clear()
    # Stored as if the definition had been taken; only the count changes now, and
    # the members still on the old definition go on in batches.
    ctx.properties = new
    run_action(res, "update", new_properties={"count": 5, "resource_def": NEW_DEF})
    assert [values(t) for t in stacks.sent] == [
        {"0": "v-0", "1": "v-1", "2": "w-2", "3": "w-3", "4": "w-4"},
        {"0": "v-0", "1": "w-1", "2": "w-2", "3": "w-3", "4": "w-4"},
        {"0": "w-0", "1": "w-1", "2": "w-2", "3": "w-3", "4": "w-4"},
    ]
