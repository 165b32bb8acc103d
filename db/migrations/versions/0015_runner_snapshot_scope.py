"""runner_snapshot: an index on (scope, seen_at)

The fleet view counts the runners of each scope's latest collection. Snapshots accumulate
with every `parity collect runners` (a fleet polled every ten minutes adds tens of thousands
a day); this index finds a scope's latest collection without reading its history.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02
"""
from alembic import op

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_runner_snapshot_scope_seen', 'runner_snapshot', ['scope', 'seen_at'])


def downgrade() -> None:
    op.drop_index('ix_runner_snapshot_scope_seen', table_name='runner_snapshot')
