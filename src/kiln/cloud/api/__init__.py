"""Typed client interfaces per cloud service, their value types and errors.

One module per service (``compute``, ``network``, ``block_storage``, ``image``,
``load_balancer``, ``alarming``): a ``Protocol`` naming every call the resource plugins
make, and :class:`~kiln.cloud.api.records.Record` value types. Two implementations:
``kiln.cloud.openstack`` (openstacksdk/keystoneauth, any real cloud or the sandbox over
HTTP) and the sandbox's in-process adapter. Imports: stdlib and kiln.core only.
"""
