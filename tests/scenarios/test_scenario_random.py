"""Random DAGs, crash points, interleavings and update sequences: every invariant holds."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kiln.engine.steps import FAULT_POINTS
from kiln.testing.scenario import Scenario, make_thing_template

SETTINGS = settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)


@dataclass
class Spec:
    """One resource of a generated template."""

    size: int = 1
    flavor: str = "small"
    polls: int = 0
    fail: bool = False
    depends_on: list[str] = field(default_factory=list)
    attrs: list[str] = field(default_factory=list)  # get_attr [x, name]
    refs: list[str] = field(default_factory=list)  # get_resource x

    def properties(self) -> dict[str, Any]:
        props: dict[str, Any] = {"size": self.size, "flavor": self.flavor, "polls": self.polls}
        if self.fail:
            props["fail"] = True
        parts = [{"get_attr": [a, "name"]} for a in self.attrs]
        parts += [{"get_resource": r} for r in self.refs]
        if parts:
            props["input"] = {"list_join": ["+", parts]}
        if self.depends_on:
            props["depends_on"] = list(self.depends_on)
        return props


def template(specs: dict[str, Spec]) -> dict[str, Any]:
    return make_thing_template({name: spec.properties() for name, spec in specs.items()})


@st.composite
def spec_for(draw: st.DrawFn, earlier: list[str]) -> Spec:
    spec = Spec(
        size=draw(st.integers(1, 3)),
        flavor=draw(st.sampled_from(["small", "large"])),
        polls=draw(st.integers(0, 2)),
    )
    if earlier:
        preds = draw(st.lists(st.sampled_from(earlier), max_size=3, unique=True))
        for pred in preds:
            kind = draw(st.sampled_from(["depends_on", "attrs", "refs"]))
            getattr(spec, kind).append(pred)
    return spec


@st.composite
def dags(draw: st.DrawFn, min_size: int = 5, max_size: int = 25) -> dict[str, Spec]:
    count = draw(st.integers(min_size, max_size))
    specs: dict[str, Spec] = {}
    for i in range(count):
        specs[f"r{i:02d}"] = draw(spec_for(list(specs)))
    return specs


@st.composite
def crashes(draw: st.DrawFn, names: list[str]) -> list[dict[str, Any]]:
    plans = draw(
        st.lists(
            st.tuples(st.sampled_from(FAULT_POINTS), st.sampled_from(names), st.integers(1, 2)),
            max_size=3,
        )
    )
    return [{"point": p, "resource": r, "occurrence": n} for p, r, n in plans]


@st.composite
def mutated(draw: st.DrawFn, specs: dict[str, Spec], serial: int) -> dict[str, Spec]:
    """A next template: properties changed, some resources removed, some added."""
    names = list(specs)
    removed = set(draw(st.lists(st.sampled_from(names), max_size=max(0, len(names) - 3))))
    out: dict[str, Spec] = {}
    for name in names:
        if name in removed:
            continue
        old = specs[name]
        keep = [n for n in out]
        spec = Spec(
            size=draw(st.sampled_from([old.size, old.size + 1])),
            flavor=draw(st.sampled_from([old.flavor, "small", "large"])),
            polls=draw(st.integers(0, 2)),
            depends_on=[n for n in old.depends_on if n in keep],
            attrs=[n for n in old.attrs if n in keep],
            refs=[n for n in old.refs if n in keep],
        )
        out[name] = spec
    for i in range(draw(st.integers(0, 3))):
        out[f"n{serial}x{i}"] = draw(spec_for(list(out)))
    return out


@SETTINGS
@given(
    specs=dags(),
    engines=st.integers(2, 3),
    batch=st.sampled_from([1, 3]),
    seed=st.integers(0, 1000),
    data=st.data(),
)
def test_random_dags_created_with_random_crashes(
    specs: dict[str, Spec], engines: int, batch: int, seed: int, data: st.DataObject
) -> None:
    plans = data.draw(crashes(list(specs)))
    with tempfile.TemporaryDirectory() as tmp:
        sc = Scenario(
            tmp, engines=engines, batch=batch, seed=seed, interleave="random", check_each_step=True
        )
        for plan in plans:
            sc.crash_at(**plan)
        sid = sc.create(template(specs))
        sc.run()  # checks every invariant at quiescence
        assert (sc.stack(sid).action, sc.stack(sid).status) == ("CREATE", "COMPLETE")
        assert len(sc.cloud.creates) == len(specs)
        polls = sum(sc.cloud.polls_seen.values())
        assert sc.work().executions <= len(specs) + polls + sc.crashes
        sc.delete(sid)
        sc.run()
        assert sc.cloud.live() == []


@SETTINGS
@given(
    first=dags(min_size=4, max_size=10),
    seed=st.integers(0, 1000),
    data=st.data(),
)
def test_random_update_sequences_converge_to_the_last_template(
    first: dict[str, Spec], seed: int, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        engines = data.draw(st.integers(1, 3))
        sc = Scenario(tmp, engines=engines, seed=seed, interleave="random", check_each_step=True)
        sid = sc.create(template(first))
        sc.run_steps(data.draw(st.integers(0, 30)))
        specs = first
        updates = data.draw(st.integers(1, 3))
        for serial in range(updates):
            specs = data.draw(mutated(specs, serial))
            last = serial == updates - 1
            if not last and data.draw(st.booleans()) and specs:
                # an intermediate template that fails: a later one repairs it
                victim = data.draw(st.sampled_from(sorted(specs)))
                specs[victim].fail = True
            for plan in data.draw(crashes(sorted(specs))) if specs else []:
                sc.crash_at(**plan)
            sc.update(sid, template(specs))
            sc.run_steps(data.draw(st.integers(0, 30)))
            for spec in specs.values():
                spec.fail = False
        sc.run()  # every invariant, and convergence to the last template
        stack = sc.stack(sid)
        assert (stack.action, stack.status) == ("UPDATE", "COMPLETE"), stack.status_reason
        assert sorted(o.name.split("-")[1] for o in sc.cloud.live()) == sorted(specs)
        sc.delete(sid)
        sc.run()
        assert sc.cloud.live() == []
