"""GitHub sync state: artifact archives, synced runs, checkpoints, ETags

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('http_validator',
    sa.Column('url', sa.String(length=1000), nullable=False),
    sa.Column('etag', sa.String(length=200), nullable=False),
    sa.Column('next_url', sa.String(length=1000), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('url')
    )
    op.create_table('sync_checkpoint',
    sa.Column('scope', sa.String(length=500), nullable=False),
    sa.Column('covered_from', sa.DateTime(), nullable=False),
    sa.Column('tail_start', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('scope')
    )
    op.create_table('synced_run',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('ci_system', sa.String(length=32), nullable=False),
    sa.Column('repository', sa.String(length=200), nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('jobs', sa.Integer(), nullable=False),
    sa.Column('artifacts', sa.Integer(), nullable=False),
    sa.Column('synced_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('ci_system', 'repository', 'run_id', 'attempt')
    )
    op.create_table('ci_artifact',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_pk', sa.Integer(), nullable=False),
    sa.Column('job_pk', sa.Integer(), nullable=True),
    sa.Column('artifact_id', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=300), nullable=False),
    sa.Column('size_bytes', sa.BigInteger(), nullable=False),
    sa.Column('digest', sa.String(length=100), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('mapped_by', sa.String(length=16), nullable=False),
    sa.Column('files', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['run_pk'], ['ci_run.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('run_pk', 'artifact_id')
    )


def downgrade() -> None:
    op.drop_table('ci_artifact')
    op.drop_table('synced_run')
    op.drop_table('sync_checkpoint')
    op.drop_table('http_validator')
