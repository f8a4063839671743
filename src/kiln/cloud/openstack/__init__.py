"""Cloud clients over openstacksdk and keystoneauth: any real OpenStack, or the sandbox
over HTTP. One module per service implements the Protocol of ``kiln.cloud.api``; REST
calls go through the service's openstacksdk proxy (a keystoneauth adapter), so auth,
the catalog, version discovery and microversion headers are the libraries' own.
Imports: kiln.cloud.api, kiln.core, openstacksdk, keystoneauth1.
"""
