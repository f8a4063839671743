"""The simulated Nova (compute 2.1, microversions up to 2.90).

:class:`~kiln.cloud.sandbox.compute.model.ComputeModel` holds the rules and status
machines (servers, flavors, keypairs, server groups, attachments), ``views`` shapes its
documents by microversion, ``app`` serves the REST API and ``adapter`` implements
:class:`kiln.cloud.api.compute.ComputeApi` in-process over the same model.
"""
