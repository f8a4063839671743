"""Every corpus template validates through the API (POST /validate) against the sandbox,
unless it uses a resource type Kiln does not have yet: those are listed here with the
types they miss, and must fail with exactly those types missing. Templates whose image,
flavor or key pair names are parameters are validated with the sandbox's own fixtures.
docs/corpus.md summarises the list.
"""

from __future__ import annotations

import pathlib
import re
from typing import Any

import pytest
import yaml

from kiln.cli.client.stack_cmds import stack_body
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.assemble import build_cloud
from kiln.cloud.sandbox.connector import SandboxConnector
from kiln.testing.api_harness import MEMBER, ApiHarness, make_api
from tests_support import CORPUS

MANIFEST = yaml.safe_load((CORPUS / "MANIFEST.yaml").read_text())
TEMPLATES: list[dict[str, Any]] = MANIFEST["templates"]
KEY = "kiln-key"
SANDBOX_PARAMETERS = {
    "image": "cirros",
    "image_id": "cirros",
    "flavor": "m1.small",
    "instance_type": "m1.small",
    "key_name": KEY,
}

# Templates that allow only particular images: uploaded to the sandbox first, as a user
# would (``openstack image create``), and passed as parameters.
IMAGES_FOR: dict[str, dict[str, str]] = {
    "heat-templates/hot/F18/NovaInstanceWithCinderVolume_Native.yaml": {
        "image_id": "F18-x86_64-cfntools"
    },
    "heat-templates/hot/F18/WordPress_Native.yaml": {"image_id": "F18-x86_64-cfntools"},
}

# Templates that are invalid for Heat too: path -> (why, the error they must give).
INVALID_FOR_HEAT: dict[str, tuple[str, str]] = {
    "heat-templates/hot/octavia/servers_with_octavia.yaml": (
        "OS::Octavia::HealthMonitor has no max_retries_down property in Heat either "
        "(reference resource-types.md section 5)",
        "Unknown Property max_retries_down",
    ),
    "heat-templates/hot/software-config/example-templates/example-chef-template.yaml": (
        "OS::Heat::StructuredConfig's config is a map; the example gives a list",
        "is not a map",
    ),
}

# Templates using types Kiln has no plugin for yet: path -> the missing types.
MISSING_TYPES: dict[str, tuple[str, ...]] = {
    "heat/etc/heat/templates/AWS_RDS_DBInstance.yaml": (
        "AWS::CloudFormation::WaitCondition",
        "AWS::CloudFormation::WaitConditionHandle",
        "AWS::EC2::Instance",
        "AWS::EC2::SecurityGroup",
    ),
    "heat/heat/tests/templates/WordPress_Single_Instance.template": ("AWS::EC2::Instance",),
    "heat/heat/tests/templates/WordPress_Single_Instance.yaml": ("AWS::EC2::Instance",),
    "heat-templates/cfn/F17/EC2WithEBSSample.template": (
        "AWS::EC2::Instance",
        "AWS::EC2::SecurityGroup",
        "AWS::EC2::Volume",
    ),
    "heat-templates/cfn/F17/HAProxy_Single_Instance.template": ("AWS::EC2::Instance",),
    "heat-templates/cfn/F17/InstanceGroup.template": (
        "AWS::AutoScaling::LaunchConfiguration",
        "OS::Heat::InstanceGroup",
    ),
    "heat-templates/cfn/F17/MySQL_Single_Instance.template": (
        "AWS::CloudFormation::WaitCondition",
        "AWS::CloudFormation::WaitConditionHandle",
        "AWS::EC2::Instance",
    ),
    "heat-templates/cfn/F17/PuppetMaster_Single_Instance.template": (
        "AWS::CloudFormation::WaitCondition",
        "AWS::CloudFormation::WaitConditionHandle",
        "AWS::EC2::Instance",
        "AWS::EC2::SecurityGroup",
        "AWS::IAM::AccessKey",
        "AWS::IAM::User",
    ),
    "heat-templates/cfn/F17/S3_Single_Instance.template": ("AWS::S3::Bucket",),
    "heat-templates/cfn/F17/Swift.template": ("OS::Swift::Container",),
    "heat-templates/cfn/F17/VPN_Service.template": (
        "AWS::EC2::Instance",
        "OS::Neutron::IKEPolicy",
        "OS::Neutron::IPsecPolicy",
        "OS::Neutron::IPsecSiteConnection",
        "OS::Neutron::RouterGateway",
        "OS::Neutron::VPNService",
    ),
    "heat-templates/cfn/F17/WordPress_2_Instances_With_EBS.template": (
        "AWS::EC2::Instance",
        "AWS::EC2::Volume",
        "AWS::EC2::VolumeAttachment",
    ),
    "heat-templates/cfn/F17/WordPress_And_Http.template": ("AWS::EC2::Instance",),
    "heat-templates/cfn/F17/WordPress_Single_Instance.template": ("AWS::EC2::Instance",),
    "heat-templates/cfn/F17/WordPress_Single_Instance.yaml": ("AWS::EC2::Instance",),
    "heat-templates/cfn/F17/WordPress_Single_Instance_With_EBS_EIP.template": (
        "AWS::EC2::EIP",
        "AWS::EC2::EIPAssociation",
        "AWS::EC2::Instance",
        "AWS::EC2::SecurityGroup",
        "AWS::EC2::Volume",
        "AWS::EC2::VolumeAttachment",
    ),
    "heat-templates/cfn/F17/WordPress_Single_Instance_With_HA.yaml": (
        "AWS::CloudFormation::WaitCondition",
        "AWS::CloudFormation::WaitConditionHandle",
        "AWS::EC2::Instance",
        "AWS::IAM::AccessKey",
        "AWS::IAM::User",
        "OS::Heat::HARestarter",
    ),
    "heat-templates/cfn/F17/WordPress_Single_Instance_gold.template": ("AWS::EC2::Instance",),
    "heat-templates/cfn/F17/WordPress_With_RDS.template": (
        "AWS::EC2::Instance",
        "AWS::RDS::DBInstance",
    ),
    "heat-templates/cfn/F17/getting_started.template": ("AWS::EC2::Instance",),
    "heat-templates/cfn/F18/WordPress_Single_Instance.template": ("AWS::EC2::Instance",),
    "heat-templates/cfn/aws_asg.template": (
        "AWS::AutoScaling::AutoScalingGroup",
        "AWS::AutoScaling::LaunchConfiguration",
        "AWS::AutoScaling::ScalingPolicy",
    ),
    "heat-templates/cfn/deb/MultiNode_DevStack.yaml": (
        "AWS::AutoScaling::LaunchConfiguration",
        "AWS::CloudFormation::WaitCondition",
        "AWS::CloudFormation::WaitConditionHandle",
        "AWS::EC2::EIP",
        "AWS::EC2::EIPAssociation",
        "AWS::EC2::Instance",
        "AWS::EC2::SecurityGroup",
        "AWS::IAM::AccessKey",
        "AWS::IAM::User",
        "OS::Heat::InstanceGroup",
    ),
    "heat-templates/cfn/deb/WordPress_Single_Instance_deb.template": ("AWS::EC2::Instance",),
    "heat-templates/hot/F18/WordPress_NoKey.yaml": (
        "AWS::EC2::Instance",
        "AWS::EC2::SecurityGroup",
    ),
    "heat-templates/hot/Windows/IIS_Drupal/IIS_Drupal.yaml": (
        "OS::Heat::WaitCondition",
        "OS::Heat::WaitConditionHandle",
    ),
    "heat-templates/hot/Windows/PuppetAgent/puppet-agent.yaml": (
        "OS::Heat::WaitCondition",
        "OS::Heat::WaitConditionHandle",
    ),
    "heat-templates/hot/asg_of_servers.yaml": (
        "OS::Heat::AutoScalingGroup",
        "OS::Heat::ScalingPolicy",
    ),
    "heat-templates/hot/autoscaling.yaml": (
        "OS::Aodh::GnocchiAggregationByResourcesAlarm",
        "OS::Heat::AutoScalingGroup",
        "OS::Heat::ScalingPolicy",
    ),
    "heat-templates/hot/barbican/container_generic.yaml": (
        "OS::Barbican::GenericContainer",
        "OS::Barbican::Secret",
    ),
    "heat-templates/hot/barbican/secret.yaml": ("OS::Barbican::Secret",),
    "heat-templates/hot/blazar/blazar_host.yaml": ("OS::Blazar::Host",),
    "heat-templates/hot/blazar/blazar_lease.yaml": ("OS::Blazar::Lease",),
    "heat-templates/hot/designate/desginate_domain.yaml": ("OS::Designate::Domain",),
    "heat-templates/hot/designate/desginate_record.yaml": (
        "OS::Designate::Domain",
        "OS::Designate::Record",
    ),
    "heat-templates/hot/instance_group.yaml": (
        "AWS::AutoScaling::LaunchConfiguration",
        "OS::Heat::InstanceGroup",
    ),
    "heat-templates/hot/keystone/keystone.yaml": (
        "OS::Keystone::Group",
        "OS::Keystone::Project",
        "OS::Keystone::Role",
        "OS::Keystone::User",
    ),
    "heat-templates/hot/keystone/keystone_domain.yaml": ("OS::Keystone::Domain",),
    "heat-templates/hot/keystone/keystone_group.yaml": ("OS::Keystone::Group",),
    "heat-templates/hot/keystone/keystone_region.yaml": ("OS::Keystone::Region",),
    "heat-templates/hot/keystone/keystone_updated.yaml": (
        "OS::Keystone::Group",
        "OS::Keystone::Project",
        "OS::Keystone::Role",
        "OS::Keystone::User",
    ),
    "heat-templates/hot/keystone/keystone_user.yaml": ("OS::Keystone::User",),
    "heat-templates/hot/magnum/create_coe_cluster.yaml": (
        "OS::Magnum::Cluster",
        "OS::Magnum::ClusterTemplate",
    ),
    "heat-templates/hot/mistral/templates/autoscaling_using_mistral.yaml": (
        "OS::Heat::AutoScalingGroup",
        "OS::Heat::ScalingPolicy",
        "OS::Mistral::CronTrigger",
        "OS::Mistral::Workflow",
    ),
    "heat-templates/hot/mistral/templates/server_with_ip.yaml": (
        "AWS::EC2::SecurityGroup",
        "OS::Nova::FloatingIP",
        "OS::Nova::FloatingIPAssociation",
    ),
    "heat-templates/hot/monasca/autoscaling.yaml": (
        "OS::Heat::AutoScalingGroup",
        "OS::Heat::ScalingPolicy",
        "OS::Monasca::AlarmDefinition",
        "OS::Monasca::Notification",
    ),
    "heat-templates/hot/neutron/instance_trunk_port.yaml": ("OS::Neutron::Trunk",),
    "heat-templates/hot/nova/host_aggregate.yaml": ("OS::Nova::HostAggregate",),
    "heat-templates/hot/server_with_encrpyted_volume.yaml": ("OS::Cinder::VolumeType",),
    "heat-templates/hot/software-config/example-templates/cirros-example/cirros-hello-world.yaml": (
        "OS::Heat::SoftwareDeployment",
    ),
    "heat-templates/hot/software-config/example-templates/example-ansible-template.yaml": (
        "OS::Heat::SoftwareDeployment",
    ),
    "heat-templates/hot/software-config/example-templates/example-chef-template.yaml": (
        "OS::Heat::StructuredDeployment",
    ),
    "heat-templates/hot/software-config/example-templates/example-config-pristine-image.yaml": (
        "OS::Heat::SoftwareDeployment",
    ),
    "heat-templates/hot/software-config/example-templates/example-kubelet-template.yaml": (
        "OS::Heat::SoftwareDeployment",
    ),
    "heat-templates/hot/software-config/example-templates/example-os-apply-config-plus-cloud-config.yaml": (
        "OS::Heat::StructuredDeployment",
    ),
    "heat-templates/hot/software-config/example-templates/example-os-apply-config.yaml": (
        "OS::Heat::StructuredDeployment",
    ),
    "heat-templates/hot/software-config/example-templates/example-pristine-atomic-tool.yaml": (
        "OS::Heat::StructuredDeployment",
    ),
    "heat-templates/hot/software-config/example-templates/example-puppet-template.yaml": (
        "OS::Heat::SoftwareDeployment",
    ),
    "heat-templates/hot/software-config/example-templates/example-software-deploymentgroup-template.yaml": (
        "OS::Heat::SoftwareDeploymentGroup",
    ),
    "heat-templates/hot/software-config/example-templates/example-ssh-copy-id.yaml": (
        "OS::Heat::SoftwareDeployment",
    ),
    "heat-templates/hot/software-config/example-templates/wordpress/WordPress_software-config_1-instance.yaml": (
        "OS::Heat::SoftwareDeployment",
    ),
    "heat-templates/hot/software-config/example-templates/wordpress/WordPress_software-config_2-instances.yaml": (
        "OS::Heat::SoftwareDeployment",
    ),
    "heat-templates/hot/zun/webapp.yaml": ("OS::Zun::Container",),
    "heat-templates/openshift-origin/F19/hot-template/openshift-scalable-cpu-nbgears/nodeinstance.yaml": (
        "AWS::CloudFormation::WaitCondition",
        "AWS::CloudFormation::WaitConditionHandle",
    ),
    "heat-templates/openshift-origin/F19/hot-template/openshift-scalable-cpu-nbgears/openshift.yaml": (
        "AWS::CloudFormation::WaitCondition",
        "AWS::CloudFormation::WaitConditionHandle",
        "OS::Heat::AutoScalingGroup",
        "OS::Heat::ScalingPolicy",
        "OS::Neutron::RouterGateway",
    ),
    "heat-templates/openshift-origin/F19/hot-template/openshift-scalable-cpu/openshift.yaml": (
        "AWS::CloudFormation::WaitCondition",
        "AWS::CloudFormation::WaitConditionHandle",
        "OS::Heat::AutoScalingGroup",
        "OS::Heat::ScalingPolicy",
        "OS::Neutron::RouterGateway",
    ),
    "heat-templates/openshift-origin/F19/hot-template/openshift-scalable-nbgears/openshift.yaml": (
        "AWS::CloudFormation::WaitCondition",
        "AWS::CloudFormation::WaitConditionHandle",
        "OS::Heat::AutoScalingGroup",
        "OS::Heat::ScalingPolicy",
        "OS::Neutron::RouterGateway",
    ),
    "heat-templates/openshift-origin/F19/hot-template/openshift/openshift.yaml": (
        "AWS::CloudFormation::WaitCondition",
        "AWS::CloudFormation::WaitConditionHandle",
        "OS::Neutron::RouterGateway",
    ),
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> ApiHarness:
    cloud = build_cloud()
    harness = make_api(
        pathlib.Path(tmp_path_factory.mktemp("corpus")), cloud=SandboxConnector(cloud)
    )
    scope = CloudScope(MEMBER.project_id, MEMBER.user_id, frozenset(MEMBER.roles))
    connector = SandboxConnector(cloud)
    connector.client("compute", scope).create_keypair({"name": KEY})
    images = connector.client("image", scope)
    for name in sorted({i for given in IMAGES_FOR.values() for i in given.values()}):
        image = images.create_image(
            {"name": name, "disk_format": "qcow2", "container_format": "bare"}
        )
        images.import_image(image.id, f"https://images.example.org/{name}.qcow2")
    return harness


def _validate(api: ApiHarness, entry: dict[str, Any]) -> Any:
    body = stack_body(
        str(CORPUS / entry["path"]),
        tuple(str(CORPUS / e) for e in entry.get("environment_files", [])),
        (),
    )
    declared = body["template"].get("parameters") or body["template"].get("Parameters") or {}
    given = {**SANDBOX_PARAMETERS, **IMAGES_FOR.get(entry["path"], {})}
    body["parameters"] = {k: v for k, v in given.items() if k in declared}
    return api.client.simulate_post(api.url("/validate"), json=body)


def test_the_lists_name_corpus_templates() -> None:
    paths = {t["path"] for t in TEMPLATES}
    assert set(MISSING_TYPES) <= paths
    assert set(INVALID_FOR_HEAT) <= paths


@pytest.mark.parametrize("entry", TEMPLATES, ids=[t["path"] for t in TEMPLATES])
def test_corpus_template_validates_through_the_api(api: ApiHarness, entry: dict[str, Any]) -> None:
    got = _validate(api, entry)
    path = entry["path"]
    if path in MISSING_TYPES:
        assert got.status_code == 400
        missing = set(
            re.findall(
                r"The Resource Type \(([^)]+)\) could not be found", got.json["error"]["message"]
            )
        )
        assert missing == set(MISSING_TYPES[path])
        return
    if path in INVALID_FOR_HEAT:
        assert got.status_code == 400
        assert INVALID_FOR_HEAT[path][1] in got.json["error"]["message"]
        return
    assert got.status_code == 200, got.json
    assert "Parameters" in got.json
