"""Scaled-out Kiln against the real services: two ``kiln api``, three ``kiln engine`` and
one ``kiln sandbox`` as subprocesses, on RabbitMQ and on PostgreSQL, then MariaDB.

The scenarios share one cluster per database and run in file order (the engine killed
in one is restarted there): a 300-resource stack spread over every engine; ``kill -9``
of an engine in mid-create (taken over within lease + sweep, nothing created twice, a
restarted engine joins in); RabbitMQ stopped and started mid-traversal; every database
connection cut mid-traversal; two updates racing; 20 concurrent creates and deletes
from 4 projects. Driven with openstacksdk, the client Ansible and others use.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import sqlalchemy as sa

from kiln.testing.cluster import Cluster, fresh_database

LEASE = 4.0
SWEEP = 1.0  # the heartbeat interval: each engine sweeps expired leases that often
# servers stay in BUILD this long, and each create call takes this long, so an engine
# can be killed while it holds one
pytestmark = [
    # openstacksdk's own internals warn about themselves
    pytest.mark.filterwarnings("ignore::openstack.warnings.RemovedInSDK50Warning"),
    pytest.mark.filterwarnings("ignore::openstack.warnings.OpenStackDeprecationWarning"),
    pytest.mark.timeout(600),
]
SANDBOX = {"delays": {"compute.server.create": 2.0}, "latency": {"compute.create_server": 0.5}}


@pytest.fixture(scope="module", params=["postgresql", "mariadb"])
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    work = tmp_path_factory.mktemp(f"cluster-{request.param}")
    with fresh_database(request.param, work) as url:
        running = Cluster(
            work,
            url,
            apis=2,
            engines=3,
            lease_seconds=LEASE,
            heartbeat_interval=SWEEP,
            sandbox_config=SANDBOX,
        ).start()
        try:
            yield running
        finally:
            running.stop()


# -- helpers ---------------------------------------------------------------------------------
def wait_for(cluster: Cluster, what: str, check: Callable[[], Any], timeout: float = 180) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{cluster.logs()}")
        time.sleep(0.2)


def stack_status(cluster: Cluster, stack_id: str) -> tuple[str, str]:
    """(action_status, reason) straight from the database (works while the bus is down)."""
    with cluster.database().connect() as conn:
        row = conn.execute(
            sa.text("SELECT action, status, status_reason FROM stack WHERE id = :id"),
            {"id": stack_id},
        ).one()
    return f"{row.action}_{row.status}", row.status_reason


def wait_done(cluster: Cluster, stack_id: str, timeout: float = 180) -> str:
    def finished() -> str | None:
        status, reason = stack_status(cluster, stack_id)
        return None if status.endswith("IN_PROGRESS") else f"{status}: {reason}"

    return str(wait_for(cluster, f"stack {stack_id}", finished, timeout))


def sql(cluster: Cluster, query: str, **params: Any) -> list[Any]:
    with cluster.database().connect() as conn:
        return list(conn.execute(sa.text(query), params))


def live_engines(cluster: Cluster) -> set[str]:
    cutoff = f"{LEASE + 2 * SWEEP}"
    rows = sql(cluster, "SELECT id, heartbeat_at FROM engine")
    newest = max(r.heartbeat_at for r in rows)
    return {r.id for r in rows if (newest - r.heartbeat_at).total_seconds() <= float(cutoff)}


def owners_of(cluster: Cluster, root_stack_id: str) -> collections.Counter[str]:
    rows = sql(
        cluster,
        "SELECT lease_owner, COUNT(*) AS n FROM node_task WHERE root_stack_id = :root "
        "AND lease_owner IS NOT NULL GROUP BY lease_owner",
        root=root_stack_id,
    )
    return collections.Counter({r.lease_owner: r.n for r in rows})


def waits_template(groups: int, members: int, seconds: float, value: str = "v") -> dict[str, Any]:
    """``groups`` nested ResourceGroups of ``members`` TestResources that wait on create."""
    member = {
        "type": "OS::Heat::TestResource",
        "properties": {"value": value, "action_wait_secs": {"create": seconds}},
    }
    inner = {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": members, "resource_def": member},
    }
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "outer": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {"count": groups, "resource_def": inner},
            }
        },
    }


def chain_template(stages: int, members: int, seconds: float) -> dict[str, Any]:
    """``stages`` groups of waiting TestResources, each after the one before."""
    resources: dict[str, Any] = {}
    for i in range(stages):
        member = {"type": "OS::Heat::TestResource", "properties": {"wait_secs": seconds}}
        resources[f"stage{i}"] = {
            "type": "OS::Heat::ResourceGroup",
            "properties": {"count": members, "resource_def": member},
            **({"depends_on": [f"stage{i - 1}"]} if i else {}),
        }
    return {"heat_template_version": "2018-08-31", "resources": resources}


def servers_template(count: int) -> dict[str, Any]:
    resources: dict[str, Any] = {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {"network": {"get_resource": "net"}, "cidr": "10.20.0.0/24"},
        },
    }
    for i in range(count):
        resources[f"server{i}"] = {
            "type": "OS::Nova::Server",
            "properties": {
                "image": "cirros",
                "flavor": "m1.tiny",
                "networks": [{"network": {"get_resource": "net"}}],
            },
            "depends_on": ["subnet"],
        }
    return {"heat_template_version": "2018-08-31", "resources": resources}


def create(conn: Any, name: str, template: dict[str, Any]) -> str:
    return str(conn.orchestration.create_stack(name=name, template=template).id)


# -- scenarios -------------------------------------------------------------------------------
def test_300_resources_spread_over_every_engine(cluster: Cluster) -> None:
    conn = cluster.connect(api=0)
    stack_id = create(conn, "big", waits_template(groups=6, members=50, seconds=1))
    assert wait_done(cluster, stack_id).startswith("CREATE_COMPLETE")
    made = sql(
        cluster,
        "SELECT COUNT(*) AS n FROM resource WHERE root_stack_id = :root "
        "AND type = 'OS::Heat::TestResource' AND status = 'COMPLETE'",
        root=stack_id,
    )
    assert made[0].n == 300
    owners = owners_of(cluster, stack_id)
    assert set(owners) == live_engines(cluster), owners
    assert len(owners) == 3
    # the API on the other host sees the same stack
    other = cluster.connect(api=1)
    assert other.orchestration.get_stack(stack_id).status == "CREATE_COMPLETE"


def test_engine_killed_mid_create_is_taken_over(cluster: Cluster) -> None:
    conn = cluster.connect(api=1)
    stack_id = create(conn, "killed", servers_template(12))

    def busy_engine() -> tuple[str, list[str]] | None:
        rows = sql(
            cluster,
            "SELECT lease_owner, node_key FROM node_task WHERE root_stack_id = :root "
            "AND state = 'CLAIMED' AND resource_name LIKE 'server%'",
            root=stack_id,
        )
        if not rows:
            return None
        victim = collections.Counter(r.lease_owner for r in rows).most_common(1)[0][0]
        return victim, [r.node_key for r in rows if r.lease_owner == victim]

    victim, held = wait_for(cluster, "an engine making a server", busy_engine)
    process = next(
        p for p in cluster.engine_processes if engine_id_of(p.log_path.read_text()) == victim
    )
    process.kill()  # SIGKILL: no clean-up of any kind
    killed_at = time.monotonic()

    def taken_over() -> bool:
        rows = sql(
            cluster,
            "SELECT node_key FROM node_task WHERE root_stack_id = :root "
            "AND state = 'CLAIMED' AND lease_owner = :victim",
            root=stack_id,
            victim=victim,
        )
        return not {r.node_key for r in rows} & set(held)

    wait_for(cluster, "the killed engine's tasks to be handed back", taken_over)
    takeover = time.monotonic() - killed_at
    # the lease runs out, then the next sweep of a live engine hands it back (plus polling)
    assert takeover <= LEASE + SWEEP + 2.0, takeover

    assert wait_done(cluster, stack_id).startswith("CREATE_COMPLETE")
    project = conn.current_project_id
    creates = [
        c
        for c in cluster.cloud_calls("compute", "create_server")
        if c["project_id"] == project and c["fault"] is None
    ]
    per_origin = collections.Counter(c["origin"] for c in creates)
    assert len(per_origin) == 12
    assert set(per_origin.values()) == {1}, per_origin  # no server was created twice
    assert len(list(conn.compute.servers())) == 12

    # a restarted engine joins in: it takes work of the next stack
    fresh = cluster.start_engine()
    newcomer = engine_id_of(fresh.log_path.read_text())
    wait_for(cluster, "the new engine's heartbeat", lambda: newcomer in live_engines(cluster))
    second = create(conn, "after-restart", waits_template(groups=3, members=50, seconds=0.5))
    assert wait_done(cluster, second).startswith("CREATE_COMPLETE")
    assert newcomer in owners_of(cluster, second), owners_of(cluster, second)


def engine_id_of(log: str) -> str:
    match = re.search(r"engine (\S+) serving topic", log)
    assert match, log
    return match.group(1)


def test_bus_restart_mid_traversal(cluster: Cluster) -> None:
    conn = cluster.connect(api=0)
    stack_id = create(conn, "bus", chain_template(stages=4, members=25, seconds=1.5))
    wait_for(cluster, "the first stage done", lambda: stage_done(cluster, stack_id, "stage0"))
    rabbitmqctl("stop_app")
    try:
        time.sleep(3)
        assert stack_status(cluster, stack_id)[0] == "CREATE_IN_PROGRESS"
    finally:
        rabbitmqctl("start_app")
    # the database is the queue: the traversal goes on; the bus only wakes engines
    assert wait_done(cluster, stack_id).startswith("CREATE_COMPLETE")
    # and calls through the bus work again once it is back
    found = wait_for(cluster, "the API over the bus", lambda: _try_get(conn, stack_id), 90)
    assert found == "CREATE_COMPLETE"


def stage_done(cluster: Cluster, stack_id: str, name: str) -> bool:
    rows = sql(
        cluster,
        "SELECT status FROM resource WHERE stack_id = :s AND name = :n",
        s=stack_id,
        n=name,
    )
    return bool(rows) and rows[-1].status == "COMPLETE"


def _try_get(conn: Any, stack_id: str) -> str | None:
    try:
        return str(conn.orchestration.get_stack(stack_id).status)
    except Exception:
        return None


def rabbitmqctl(command: str) -> None:
    subprocess.run(["rabbitmqctl", "-q", command], check=True, timeout=120, capture_output=True)


def test_database_connections_cut_mid_traversal(cluster: Cluster) -> None:
    conn = cluster.connect(api=1)
    stack_id = create(conn, "dbcut", chain_template(stages=3, members=25, seconds=1))
    wait_for(cluster, "the traversal to start", lambda: owners_of(cluster, stack_id))
    cut = 0
    for _ in range(3):
        cut += cut_connections(cluster)
        time.sleep(0.7)
    assert cut > 0
    assert wait_done(cluster, stack_id).startswith("CREATE_COMPLETE")
    assert len([p for p in cluster.engine_processes if p.alive]) == 3  # none died of it


def cut_connections(cluster: Cluster) -> int:
    """Terminate every connection of every process to the cluster's database."""
    url = sa.engine.make_url(cluster.database_url)
    name = url.database
    admin_url = url.set(database="postgres" if url.get_backend_name() == "postgresql" else "")
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as db:
            if url.get_backend_name() == "postgresql":
                rows = db.execute(
                    sa.text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = :name AND pid <> pg_backend_pid()"
                    ),
                    {"name": name},
                ).all()
                return len(rows)
            ids = db.execute(
                sa.text(
                    "SELECT id FROM information_schema.processlist "
                    "WHERE db = :name AND id <> CONNECTION_ID()"
                ),
                {"name": name},
            ).scalars()
            killed = 0
            for pid in ids:
                try:
                    db.execute(sa.text(f"KILL CONNECTION {int(pid)}"))
                    killed += 1
                except sa.exc.DBAPIError:  # gone by itself meanwhile
                    pass
            return killed
    finally:
        admin.dispose()


def test_racing_updates_the_later_wins(cluster: Cluster) -> None:
    first_api, second_api = cluster.connect(api=0), cluster.connect(api=1)
    stack_id = create(first_api, "race", waits_template(groups=2, members=10, seconds=1, value="0"))
    assert wait_done(cluster, stack_id).startswith("CREATE_COMPLETE")

    # one after the other, the second while the first is still converging
    first_api.orchestration.update_stack(
        stack_id, template=waits_template(groups=3, members=10, seconds=1, value="one")
    )
    later = waits_template(groups=1, members=5, seconds=0.2, value="two")
    second_api.orchestration.update_stack(stack_id, template=later)
    assert wait_done(cluster, stack_id).startswith("UPDATE_COMPLETE")
    assert (
        first_api.orchestration.get_stack_template(stack_id).to_dict()["resources"]
        == (later["resources"])
    )
    assert member_values(cluster, stack_id) == ["two"] * 5

    # at the same moment, through both APIs: both are accepted; one supersedes the other
    templates = [
        waits_template(groups=2, members=4, seconds=0.2, value="left"),
        waits_template(groups=1, members=3, seconds=0.2, value="right"),
    ]
    start = threading.Barrier(2)

    def send(i: int) -> None:
        api = (first_api, second_api)[i]
        start.wait()
        api.orchestration.update_stack(stack_id, template=templates[i])

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(send, range(2)))
    assert wait_done(cluster, stack_id).startswith("UPDATE_COMPLETE")
    final = first_api.orchestration.get_stack_template(stack_id).to_dict()["resources"]
    winner = next(t for t in templates if t["resources"] == final)
    value = winner["resources"]["outer"]["properties"]["resource_def"]["properties"][
        "resource_def"
    ]["properties"]["value"]
    count = 8 if value == "left" else 3
    assert member_values(cluster, stack_id) == [value] * count


def member_values(cluster: Cluster, root_stack_id: str) -> list[str]:
    """The ``value`` of every live TestResource of the stack tree."""
    rows = sql(
        cluster,
        "SELECT r.properties FROM resource r JOIN stack s ON s.id = r.stack_id "
        "WHERE r.root_stack_id = :root AND r.type = 'OS::Heat::TestResource' "
        "AND s.deleted_at IS NULL AND r.status = 'COMPLETE' AND r.action <> 'DELETE'",
        root=root_stack_id,
    )
    values = []
    for row in rows:
        props = row.properties
        if isinstance(props, str):
            props = json.loads(props)
        values.append(props["value"])
    return sorted(values)


def test_load_from_four_projects(cluster: Cluster) -> None:
    projects = [cluster.add_project(f"load{i}") for i in range(4)]
    conns = [
        cluster.connect(api=i % 2, user=p["user"], project=p["project"], password=p["password"])
        for i, p in enumerate(projects)
    ]
    jobs = [(i, j) for i in range(4) for j in range(5)]
    projects_of = [conn.current_project_id for conn in conns]
    template = servers_template(1)
    template["resources"]["names"] = {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": 5, "resource_def": {"type": "OS::Heat::RandomString"}},
    }
    # each server's agent gets a stack user: Keystone through the engines' stack domain admin
    template["resources"]["server0"]["properties"].update(
        user_data_format="SOFTWARE_CONFIG", software_config_transport="POLL_SERVER_HEAT"
    )
    admin = cluster.connect(user="admin", project="admin")
    stack_domain = admin.identity.find_domain("heat", ignore_missing=False)

    def stack_users() -> tuple[list[str], list[str]]:
        projects = admin.identity.projects(domain_id=stack_domain.id)
        users = admin.identity.users(domain_id=stack_domain.id)
        return sorted(p.name for p in projects), sorted(u.name for u in users)

    def make(job: tuple[int, int]) -> str:
        i, j = job
        return create(conns[i], f"load-{i}-{j}", template)

    with ThreadPoolExecutor(20) as pool:
        ids = list(pool.map(make, jobs))
    outcomes = [wait_done(cluster, stack_id) for stack_id in ids]
    assert [o for o in outcomes if not o.startswith("CREATE_COMPLETE")] == []
    for i, conn in enumerate(conns):
        names = sorted(s.name for s in conn.orchestration.stacks())
        assert names == [f"load-{i}-{j}" for j in range(5)]  # only its own stacks
        assert len(list(conn.compute.servers())) == 5
    projects, users = stack_users()
    assert projects == sorted(
        f"{projects_of[i]}-{stack_id}"[:64] for (i, _j), stack_id in zip(jobs, ids, strict=True)
    )
    assert len(users) == 21  # a user per server, and the domain's admin

    def remove(job: tuple[tuple[int, int], str]) -> None:
        (i, _j), stack_id = job
        conns[i].orchestration.delete_stack(stack_id)

    with ThreadPoolExecutor(20) as pool:
        list(pool.map(remove, zip(jobs, ids, strict=True)))
    outcomes = [wait_done(cluster, stack_id) for stack_id in ids]
    assert [o for o in outcomes if not o.startswith("DELETE_COMPLETE")] == []
    for conn in conns:
        assert list(conn.orchestration.stacks()) == []
        assert list(conn.compute.servers()) == []
        assert list(conn.network.ports(project_id=conn.current_project_id)) == []
        assert list(conn.network.networks(project_id=conn.current_project_id)) == []
    # the stacks' users went with them; a project goes just after its stack's last step
    wait_for(
        cluster,
        "the stack-user projects to go",
        lambda: stack_users() == ([], ["heat_domain_admin"]),
        timeout=30,
    )
    stuck = sql(
        cluster,
        "SELECT COUNT(*) AS n FROM node_task t JOIN traversal v ON v.id = t.traversal_id "
        "WHERE v.state = 'RUNNING'",
    )
    assert stuck[0].n == 0
