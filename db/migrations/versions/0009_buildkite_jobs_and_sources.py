"""Buildkite job outcomes and the sync state of each source

`ci_job` gains what a Buildkite job says beyond its state: `exit_status`, `signal_reason`
(an infrastructure kill rather than a test failure), `soft_failed` and `retried_in` (the
job that retried this attempt). `source_sync` records the last sync of each source of
`parity.toml`, so the app can say when each was last synced and whether that worked.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30
"""
from alembic import op
import sqlalchemy as sa


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None

COLUMNS = ('exit_status', 'signal_reason', 'soft_failed', 'retried_in')


# Plain ALTER TABLE on both databases (a batch operation would copy and drop `ci_job` on
# SQLite, and dropping it cascades to every result of the store).
def upgrade() -> None:
    op.add_column('ci_job', sa.Column('exit_status', sa.Integer(), nullable=True))
    op.add_column('ci_job', sa.Column('signal_reason', sa.String(32), nullable=False,
                                      server_default=''))
    op.add_column('ci_job', sa.Column('soft_failed', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    op.add_column('ci_job', sa.Column('retried_in', sa.String(100), nullable=False,
                                      server_default=''))
    op.create_table(
        'source_sync',
        sa.Column('name', sa.String(200), primary_key=True),
        sa.Column('kind', sa.String(32), nullable=False),
        sa.Column('target', sa.String(500), nullable=False, server_default=''),
        sa.Column('last_attempt_at', sa.DateTime(), nullable=False),
        sa.Column('last_success_at', sa.DateTime(), nullable=True),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('message', sa.Text(), nullable=False, server_default=''),
    )


def downgrade() -> None:  # SQLite 3.35 or later drops a column in place
    op.drop_table('source_sync')
    for name in COLUMNS:
        op.execute(f'ALTER TABLE ci_job DROP COLUMN {name}')
