"""The convergence engine: plans, durable tasks, workers and stack lifecycle.

Imports: kiln.core, kiln.graph, kiln.schema, kiln.template, kiln.plugin,
kiln.db, kiln.rpc. Plugins are found only through the registry.
"""
