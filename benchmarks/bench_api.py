"""End-to-end benchmark: ``kiln all`` driven over HTTP by ../shared/bench/bench_stack.py.

Starts ``kiln all`` (Keystone auth, SQLite, 4 engine workers) on free ports,
gets a token for the demo project, runs the shared client's suites and prints
each median beside real Heat's figures from ../shared/bench/anchors.md.

    .venv/bin/python benchmarks/bench_api.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from kiln.testing.kiln_process import start_server

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH_STACK = ROOT.parent / "shared" / "bench" / "bench_stack.py"

#: case -> (stock Heat, Heat without its 1 s leaf sleep), from anchors.md; None: not given
HEAT = {
    "get-list": ("94 ms", "-"),
    "get-show": ("21 ms", "-"),
    "random-100": ("100.7 s", "10.3 s"),
    "random-1000": ("~1000 s", "188 s"),
    "random-delete-100": ("99.7 s", "8.9 s"),
    "chain-100": ("7.9 s", "5.5 s"),
    "chain-delete-100": ("5.7 s", "3.8 s"),
    "wait1s-100": ("102.7 s", "6.9 s"),
    "wait1s-1000": ("-", "-"),
    "validate-1000": ("2.65 s", "-"),
}


def _token(server) -> tuple[str, str]:
    auth = server.cloud("kiln-demo")["auth"]
    plugin = v3.Password(
        auth_url=server.auth_url,
        username="demo",
        password=auth["password"],
        project_name="demo",
        user_domain_id="default",
        project_domain_id="default",
    )
    sess = ks_session.Session(auth=plugin)
    return sess.get_token(), sess.get_project_id()


def _run_suite(url: str, token: str, out: pathlib.Path, *args: str) -> dict:
    command = [
        sys.executable,
        str(BENCH_STACK),
        "--url",
        url,
        "--token",
        token,
        "--out",
        str(out),
        "--repeat",
        "2",
        *args,
    ]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def _medians(results: dict) -> dict[str, float]:
    found: dict[str, float] = {}
    for case in results.get("cases", []):
        name, median = str(case.get("case")), case.get("median_s")
        if median is None:
            continue
        key = name if name.startswith("get-") else f"{name}-{case.get('n')}"
        found[key] = float(median)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="Small sizes only.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = pathlib.Path(tmp)
        server = start_server(base)
        try:
            token, project = _token(server)
            url = f"{server.api_url}/v1/{project}"
            random_sizes = "100" if args.quick else "100,1000"
            wait_sizes = "100" if args.quick else "100,1000"
            results = _run_suite(
                url,
                token,
                base / "results.json",
                "--suite",
                "latency,validate,chain,wait,random",
                "--random-sizes",
                random_sizes,
                "--chain-sizes",
                "100",
                "--wait-sizes",
                wait_sizes,
                "--validate-sizes",
                "1000",
                "--latency-stacks",
                "50",
                "--latency-requests",
                "200",
            )
        finally:
            server.stop()
    (ROOT / "benchmarks" / "results").mkdir(exist_ok=True)
    (ROOT / "benchmarks" / "results" / "api.json").write_text(json.dumps(results, indent=2))
    medians = _medians(results)
    print(f"{'case':<22}{'Kiln':>12}{'Heat':>12}{'Heat no sleep':>16}")
    for name, value in sorted(medians.items()):
        shown = f"{value * 1000:.1f} ms" if name.startswith("get-") else f"{value:.2f} s"
        stock, no_sleep = HEAT.get(name, ("-", "-"))
        print(f"{name:<22}{shown:>12}{stock:>12}{no_sleep:>16}")


if __name__ == "__main__":
    main()
