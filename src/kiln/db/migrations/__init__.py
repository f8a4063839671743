"""Alembic environment and revisions of the engine schema (run through ``kiln.db.migrate``)."""
