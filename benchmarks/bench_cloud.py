"""The multi-tier example on ``kiln all``'s sandbox: create and delete, end to end.

For each sandbox latency (0 and 200 ms per cloud call) ``kiln all`` is started with that
latency (``--sandbox-config``); examples/multi-tier/web-app.yaml is created with 10 and
100 web servers through the API and deleted again. Printed per case: wall time of the
create and of the delete, cloud calls per resource (from the sandbox's call log, which
names the resource behind every call), and, with latency, the critical path: the longest
chain of cloud calls along the dependency graph (the example's, with each web server's
nested template hung under the group), after the API's validation lookups, times the
latency.

    .venv/bin/python benchmarks/bench_cloud.py [--quick] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from typing import Any

import requests
import yaml
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from kiln.cli.local_files import load_local_stack
from kiln.testing.kiln_process import KilnServer, start_server

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "multi-tier"
GROUP = "web_servers"


def _session(server: KilnServer, cloud: str) -> ks_session.Session:
    auth = server.cloud(cloud)["auth"]
    return ks_session.Session(
        auth=v3.Password(
            auth_url=server.auth_url,
            username=auth["username"],
            password=auth["password"],
            project_name=auth["project_name"],
            user_domain_id="default",
            project_domain_id="default",
        )
    )


def _body(name: str, count: int) -> dict[str, Any]:
    return {
        "stack_name": name,
        "template": (EXAMPLE / "web-app.yaml").read_text(),
        "files": {"web_server.yaml": (EXAMPLE / "web_server.yaml").read_text()},
        "parameters": {"web_count": count},
        "timeout_mins": 30,
    }


def _wait(http: requests.Session, url: str, headers: dict[str, str], start: float) -> Any:
    delay = 0.05
    while True:
        got = http.get(url, headers=headers)
        if got.status_code == 404:
            return "DELETE_COMPLETE", time.monotonic() - start
        stack = got.json()["stack"]
        if not stack["stack_status"].endswith("IN_PROGRESS"):
            return stack["stack_status"], time.monotonic() - start
        time.sleep(delay)
        delay = min(0.25, delay * 1.5)


def critical_path_calls(calls_by_name: dict[str, float]) -> tuple[float, list[str]]:
    """The largest sum of calls along a dependency path of the example (and its nested
    web server, whose resources start once the group's own requirements are met)."""
    top = load_local_stack(str(EXAMPLE / "web-app.yaml"), [])
    nested = load_local_stack(str(EXAMPLE / "web_server.yaml"), [])
    requires: dict[str, set[str]] = {
        name: set(d.requires) for name, d in top.resources.items() if name != GROUP
    }
    for name, definition in nested.resources.items():
        inner = {f"{GROUP}.{r}" for r in definition.requires}
        requires[f"{GROUP}.{name}"] = inner or set(top.resources[GROUP].requires)
    requires[GROUP] = {f"{GROUP}.{n}" for n in nested.resources}
    best: dict[str, tuple[float, list[str]]] = {}

    def longest(node: str) -> tuple[float, list[str]]:
        if node not in best:
            own = calls_by_name.get(node.split(".")[-1], 0.0)
            tails = [longest(r) for r in requires.get(node, ())]
            tail = max(tails, key=lambda t: t[0]) if tails else (0.0, [])
            best[node] = (own + tail[0], [*tail[1], node])
        return best[node]

    return max((longest(n) for n in requires), key=lambda t: t[0])


def run_case(server: KilnServer, count: int, latency: float) -> dict[str, Any]:
    demo = _session(server, "kiln-demo")
    admin = _session(server, "kiln")
    token, project = demo.get_token(), demo.get_project_id()
    headers = {"X-Auth-Token": token, "Content-Type": "application/json"}
    base = f"{server.api_url}/v1/{project}/stacks"
    name = f"web-{count}-{int(latency * 1000)}"
    http = requests.Session()
    sim = f"http://127.0.0.1:{server.identity_port}/_sim/requests"
    before = len(admin.get(sim).json()["requests"])

    start = time.monotonic()
    created = http.post(base, headers=headers, json=_body(name, count))
    created.raise_for_status()
    stack_url = f"{base}/{name}/{created.json()['stack']['id']}"
    status, create_s = _wait(http, stack_url, headers, start)
    if status != "CREATE_COMPLETE":
        raise SystemExit(f"{name}: {status}: {http.get(stack_url, headers=headers).text}")
    calls = admin.get(sim).json()["requests"][before:]
    resources = http.get(f"{stack_url}/resources?nested_depth=2", headers=headers).json()
    cloud_resources = [r for r in resources["resources"] if not _is_heat(r["resource_type"])]

    per_origin = Counter(c["origin"] for c in calls)
    by_name: dict[str, list[int]] = defaultdict(list)
    for origin, n in per_origin.items():
        by_name[str(origin).rsplit("/", 1)[-1]].append(n)
    medians = {k: float(statistics.median(v)) for k, v in by_name.items()}
    path_calls, path = critical_path_calls(medians)
    # the API's own lookups while validating the request (flavor, image, network names)
    # come first on every path
    validation_calls = float(per_origin.get(None, 0))
    path_calls += validation_calls
    path = ["(validation)", *path]

    start = time.monotonic()
    http.delete(stack_url, headers=headers).raise_for_status()
    status, delete_s = _wait(http, stack_url, headers, start)
    if status != "DELETE_COMPLETE":
        raise SystemExit(f"{name}: delete ended {status}")
    return {
        "servers": count,
        "latency_s": latency,
        "create_s": round(create_s, 2),
        "delete_s": round(delete_s, 2),
        "create_calls": len(calls),
        "cloud_resources": len(cloud_resources),
        "calls_per_resource": round(len(calls) / max(1, len(cloud_resources)), 2),
        "calls_by_resource": {k: v for k, v in sorted(medians.items())},
        "critical_path_calls": path_calls,
        "critical_path": path,
        "critical_path_s": round(path_calls * latency, 2),
        "create_over_critical_path": (
            round(create_s / (path_calls * latency), 2) if latency else None
        ),
    }


def _is_heat(resource_type: str) -> bool:
    return resource_type.startswith("OS::Heat::") or resource_type.endswith(".yaml")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10 web servers only.")
    parser.add_argument(
        "--workers", type=int, default=None, help="Engine worker threads (kiln all's default)."
    )
    args = parser.parse_args()
    sizes = [10] if args.quick else [10, 100]
    results = []
    for latency in (0.0, 0.2):
        with tempfile.TemporaryDirectory() as tmp:
            base = pathlib.Path(tmp)
            config = base / "sandbox.yaml"
            config.write_text(yaml.safe_dump({"latency": {"*": latency}}))
            workers = [] if args.workers is None else ["--workers", str(args.workers)]
            server = start_server(
                base, "--sandbox-config", str(config), *workers, "--max-tasks-per-stack", "0"
            )
            try:
                for count in sizes:
                    results.append(run_case(server, count, latency))
            finally:
                server.stop()
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "cloud.json").write_text(json.dumps(results, indent=2))
    print(
        f"{'servers':>8}{'latency':>9}{'create':>9}{'delete':>9}{'calls/res':>11}"
        f"{'crit.path':>11}{'create/cp':>11}"
    )
    for r in results:
        ratio = r["create_over_critical_path"]
        print(
            f"{r['servers']:>8}{r['latency_s'] * 1000:>7.0f}ms{r['create_s']:>8.2f}s"
            f"{r['delete_s']:>8.2f}s{r['calls_per_resource']:>11.2f}"
            f"{r['critical_path_s']:>10.2f}s{'-' if ratio is None else f'{ratio:.2f}x':>11}"
        )


if __name__ == "__main__":
    main()
