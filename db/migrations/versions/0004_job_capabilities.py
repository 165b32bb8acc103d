"""job capabilities: what distributed-inference features a job exercised

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('job_capability',
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('source', sa.String(length=16), nullable=False),
    sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('job_pk', 'name')
    )


def downgrade() -> None:
    op.drop_table('job_capability')
