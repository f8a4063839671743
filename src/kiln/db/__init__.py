"""Durable state of the convergence engine: tables, migrations, engine set-up, repositories.

``tables`` (with ``types``) holds the schema, ``migrations`` the Alembic history
that creates it and ``migrate`` the programmatic ``upgrade``; ``engine`` the
per-dialect connection settings and the ``read``/``write`` transaction helpers;
``counting`` a statement counter for benchmarks. One module per aggregate holds
the repository functions (``templates``, ``stacks``, ``traversals``, ``tasks``
with ``completion``, ``resources``, ``events``, ``engines``, ``snapshots``); they
take a ``Connection``, are given the time (never the database clock) and return
frozen dataclass records. Imports: stdlib, SQLAlchemy, Alembic and ``kiln.core`` only.
"""
