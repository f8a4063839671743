"""The resource-type catalogue the command line validates with.

Types with a plugin are checked in full (properties, attributes). Types Heat
has but Kiln has no plugin for yet (other services' types, and the OS::Heat
types still to come) are accepted unchecked, so real templates validate
today; any other name is an error, as in Heat. The list shrinks as plugins
arrive.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kiln.cli.global_environment import packaged_global_environment
from kiln.plugin.registry import PluginRegistry
from kiln.schema.resource_types import GlobalEnvironment, ResourceType, UncheckedType

#: Namespaces of services whose resource types have no plugin yet.
UNCHECKED_NAMESPACES = (
    "AWS::",
    "OS::Aodh::",
    "OS::Barbican::",
    "OS::Blazar::",
    "OS::Ceilometer::",
    "OS::Cinder::",
    "OS::Designate::",
    "OS::Glance::",
    "OS::Keystone::",
    "OS::Magnum::",
    "OS::Manila::",
    "OS::Mistral::",
    "OS::Monasca::",
    "OS::Neutron::",
    "OS::Nova::",
    "OS::Octavia::",
    "OS::Sahara::",
    "OS::Senlin::",
    "OS::Swift::",
    "OS::Trove::",
    "OS::Vitrage::",
    "OS::Zaqar::",
    "OS::Zun::",
)

#: Heat's own types that have no plugin yet.
UNCHECKED_HEAT_TYPES = frozenset(
    {
        "OS::Heat::AccessPolicy",
        "OS::Heat::AutoScalingGroup",
        "OS::Heat::DeployedServer",
        "OS::Heat::HARestarter",
        "OS::Heat::InstanceGroup",
        "OS::Heat::ScalingPolicy",
        "OS::Heat::SoftwareComponent",
        "OS::Heat::SoftwareDeployment",
        "OS::Heat::SoftwareDeploymentGroup",
        "OS::Heat::SoftwareDeployments",
        "OS::Heat::StructuredDeployment",
        "OS::Heat::StructuredDeploymentGroup",
        "OS::Heat::StructuredDeployments",
        "OS::Heat::SwiftSignal",
        "OS::Heat::SwiftSignalHandle",
        "OS::Heat::UpdateWaitConditionHandle",
        "OS::Heat::WaitCondition",
        "OS::Heat::WaitConditionHandle",
    }
)


@dataclass(frozen=True)
class CommandLineTypes:
    """Plugins first; known-but-not-yet-implemented types unchecked; the rest unknown."""

    registry: PluginRegistry
    checked: bool = True

    @property
    def global_environment(self) -> GlobalEnvironment:
        return self.registry.global_environment

    def get(self, type_name: str) -> ResourceType | None:
        found = self.registry.get(type_name)
        if found is not None:
            return found
        if type_name in UNCHECKED_HEAT_TYPES or type_name.startswith(UNCHECKED_NAMESPACES):
            return UncheckedType(type_name, implementation="NotYetImplemented")
        return None


@functools.cache
def command_line_types() -> CommandLineTypes:
    """The catalogue, discovered once per process, with Kiln's global environment."""
    return CommandLineTypes(
        PluginRegistry.discover(global_environment=packaged_global_environment())
    )
