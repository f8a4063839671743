"""Heat's policy (heat-api.md section 6) on oslo.policy: rule names, defaults, overrides.

``OsloPolicy`` registers every rule Heat has, with Heat's modern defaults
(persona checks: reader, member, admin of the target project, and the
``heat_stack_user`` role for in-instance agents) and, as oslo.policy
"deprecated rules", Heat's legacy defaults. With ``enforce_new_defaults``
false the effective check is "new OR legacy", as in Heat.

Operators change rules in a ``policy.yaml`` (``[oslo_policy] policy_file``);
oslo.policy re-reads it when it changes. The enforcer lives on a private
``oslo_config.cfg.ConfigOpts`` (or the one the caller parsed from its config
file), never on the process-global ``cfg.CONF``.

Two Kiln additions:

- Role implication: Keystone lists implied roles in tokens (an admin token
  carries admin, member and reader), but the no-auth development mode and
  clouds without implied-role rules do not; the check treats admin => member
  => reader itself, so an admin always passes a reader rule.
- ``resource_type_allowed`` for the ``resource_types:<Type>`` rules: admin-only
  types (flavors, quotas, Keystone objects, ...) are hidden from the type list
  and refused in templates for everyone else. Like Heat, a type without a rule
  of its own (exact, or ``<Prefix>::*``) is allowed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from oslo_config import cfg
from oslo_policy import opts as oslo_opts
from oslo_policy import policy as oslo

from kiln.api.context import RequestContext
from kiln.api.faults import Forbidden
from kiln.api.middleware.oslo_conf import private_config
from kiln.api.native.support import Policy
from kiln.core.errors import InternalError

# -- personas (heat-api.md section 6) ------------------------------------------------------
STACK_USER_ROLE = "heat_stack_user"
PROJECT_READER = "role:reader and project_id:%(project_id)s"
PROJECT_MEMBER = "role:member and project_id:%(project_id)s"
PROJECT_ADMIN = "role:admin and project_id:%(project_id)s"
PROJECT_STACK_USER = f"role:{STACK_USER_ROLE} and project_id:%(project_id)s"
PROJECT_READER_OR_STACK_USER = f"({PROJECT_READER}) or ({PROJECT_STACK_USER})"

DENY_STACK_USER = "rule:deny_stack_user"
ALLOW_EVERYBODY = "rule:allow_everybody"
DENY_EVERYBODY = "rule:deny_everybody"

#: The release Heat moved to the persona defaults.
LEGACY_SINCE = "W"
LEGACY_REASON = (
    "The default now checks the reader, member or admin role in the target project "
    "(Keystone's default roles); the legacy default allowed any role but heat_stack_user."
)

BASE_RULES = [
    oslo.RuleDefault(
        "context_is_admin",
        "(role:admin and is_admin_project:True)",
        description="Decides what counts as a cloud administrator.",
    ),
    oslo.RuleDefault("project_admin", "role:admin", description="Admin of any project."),
    oslo.RuleDefault(
        "deny_stack_user",
        f"not role:{STACK_USER_ROLE}",
        description="Anyone but the users Heat creates for in-instance agents.",
    ),
    oslo.RuleDefault("deny_everybody", "!", description="Nobody."),
    oslo.RuleDefault("allow_everybody", "", description="Everybody."),
]

# The rules of the native API, as in heat-api.md section 6. Columns: rule; default
# (a persona above; "none": deny_everybody; "patch": whatever stacks:update_patch
# allows); legacy default ("S": deny_stack_user, "E": allow_everybody, "ADM":
# context_is_admin, "-": none); the method and path it guards ("~" is /v1/{tenant_id},
# "{stack}" and "{res}" the canonical stack and resource URLs).
RULE_TABLE = """
stacks:create                    M     S    POST   ~/stacks
stacks:preview                   R     S    POST   ~/stacks/preview
stacks:index                     R     S    GET    ~/stacks
stacks:global_index              none  -    GET    ~/stacks
stacks:detail                    R     S    GET    ~/stacks/detail
stacks:lookup                    RS    E    GET    ~/stacks/{identity}
stacks:show                      R     S    GET    {stack}
stacks:update                    M     S    PUT    {stack}
stacks:update_patch              M     S    PATCH  {stack}
stacks:update_no_change          patch -    PATCH  {stack}
stacks:preview_update            M     S    PUT    {stack}/preview
stacks:preview_update_patch      M     S    PATCH  {stack}/preview
stacks:delete                    M     S    DELETE {stack}
stacks:abandon                   M     S    DELETE {stack}/abandon
stacks:export                    M     S    GET    {stack}/export
stacks:template                  R     S    GET    {stack}/template
stacks:environment               R     S    GET    {stack}/environment
stacks:files                     R     S    GET    {stack}/files
stacks:list_outputs              R     S    GET    {stack}/outputs
stacks:show_output               R     S    GET    {stack}/outputs/{key}
stacks:snapshot                  M     S    POST   {stack}/snapshots
stacks:list_snapshots            R     S    GET    {stack}/snapshots
stacks:show_snapshot             R     S    GET    {stack}/snapshots/{id}
stacks:delete_snapshot           M     S    DELETE {stack}/snapshots/{id}
stacks:restore_snapshot          M     S    POST   {stack}/snapshots/{id}/restore
stacks:validate_template         M     S    POST   ~/validate
stacks:list_template_versions    R     S    GET    ~/template_versions
stacks:list_template_functions   R     S    GET    ~/template_versions/{v}/functions
stacks:list_resource_types       R     S    GET    ~/resource_types
stacks:resource_schema           R     S    GET    ~/resource_types/{type}
stacks:generate_template         M     S    GET    ~/resource_types/{type}/template
actions:action                   M     S    POST   {stack}/actions
actions:snapshot                 M     S    POST   {stack}/actions
actions:suspend                  M     S    POST   {stack}/actions
actions:resume                   M     S    POST   {stack}/actions
actions:check                    R     S    POST   {stack}/actions
actions:cancel_update            M     S    POST   {stack}/actions
actions:cancel_without_rollback  M     S    POST   {stack}/actions
resource:index                   R     S    GET    {stack}/resources
resource:show                    R     S    GET    {res}
resource:metadata                RS    E    GET    {res}/metadata
resource:signal                  RS    E    POST   {res}/signal
resource:mark_unhealthy          M     S    PATCH  {res}
events:index                     R     S    GET    {stack}/events
events:show                      R     S    GET    {res}/events/{id}
software_configs:index           R     S    GET    ~/software_configs
software_configs:global_index    none  -    GET    ~/software_configs
software_configs:show            R     S    GET    ~/software_configs/{id}
software_configs:create          M     S    POST   ~/software_configs
software_configs:delete          M     S    DELETE ~/software_configs/{id}
software_deployments:index       R     S    GET    ~/software_deployments
software_deployments:show        R     S    GET    ~/software_deployments/{id}
software_deployments:create      M     S    POST   ~/software_deployments
software_deployments:update      M     S    PUT    ~/software_deployments/{id}
software_deployments:delete      M     S    DELETE ~/software_deployments/{id}
software_deployments:metadata    RS    -    GET    ~/software_deployments/metadata/{server}
service:index                    A     ADM  GET    ~/services
build_info:build_info            R     S    GET    ~/build_info
"""

# CloudFormation actions (``POST /v1?Action=<action>``): action, default, legacy default.
CFN_TABLE = """
ListStacks              R   S
DescribeStacks          R   S
DescribeStackEvents     R   S
ValidateTemplate        R   S
GetTemplate             R   S
EstimateTemplateCost    R   S
DescribeStackResources  R   S
ListStackResources      R   S
CreateStack             M   S
DeleteStack             M   S
UpdateStack             M   S
CancelUpdateStack       M   S
DescribeStackResource   RS  E
"""

DEFAULTS = {
    "R": PROJECT_READER,
    "M": PROJECT_MEMBER,
    "A": PROJECT_ADMIN,
    "RS": PROJECT_READER_OR_STACK_USER,
    "none": DENY_EVERYBODY,
    "patch": "rule:stacks:update_patch",
}
LEGACY_DEFAULTS = {
    "-": None,
    "S": DENY_STACK_USER,
    "E": ALLOW_EVERYBODY,
    "ADM": "rule:context_is_admin",
}
_PATHS = {
    "~": "/v1/{tenant_id}",
    "{stack}": "/v1/{tenant_id}/stacks/{stack_name}/{stack_id}",
    "{res}": "/v1/{tenant_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name}",
}


def _path(short: str) -> str:
    for prefix, full in _PATHS.items():
        if short.startswith(prefix):
            return full + short[len(prefix) :]
    return short


def _documented(line: str) -> oslo.DocumentedRuleDefault:
    name, default, legacy, method, path = line.split()
    return _rule(name, default, legacy, method, _path(path), _describe(name))


def _describe(name: str) -> str:
    """``stacks:list_snapshots`` -> "Stacks: list snapshots."."""
    scope, action = name.split(":", 1)
    return f"{scope.replace('_', ' ').capitalize()}: {action.replace('_', ' ')}."


def _cloudformation(line: str) -> oslo.DocumentedRuleDefault:
    action, default, legacy = line.split()
    name = f"cloudformation:{action}"
    return _rule(name, default, legacy, "POST", f"/v1?Action={action}", f"CFN {action}.")


def _rule(
    name: str, default: str, legacy: str, method: str, path: str, description: str
) -> oslo.DocumentedRuleDefault:
    legacy_check = LEGACY_DEFAULTS[legacy]
    deprecated = None
    if legacy_check is not None:
        deprecated = oslo.DeprecatedRule(
            name, legacy_check, deprecated_reason=LEGACY_REASON, deprecated_since=LEGACY_SINCE
        )
    return oslo.DocumentedRuleDefault(
        name=name,
        check_str=DEFAULTS[default],
        description=description,
        operations=[{"method": method, "path": path}],
        deprecated_rule=deprecated,
        scope_types=["project"],
    )


#: Types only a project admin may use (``resource_types:<Type>`` = ``rule:project_admin``).
ADMIN_ONLY_TYPES = (
    "OS::Nova::Flavor",
    "OS::Nova::Quota",
    "OS::Nova::HostAggregate",
    "OS::Cinder::EncryptedVolumeType",
    "OS::Cinder::VolumeType",
    "OS::Cinder::Quota",
    "OS::Cinder::QoSSpecs",
    "OS::Cinder::QoSAssociation",
    "OS::Neutron::Quota",
    "OS::Neutron::ProviderNet",
    "OS::Neutron::QoSPolicy",
    "OS::Neutron::QoSBandwidthLimitRule",
    "OS::Neutron::QoSDscpMarkingRule",
    "OS::Neutron::QoSMinimumBandwidthRule",
    "OS::Neutron::QoSMinimumPacketRateRule",
    "OS::Neutron::Segment",
    "OS::Octavia::Quota",
    "OS::Octavia::Flavor",
    "OS::Octavia::FlavorProfile",
    "OS::Octavia::AvailabilityZone",
    "OS::Octavia::AvailabilityZoneProfile",
    "OS::Manila::ShareType",
    "OS::Keystone::*",
    "OS::Blazar::Host",
)
RESOURCE_TYPE_PREFIX = "resource_types:"

#: A path that cannot exist (/dev/null is not a directory): "no policy file".
NO_POLICY_FILE = "/dev/null/no-policy-file"


def list_rules() -> list[oslo.RuleDefault]:
    """Every rule Kiln registers (what ``oslopolicy-sample-generator`` would list)."""
    rules: list[oslo.RuleDefault] = list(BASE_RULES)
    rules.extend(_documented(line) for line in RULE_TABLE.strip().splitlines())
    rules.extend(_cloudformation(line) for line in CFN_TABLE.strip().splitlines())
    rules.extend(
        oslo.RuleDefault(
            RESOURCE_TYPE_PREFIX + type_name,
            "rule:project_admin",
            description=f"Use {type_name} in templates.",
        )
        for type_name in ADMIN_ONLY_TYPES
    )
    return rules


# -- credentials ----------------------------------------------------------------------------
_IMPLIED_ROLES = {"admin": ("member", "reader"), "member": ("reader",)}


def implied_roles(roles: Iterable[str]) -> list[str]:
    """``roles`` plus what Keystone's default role implications add (admin => member => reader)."""
    found = list(roles)
    seen = {r.lower() for r in found}
    for role in list(found):
        for implied in _IMPLIED_ROLES.get(role.lower(), ()):
            if implied not in seen:
                seen.add(implied)
                found.append(implied)
    return found


def credentials(ctx: RequestContext) -> dict[str, Any]:
    """What the rules are checked against, shaped like oslo.context's policy values.

    The context's ``domain_id`` is the user's and project's domain; oslo.policy
    reads a ``domain_id`` credential as a *domain-scoped* token (and refuses it
    project-scoped rules), so it is passed as the user and project domain.
    """
    return {
        "user_id": ctx.user_id,
        "project_id": ctx.project_id,
        "roles": implied_roles(ctx.roles),
        "is_admin": ctx.is_admin,
        "is_admin_project": ctx.is_admin_project,
        "user_domain_id": ctx.domain_id,
        "project_domain_id": ctx.domain_id,
        "system_scope": None,
    }


# -- the enforcer ---------------------------------------------------------------------------
class OsloPolicy(Policy):
    """The ``Policy`` routes call, on oslo.policy with Heat's rules.

    ``policy_file``: a YAML (or JSON) file of overrides; None reads the
    ``[oslo_policy] policy_file`` of ``conf`` when a conf is given, and no file
    at all otherwise. ``enforce_new_defaults``: None keeps the configured value
    (oslo.policy's default: True).
    """

    def __init__(
        self,
        *,
        policy_file: str | os.PathLike[str] | None = None,
        enforce_new_defaults: bool | None = None,
        conf: cfg.ConfigOpts | None = None,
    ) -> None:
        path: str | None = None
        if policy_file is not None:
            path = os.path.abspath(os.fspath(policy_file))
            if not os.path.exists(path):
                raise FileNotFoundError(f"policy file {path} does not exist")
        if conf is None:
            conf = private_config()
            # No file unless one is named: oslo.policy would otherwise search
            # ~/.kiln, ~, /etc/kiln and /etc for policy.yaml and policy.d.
            conf.register_opts(oslo_opts.list_opts()[0][1], group="oslo_policy")
            conf.set_override("policy_dirs", [], group="oslo_policy")
            path = path or NO_POLICY_FILE
        self.conf = conf
        self._enforcer = oslo.Enforcer(self.conf, policy_file=path)
        if enforce_new_defaults is not None:
            self.conf.set_override(
                "enforce_new_defaults", enforce_new_defaults, group="oslo_policy"
            )
        # With legacy defaults on, oslo.policy warns once per rule through the
        # warnings module; Heat silences it too (the deprecation is documented above).
        self._enforcer.suppress_deprecation_warnings = True
        self._enforcer.register_defaults(list_rules())
        self._lock = threading.Lock()

    @property
    def enforcer(self) -> oslo.Enforcer:
        return self._enforcer

    def allowed(
        self, rule: str, context: RequestContext, target: Mapping[str, Any] | None = None
    ) -> bool:
        """Whether ``context`` may use ``rule``; an unregistered rule is a bug (raises)."""
        scope = dict(target) if target is not None else {"project_id": context.project_id}
        with self._lock:  # load_rules re-reads a changed policy file; one thread at a time
            try:
                return bool(self._enforcer.authorize(rule, scope, credentials(context)))
            except oslo.InvalidScope:
                return False
            except oslo.PolicyNotRegistered:
                raise InternalError(f"no policy rule named {rule}") from None

    def enforce(
        self, rule: str, context: RequestContext, target: dict[str, Any] | None = None
    ) -> None:
        if not self.allowed(rule, context, target):
            raise Forbidden(rule)

    def denied_resource_types(self, context: RequestContext) -> tuple[str, ...]:
        """Every type (or ``Prefix::*``) a ``resource_types:`` rule denies ``context``."""
        with self._lock:
            self._enforcer.load_rules()
            names = [
                rule[len(RESOURCE_TYPE_PREFIX) :]
                for rule in self._enforcer.rules
                if rule.startswith(RESOURCE_TYPE_PREFIX)
            ]
        return tuple(sorted(n for n in names if not self._type_rule_allows(n, context)))

    def _type_rule_allows(self, name: str, context: RequestContext) -> bool:
        with self._lock:
            return bool(
                self._enforcer.enforce(
                    RESOURCE_TYPE_PREFIX + name,
                    {"project_id": context.project_id},
                    credentials(context),
                )
            )

    def resource_type_allowed(self, type_name: str, context: RequestContext) -> bool:
        """Whether ``context`` may use ``type_name`` (``resource_types:<Type>``, then
        ``resource_types:<Prefix>::*``); a type no rule names is allowed. A refusal is
        reported as Heat does: ``Forbidden(type_name)``, "You are not authorized to use
        OS::Nova::Flavor."."""
        wildcard = "::".join([*type_name.split("::")[:-1], "*"])
        for name in (type_name, wildcard):
            rule = RESOURCE_TYPE_PREFIX + name
            with self._lock:
                self._enforcer.load_rules()
                known = rule in self._enforcer.rules
                if known and not self._enforcer.enforce(
                    rule, {"project_id": context.project_id}, credentials(context)
                ):
                    return False
        return True

    def reload(self) -> None:
        """Read the policy file again now (it is also re-read when it changes)."""
        with self._lock:
            self._enforcer.load_rules(force_reload=True)
