"""runner snapshots for the fleet view

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('runner_snapshot',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('scope', sa.String(length=200), nullable=False),
    sa.Column('runner_id', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('labels', sa.Text(), nullable=False),
    sa.Column('os', sa.String(length=32), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('busy', sa.Boolean(), nullable=False),
    sa.Column('hardware_id', sa.Integer(), nullable=True),
    sa.Column('seen_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['hardware_id'], ['hardware.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('scope', 'runner_id', 'seen_at')
    )
    op.create_index('ix_runner_snapshot_seen', 'runner_snapshot', ['seen_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_runner_snapshot_seen', table_name='runner_snapshot')
    op.drop_table('runner_snapshot')
