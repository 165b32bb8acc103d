"""Alembic environment: the engine comes from `db.migrate.alembic_config`, never from a file."""
from alembic import context

from parity.db.models import Base
from parity.db.partitions import is_partition

engine = context.config.attributes["engine"]

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        # test_result's partitions are PostgreSQL's, not tables of the models
        include_name=lambda name, kind, parent: not (kind == "table" and is_partition(name)),
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
