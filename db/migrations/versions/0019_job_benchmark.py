"""job_benchmark: each job's benchmark rows as arrays, kept with the rows

A view reads the benchmark rows of its window (29,250 on the 50M store's default lookback)
for their ids, series, artifacts, record numbers and values; building one Python object
per value was most of that read. `job_benchmark` holds each job's as parallel arrays,
written with the rows. Existing jobs get theirs from their rows right after the upgrade
(`db.migrate.upgrade` calls `db.state.complete`), not here: a revision creates the shape,
the code that fills it may change.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05
"""
import sqlalchemy as sa
from alembic import op

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('job_benchmark',
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('rows', sa.Integer(), nullable=False),
    sa.Column('ids', sa.LargeBinary(), nullable=False),
    sa.Column('series', sa.LargeBinary(), nullable=False),
    sa.Column('artifacts', sa.LargeBinary(), nullable=False),
    sa.Column('records', sa.LargeBinary(), nullable=False),
    sa.Column('values', sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('job_pk')
    )


def downgrade() -> None:
    op.drop_table('job_benchmark')
