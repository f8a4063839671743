"""Tags of an OS::Nova::Server, with the one Kiln adds to find its own server again.

After a crash between the create request and recording the server's id, the
engine asks the plugin to find the server it made; the tag
``kiln-resource=<physical name tail>`` says which one. Nova limits a tag to 60
characters without ``,`` or ``/``, so the tag keeps the end of the physical
name, where its unique short id is. The tag is hidden from the ``tags``
attribute. Imports: kiln.plugin.
"""

from __future__ import annotations

from kiln.plugin.context import ResourceContext

TAG_PREFIX = "kiln-resource="
MAX_TAG = 60


def kiln_tag(ctx: ResourceContext) -> str:
    name = ctx.physical_resource_name().replace(",", "_").replace("/", "_")
    return TAG_PREFIX + name[-(MAX_TAG - len(TAG_PREFIX)) :]


def server_tags(ctx: ResourceContext, tags: list[str] | None) -> list[str]:
    """The tags to set: the user's, then Kiln's own."""
    own = kiln_tag(ctx)
    return [t for t in tags or [] if t != own] + [own]


def user_tags(tags: list[str]) -> list[str]:
    """The tags the user set (Kiln's own left out)."""
    return [t for t in tags if not t.startswith(TAG_PREFIX)]
