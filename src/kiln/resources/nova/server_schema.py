"""The declared properties and attributes of OS::Nova::Server.

Kept apart from the plugin class because the table is long (reference
resource-types.md section 1, OS::Nova::Server): every name, type, default,
update flag and constraint as the reference lists it. Hidden names
(``admin_user``, ``networks[].uuid``, ``block_device_mapping_v2[].image_id``)
are still accepted; the plugin translates the last two into their new names.
Imports: kiln.schema.
"""

from __future__ import annotations

from kiln.schema.constraints import AllowedValues, CustomConstraint, Length, Range
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType, SupportStatus

T = PropertyType


def _custom(name: str) -> tuple[CustomConstraint]:
    return (CustomConstraint(name=name),)


def _allowed(*values: str) -> tuple[AllowedValues]:
    return (AllowedValues(values),)


_HIDDEN = SupportStatus("HIDDEN")

# The server's own defaults (heat.conf default_user_data_format / _transport).
DEFAULT_USER_DATA_FORMAT = "HEAT_CFNTOOLS"
DEFAULT_TRANSPORT = "POLL_SERVER_CFN"

USER_DATA_FORMATS = ("HEAT_CFNTOOLS", "RAW", "SOFTWARE_CONFIG")
TRANSPORTS = ("POLL_SERVER_CFN", "POLL_SERVER_HEAT", "POLL_TEMP_URL", "ZAQAR_MESSAGE")
VNIC_TYPES = (
    "normal",
    "direct",
    "macvtap",
    "direct-physical",
    "baremetal",
    "virtio-forwarder",
    "smart-nic",
)

BLOCK_DEVICE_MAPPING = PropertySchema(
    T.LIST,
    "Volumes to attach at boot (legacy form); exclusive with block_device_mapping_v2.",
    schema={
        "device_name": PropertySchema(
            T.STRING, "Device name the volume is attached as (vda boots).", required=True
        ),
        "volume_id": PropertySchema(
            T.STRING, "The volume to attach.", constraints=_custom("cinder.volume")
        ),
        "snapshot_id": PropertySchema(
            T.STRING,
            "A snapshot to create the volume from.",
            constraints=_custom("cinder.snapshot"),
        ),
        "volume_size": PropertySchema(T.INTEGER, "Size of the volume in GB."),
        "delete_on_termination": PropertySchema(
            T.BOOLEAN, "Delete the volume when the server is deleted."
        ),
    },
)

BLOCK_DEVICE_MAPPING_V2 = PropertySchema(
    T.LIST,
    "Block devices of the server (volumes, images, snapshots, swap, ephemeral disks).",
    schema={
        "device_name": PropertySchema(T.STRING, "Device name the block device is attached as."),
        "volume_id": PropertySchema(
            T.STRING, "A volume to attach.", constraints=_custom("cinder.volume")
        ),
        "image_id": PropertySchema(
            T.STRING,
            "The image to create the volume from (use image).",
            constraints=_custom("glance.image"),
            support_status=SupportStatus("HIDDEN", message="Use property image."),
        ),
        "image": PropertySchema(
            T.STRING, "The image to create the volume from.", constraints=_custom("glance.image")
        ),
        "snapshot_id": PropertySchema(
            T.STRING,
            "A snapshot to create the volume from.",
            constraints=_custom("cinder.snapshot"),
        ),
        "swap_size": PropertySchema(T.INTEGER, "Size of a swap device in MB."),
        "ephemeral_size": PropertySchema(
            T.INTEGER, "Size of a local ephemeral disk in GB.", constraints=(Range(1, None),)
        ),
        "ephemeral_format": PropertySchema(
            T.STRING,
            "File system of the ephemeral disk.",
            constraints=_allowed("ext2", "ext3", "ext4", "xfs", "ntfs"),
        ),
        "device_type": PropertySchema(
            T.STRING, "Device type of the block device.", constraints=_allowed("cdrom", "disk")
        ),
        "disk_bus": PropertySchema(
            T.STRING,
            "Bus of the block device.",
            constraints=_allowed("ide", "lame_bus", "sata", "scsi", "usb", "virtio"),
        ),
        "boot_index": PropertySchema(T.INTEGER, "Boot order (0 boots)."),
        "volume_size": PropertySchema(T.INTEGER, "Size of the volume in GB."),
        "delete_on_termination": PropertySchema(
            T.BOOLEAN, "Delete the volume when the server is deleted."
        ),
        "volume_type": PropertySchema(
            T.STRING, "Type of the volume to create.", constraints=_custom("cinder.vtype")
        ),
    },
)

PORT_EXTRA_PROPERTIES = PropertySchema(
    T.MAP,
    "Properties of the port Heat creates for this network entry.",
    update_allowed=True,
    schema={
        "value_specs": PropertySchema(
            T.MAP, "Extra port attributes passed as they are.", default={}, update_allowed=True
        ),
        "admin_state_up": PropertySchema(
            T.BOOLEAN, "Administrative state of the port.", default=True, update_allowed=True
        ),
        "mac_address": PropertySchema(
            T.STRING, "MAC address of the port.", constraints=_custom("mac_addr")
        ),
        "allowed_address_pairs": PropertySchema(
            T.LIST,
            "Extra addresses the port may send from.",
            update_allowed=True,
            schema={
                "mac_address": PropertySchema(
                    T.STRING, "MAC address of the pair.", constraints=_custom("mac_addr")
                ),
                "ip_address": PropertySchema(
                    T.STRING,
                    "IP address or CIDR of the pair.",
                    required=True,
                    constraints=_custom("ip_or_cidr"),
                ),
            },
        ),
        "binding:vnic_type": PropertySchema(
            T.STRING,
            "VNIC type of the port.",
            default="normal",
            update_allowed=True,
            constraints=_allowed(*VNIC_TYPES),
        ),
        "port_security_enabled": PropertySchema(
            T.BOOLEAN, "Whether port security is enabled on the port.", update_allowed=True
        ),
        "qos_policy": PropertySchema(
            T.STRING,
            "QoS policy of the port.",
            update_allowed=True,
            constraints=_custom("neutron.qos_policy"),
        ),
        "propagate_uplink_status": PropertySchema(
            T.BOOLEAN, "Propagate the uplink status to the port.", update_allowed=True
        ),
        "no_fixed_ips": PropertySchema(
            T.BOOLEAN, "Create the port without fixed IPs.", default=False, update_allowed=True
        ),
    },
)

NETWORKS = PropertySchema(
    T.LIST,
    "The server's NICs: networks, ports, subnets or automatic allocation.",
    update_allowed=True,
    schema={
        "uuid": PropertySchema(
            T.STRING,
            "The network (use network).",
            constraints=_custom("neutron.network"),
            support_status=SupportStatus("HIDDEN", message="Use property network."),
        ),
        "network": PropertySchema(
            T.STRING, "Name or id of the network.", constraints=_custom("neutron.network")
        ),
        "allocate_network": PropertySchema(
            T.STRING,
            "Let Nova allocate the network (auto) or give the server none (none).",
            update_allowed=True,
            constraints=_allowed("none", "auto"),
        ),
        "fixed_ip": PropertySchema(
            T.STRING, "Fixed IP address of the NIC.", constraints=_custom("ip_addr")
        ),
        "port": PropertySchema(
            T.STRING, "Name or id of an existing port.", constraints=_custom("neutron.port")
        ),
        "port_extra_properties": PORT_EXTRA_PROPERTIES,
        "subnet": PropertySchema(T.STRING, "Subnet the port Heat creates takes its IP from."),
        "floating_ip": PropertySchema(T.STRING, "Id of a floating IP to associate with the NIC."),
        "tag": PropertySchema(T.STRING, "Device tag of the NIC."),
    },
)

SERVER_PROPERTIES: dict[str, PropertySchema] = {
    "name": PropertySchema(T.STRING, "Server name.", update_allowed=True),
    "image": PropertySchema(
        T.STRING,
        "Name or id of the image to boot from.",
        update_allowed=True,
        constraints=_custom("glance.image"),
    ),
    "block_device_mapping": BLOCK_DEVICE_MAPPING,
    "block_device_mapping_v2": BLOCK_DEVICE_MAPPING_V2,
    "flavor": PropertySchema(
        T.STRING,
        "Name or id of the flavor.",
        required=True,
        update_allowed=True,
        constraints=_custom("nova.flavor"),
    ),
    "flavor_update_policy": PropertySchema(
        T.STRING,
        "On a flavor change: resize the server in place, or replace it.",
        default="RESIZE",
        update_allowed=True,
        constraints=_allowed("RESIZE", "REPLACE"),
    ),
    "image_update_policy": PropertySchema(
        T.STRING,
        "On an image change: rebuild the server (keeping ephemeral disks or not), or replace.",
        default="REBUILD",
        update_allowed=True,
        constraints=_allowed("REBUILD", "REPLACE", "REBUILD_PRESERVE_EPHEMERAL"),
    ),
    "key_name": PropertySchema(
        T.STRING, "Name of the key pair to inject.", constraints=_custom("nova.keypair")
    ),
    "admin_user": PropertySchema(
        T.STRING, "Not used by the cloud any more.", support_status=_HIDDEN
    ),
    "availability_zone": PropertySchema(T.STRING, "Availability zone to boot in."),
    "security_groups": PropertySchema(
        T.LIST, "Security groups (names or ids) of the server's ports.", default=[]
    ),
    "networks": NETWORKS,
    "scheduler_hints": PropertySchema(T.MAP, "Hints passed to the scheduler."),
    "metadata": PropertySchema(
        T.MAP,
        "Server metadata (non-string values are sent as JSON).",
        default={},
        update_allowed=True,
    ),
    "user_data_format": PropertySchema(
        T.STRING,
        "How user_data is delivered: HEAT_CFNTOOLS (MIME with Heat parts), RAW (as is), "
        "SOFTWARE_CONFIG (for software deployments).",
        default=DEFAULT_USER_DATA_FORMAT,
        constraints=_allowed(*USER_DATA_FORMATS),
    ),
    "software_config_transport": PropertySchema(
        T.STRING,
        "How the server's agents get their software config metadata.",
        default=DEFAULT_TRANSPORT,
        update_allowed=True,
        constraints=_allowed(*TRANSPORTS),
    ),
    "user_data_update_policy": PropertySchema(
        T.STRING,
        "On a user_data change: replace the server, ignore the change, or rebuild.",
        default="REPLACE",
        update_allowed=True,
        constraints=_allowed("REPLACE", "IGNORE", "REBUILD"),
    ),
    "user_data": PropertySchema(
        T.STRING,
        "User data for the server (a software config id with RAW or SOFTWARE_CONFIG).",
        default="",
        update_allowed=True,
    ),
    "reservation_id": PropertySchema(T.STRING, "Reservation id of the request."),
    "config_drive": PropertySchema(T.BOOLEAN, "Give the server a configuration drive."),
    "diskConfig": PropertySchema(
        T.STRING, "Disk partitioning of the server.", constraints=_allowed("AUTO", "MANUAL")
    ),
    "personality": PropertySchema(
        T.MAP,
        "Files to inject (path -> contents); not supported by modern Nova.",
        default={},
        support_status=SupportStatus("DEPRECATED", message="Use user_data or a config drive."),
    ),
    "admin_pass": PropertySchema(
        T.STRING, "Administrator password of the server.", update_allowed=True
    ),
    "tags": PropertySchema(
        T.LIST,
        "Server tags.",
        update_allowed=True,
        schema=PropertySchema(T.STRING, "A tag."),
    ),
    "deployment_swift_data": PropertySchema(
        T.MAP,
        "Swift container and object of the POLL_TEMP_URL metadata.",
        default={},
        update_allowed=True,
        schema={
            "container": PropertySchema(
                T.STRING, "Container of the metadata object.", constraints=(Length(1, None),)
            ),
            "object": PropertySchema(
                T.STRING, "Name of the metadata object.", constraints=(Length(1, None),)
            ),
        },
    ),
}

SERVER_ATTRIBUTES: dict[str, AttributeSchema] = {
    "name": AttributeSchema("Name of the server.", type=T.STRING),
    "addresses": AttributeSchema(
        "The server's addresses per network (by name and by id), with port and subnets.",
        type=T.MAP,
    ),
    "networks": AttributeSchema(
        "The server's IP addresses per network (by name and by id).", type=T.MAP
    ),
    "first_address": AttributeSchema(
        "The first IP address of the server.", type=T.STRING, support_status=_HIDDEN
    ),
    "instance_name": AttributeSchema("The hypervisor's name of the instance.", type=T.STRING),
    "accessIPv4": AttributeSchema(
        "The server's public IPv4 address.",
        type=T.STRING,
        support_status=SupportStatus("DEPRECATED"),
    ),
    "accessIPv6": AttributeSchema(
        "The server's public IPv6 address.",
        type=T.STRING,
        support_status=SupportStatus("DEPRECATED"),
    ),
    "console_urls": AttributeSchema("Console URLs of the server by console type.", type=T.MAP),
    "tags": AttributeSchema("Tags of the server.", type=T.LIST),
    "os_collect_config": AttributeSchema(
        "Configuration of the server's os-collect-config agent.", type=T.MAP
    ),
}
