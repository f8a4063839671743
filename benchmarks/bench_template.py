"""Benchmark: validate + resolve of generated templates and of the whole corpus.

Each generated resource uses get_param, get_attr, str_replace, list_join and a
condition, and depends on the resource before it through get_attr (a chain,
the worst case for the graph). Times are in-process, from template text to the
resolved definitions, median of several runs. Heat's figures (POST /validate
on this kind of machine, ../shared/bench/anchors.md) are printed beside ours.

Run: make bench   (or .venv/bin/python benchmarks/bench_template.py [--quick])
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

import yaml

from kiln.cli.local_files import load_local_stack
from kiln.cli.runtime import configure_process
from kiln.template.inputs import build_stack
from kiln.template.report import resolved_outputs, resolved_resources
from kiln.template.stack import Limits

UNLIMITED = Limits(max_resources_per_stack=-1, max_template_size=64 * 1024 * 1024)
HEAT_VALIDATE_SECONDS = {10: 0.015, 100: 0.039, 500: 1.05, 1000: 2.65}
CORPUS = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def generate(n: int) -> str:
    """A HOT template of n resources as YAML text."""
    lines = [
        "heat_template_version: 2021-04-16",
        "parameters:",
        "  prefix: {type: string, default: app}",
        "  env: {type: string, default: prod}",
        "  zones: {type: comma_delimited_list, default: 'az1,az2,az3'}",
        "conditions:",
        "  is_prod: {equals: [{get_param: env}, prod]}",
        "  is_dev: {not: is_prod}",
        "resources:",
    ]
    for i in range(n):
        prev = f"r{i - 1}" if i else None
        attr = f"{{get_attr: [{prev}, value]}}" if prev else "first"
        lines += [
            f"  r{i}:",
            "    type: OS::Heat::Value",
            "    condition: is_prod" if i % 10 else "    condition: {or: [is_prod, is_dev]}",
            "    properties:",
            "      value:",
            "        str_replace:",
            "          template: NAME-IDX-PREV",
            "          params:",
            "            NAME: {get_param: prefix}",
            f"            IDX: '{i}'",
            f"            PREV: {attr}",
            "      type: string",
            "    metadata:",
            f"      zones: {{list_join: [',', {{get_param: zones}}, [z{i}]]}}",
            "      size: {if: [is_prod, large, small]}",
        ]
    lines += [
        "outputs:",
        f"  last: {{value: {{get_attr: [r{n - 1}, value]}}}}",
        "  joined: {value: {list_join: ['-', [a, b, {get_param: prefix}]]}}",
    ]
    return "\n".join(lines) + "\n"


def validate_and_resolve(text: str) -> int:
    stack = build_stack(text, limits=UNLIMITED, check_values=True)
    if stack.errors:
        raise SystemExit(f"generated template invalid: {stack.errors[0]}")
    resolved = resolved_resources(stack)
    resolved_outputs(stack)
    return len(resolved)


def timed(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def corpus_run() -> int:
    manifest = yaml.safe_load((CORPUS / "MANIFEST.yaml").read_text())
    for entry in manifest["templates"]:
        envs = [str(CORPUS / e) for e in entry.get("environment_files", [])]
        resolved_resources(load_local_stack(str(CORPUS / entry["path"]), envs))
    return len(manifest["templates"])


def main() -> None:
    configure_process()  # the settings the kiln command runs with
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and runs")
    args = parser.parse_args()
    sizes = (100, 1000) if args.quick else (100, 500, 1000, 5000)
    print("validate + resolve, generated templates (median seconds)")
    print(f"{'N':>6} {'bytes':>9} {'kiln':>9} {'per res ms':>10} {'heat':>8}")
    results = {}
    for n in sizes:
        text = generate(n)
        repeat = 3 if n >= 5000 else 7
        seconds = timed(lambda text=text: validate_and_resolve(text), repeat)
        results[n] = seconds
        heat = HEAT_VALIDATE_SECONDS.get(n)
        heat_s = f"{heat:.2f}" if heat is not None else "-"
        print(f"{n:>6} {len(text):>9} {seconds:>9.4f} {seconds / n * 1000:>10.3f} {heat_s:>8}")
    if 1000 in results and 5000 in results:
        print(f"growth N=5000 / N=1000: {results[5000] / results[1000]:.2f}x (target <= 6x)")
    if 1000 in results:
        print(f"target N=1000 < 0.25 s: {'met' if results[1000] < 0.25 else 'NOT met'}")
    if CORPUS.is_dir():
        seconds = timed(corpus_run, 3)
        print(f"corpus: {corpus_run()} templates in {seconds:.3f} s (median of 3)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
