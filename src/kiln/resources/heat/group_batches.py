"""Planning a ResourceGroup's rolling update: which members go in which batch (pure).

A rolling update moves the group's members to a new definition in batches, each
one child-stack update (reference: ResourceGroup, ``update_policy.rolling_update``).
:func:`next_batch` says what the next child update holds, from where the group
is now: its members, which of them already have the new definition, the target
``count`` and skip list, ``max_batch_size`` and ``min_in_service``. The plugin
asks it again after every batch (from the member definitions it recorded), so
a resumed step recomputes the batch it may already have sent, never the one
after. :func:`plan_rolling_update` is the whole sequence, for counting batches
and for tests.

The rule, after Heat's rolling updates: a batch gives the new definition to at
most ``max_batch_size`` members of the target (creating missing ones first,
then updating the highest indexes first). The members it does not touch stay in
service, and there are at least ``min(min_in_service, target count, live
members)`` of them: when the group cannot spare that many, it grows past its
target for a while with extra new members at the next free indexes, removed
once every member of the target is new. Members beyond the target, or skipped,
are removed as soon as the in-service floor allows (skipped ones at once), and
are never updated.
Imports: kiln.resources.heat._child_stack (member order) only.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kiln.resources.heat._child_stack import member_order


def member_names(count: int, skiplist: Iterable[str]) -> list[str]:
    """The first ``count`` decimal names not in ``skiplist``."""
    skipped = set(skiplist)
    names: list[str] = []
    index = 0
    while len(names) < count:
        if str(index) not in skipped:
            names.append(str(index))
        index += 1
    return names


@dataclass(frozen=True)
class Batch:
    """One child update of a rolling update."""

    #: the child's members once the batch is applied, in index order
    members: tuple[str, ...]
    #: the members given the new definition by this batch (created or updated), index order
    updated: tuple[str, ...]


def in_service(before: Collection[str], batch: Batch) -> int:
    """How many members stay in service while ``batch`` runs: kept and not touched."""
    touched = set(batch.updated)
    return sum(1 for name in batch.members if name in before and name not in touched)


def next_batch(
    present: Sequence[str],
    fresh: Collection[str],
    count: int,
    skiplist: Collection[str],
    max_batch_size: int,
    min_in_service: int,
) -> Batch | None:
    """The next batch, or None when the group is done.

    ``present`` are the child's members now, ``fresh`` those of them that already
    have the new definition; the group is done when its members are exactly the
    first ``count`` names not in ``skiplist``, all fresh.
    """
    skip = set(skiplist)
    target = member_names(count, skip)
    in_target = set(target)
    live = sorted((n for n in present if n not in skip), key=member_order)
    have = set(live)
    kept = [n for n in target if n in have]  # never removed
    missing = [n for n in target if n not in have]
    excess = [n for n in live if n not in in_target]  # beyond the target: to remove
    done = sum(1 for n in kept if n in fresh)
    if done == len(target) and len(live) == len(target) and have == set(present):
        return None
    size = min(max(1, max_batch_size), len(target) - done)
    floor = min(max(0, min_in_service), len(target), len(live))
    # How many members the batch leaves untouched (Heat's rule): as many as the
    # target leaves room for, but never fewer than the floor. The group holds
    # those plus the batch's ``size`` new-definition members.
    untouched = max(min(len(live), len(target) - size), floor)
    capacity = untouched + size
    created = missing[:size]
    # Excess members serve as long as the floor needs them (the lowest stay longest).
    spared = excess[: max(0, capacity - len(kept) - len(created))]
    extra = capacity - len(kept) - len(created) - len(spared)
    if extra > 0:  # the floor needs members the group does not have: new ones past the target
        created += _names_after(target, have | skip, extra)
    stale = [n for n in reversed(kept) if n not in fresh]  # highest index first (reference)
    updated = created + stale[: max(0, size - len(created))]
    members = sorted([*kept, *spared, *created], key=member_order)
    return Batch(tuple(members), tuple(sorted(updated, key=member_order)))


def _names_after(target: Sequence[str], taken: Collection[str], count: int) -> list[str]:
    """``count`` free decimal names past the last of ``target``, lowest first."""
    found: list[str] = []
    index = int(target[-1]) + 1 if target else 0
    while len(found) < count:
        if str(index) not in taken:
            found.append(str(index))
        index += 1
    return found


def plan_rolling_update(
    present: Sequence[str],
    fresh: Collection[str],
    count: int,
    skiplist: Collection[str],
    max_batch_size: int,
    min_in_service: int,
) -> list[Batch]:
    """Every batch of a rolling update, in order (see :func:`next_batch`)."""
    batches: list[Batch] = []
    members, new = list(present), set(fresh) & set(present)
    # Each batch makes a target member fresh or resizes; this bound is never reached.
    for _ in range(4 * (len(present) + count) + 4):
        batch = next_batch(members, new, count, skiplist, max_batch_size, min_in_service)
        if batch is None:
            return batches
        batches.append(batch)
        members = list(batch.members)
        new = (new & set(members)) | set(batch.updated)
    raise AssertionError("rolling update planning did not finish")


# -- what the group last gave its child ------------------------------------------------------
def pack_sources(sources: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``{member: source}`` as stored: each distinct source once, members point at it.

    A source is what a member's definition is made from (``resource_def`` and
    ``index_var``); a group has one, or two during a rolling update.
    """
    variants: list[Mapping[str, Any]] = []
    seen: dict[str, int] = {}
    members: dict[str, int] = {}
    for name, source in sources.items():
        key = json.dumps(source, sort_keys=True, default=str)
        if key not in seen:
            seen[key] = len(variants)
            variants.append(source)
        members[name] = seen[key]
    return {"variants": variants, "members": members}


def unpack_sources(data: Any) -> dict[str, dict[str, Any]] | None:
    """What :func:`pack_sources` stored, as ``{member: source}`` in member order (None: absent)."""
    if not isinstance(data, Mapping):
        return None
    variants, members = data.get("variants"), data.get("members")
    if not isinstance(variants, list) or not isinstance(members, Mapping):
        return None
    try:
        found = {str(name): dict(variants[int(index)]) for name, index in members.items()}
    except (IndexError, TypeError, ValueError):
        return None
    return {name: found[name] for name in sorted(found, key=member_order)}
