"""Flavors, keypairs and server groups of the compute model."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization

from conftest import DEMO
from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden, MultipleMatches, NotFound
from kiln.cloud.sandbox.compute.adapter import ComputeAdapter
from kiln.cloud.sandbox.compute.model import ComputeModel


def test_seeded_flavors(demo: ComputeAdapter):
    flavors = {f.id: f for f in demo.list_flavors()}
    assert sorted(flavors) == ["1", "2", "3", "4", "5"]
    xlarge = flavors["5"]
    assert (xlarge.name, xlarge.ram, xlarge.vcpus, xlarge.disk) == ("m1.xlarge", 16384, 8, 160)
    assert demo.find_flavor("m1.small").id == "2"


def test_flavor_admin_only_and_duplicates(demo: ComputeAdapter, admin: ComputeAdapter):
    with pytest.raises(Forbidden):
        demo.create_flavor({"name": "f", "ram": 1, "vcpus": 1, "disk": 0})
    made = admin.create_flavor({"name": "f", "ram": 64, "vcpus": 1, "disk": 0, "id": "auto"})
    assert len(made.id) == 36
    with pytest.raises(Conflict):
        admin.create_flavor({"name": "f", "ram": 64, "vcpus": 1})
    with pytest.raises(Conflict):
        admin.create_flavor({"name": "g", "ram": 64, "vcpus": 1, "id": "1"})
    with pytest.raises(BadRequest):
        admin.create_flavor({"name": "h", "ram": 0, "vcpus": 1})
    admin.delete_flavor(made.id)
    with pytest.raises(NotFound):
        admin.get_flavor(made.id)


def test_extra_specs_and_private_access(demo: ComputeAdapter, admin: ComputeAdapter):
    private = admin.create_flavor(
        {"name": "p", "ram": 64, "vcpus": 1, "os-flavor-access:is_public": False}
    )
    with pytest.raises(NotFound):
        demo.get_flavor(private.id)
    admin.add_flavor_access(private.id, DEMO.project_id)
    with pytest.raises(Conflict):
        admin.add_flavor_access(private.id, DEMO.project_id)
    assert admin.get_flavor_access(private.id) == [DEMO.project_id]
    assert demo.get_flavor(private.id).is_public is False
    assert admin.set_flavor_extra_specs(private.id, {"hw:cpu": "2"}) == {"hw:cpu": "2"}
    assert demo.get_flavor(private.id).extra_specs == {"hw:cpu": "2"}
    admin.delete_flavor_extra_spec(private.id, "hw:cpu")
    assert admin.get_flavor_extra_specs(private.id) == {}
    admin.remove_flavor_access(private.id, DEMO.project_id)
    with pytest.raises(NotFound):
        admin.remove_flavor_access(private.id, DEMO.project_id)
    with pytest.raises(NotFound):
        admin.get_flavor_access("1")


def test_generated_keypair_is_real(demo: ComputeAdapter):
    made = demo.create_keypair({"name": "gen"})
    assert made.private_key and made.private_key.startswith("-----BEGIN RSA PRIVATE KEY-----")
    key = serialization.load_pem_private_key(made.private_key.encode(), password=None)
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    assert made.public_key and made.public_key.startswith(public.decode())
    shown = demo.get_keypair("gen")
    assert shown.private_key is None
    assert shown.id == "gen" and shown.fingerprint == made.fingerprint
    assert isinstance(shown.raw["id"], int)


def test_imported_keypair_rules(demo: ComputeAdapter, model: ComputeModel):
    public = demo.create_keypair({"name": "a"}).public_key
    made = demo.create_keypair({"name": "b", "public_key": public})
    assert made.private_key is None and made.type == "ssh"
    with pytest.raises(Conflict):
        demo.create_keypair({"name": "b", "public_key": public})
    with pytest.raises(BadRequest, match="Keypair data is invalid"):
        demo.create_keypair({"name": "c", "public_key": "ssh-rsa garbage"})
    with pytest.raises(BadRequest):
        demo.create_keypair({"name": "bad/name", "public_key": public})
    with pytest.raises(BadRequest):
        model.create_keypair(DEMO, {"name": "d"}, (2, 92))
    assert sorted(k.name for k in demo.list_keypairs()) == ["a", "b"]
    demo.delete_keypair("a")
    with pytest.raises(NotFound):
        demo.delete_keypair("a")


def test_x509_keypair(demo: ComputeAdapter):
    made = demo.create_keypair({"name": "cert", "type": "x509"})
    assert made.type == "x509"
    assert made.public_key and "BEGIN CERTIFICATE" in made.public_key


def test_server_groups_by_microversion(demo: ComputeAdapter, model: ComputeModel):
    group = demo.create_server_group(
        {"name": "g", "policy": "anti-affinity", "rules": {"max_server_per_host": 2}}
    )
    assert group.policies == ["anti-affinity"] and group.rules == {"max_server_per_host": 2}
    with pytest.raises(BadRequest):
        demo.create_server_group(
            {"name": "g", "policy": "affinity", "rules": {"max_server_per_host": 2}}
        )
    with pytest.raises(BadRequest):
        model.create_server_group(DEMO, {"name": "old", "policies": ["soft-affinity"]}, (2, 14))
    old = model.create_server_group(DEMO, {"name": "old", "policies": ["affinity"]}, (2, 1))
    assert old["policy"] == "affinity"
    demo.create_server_group({"name": "old", "policy": "affinity"})
    with pytest.raises(MultipleMatches):
        demo.find_server_group("old")
    demo.delete_server_group(group.id)
    with pytest.raises(NotFound):
        demo.get_server_group(group.id)
