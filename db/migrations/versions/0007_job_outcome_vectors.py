"""per-job outcome vectors (job_outcome) and the index of vendor-named tests

`job_outcome` holds each job's tests as arrays (ids, worst outcome, skip category, rerun),
written with the results; the latest-run views compare runs from it. Existing jobs get
their vectors from their raw rows right after the upgrade (`db.migrate.upgrade` calls
`db.state.complete`), not here: a revision creates the shape, the code that fills it may
change. `ix_test_case_alias` finds the few tests whose parity id is not their own id.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30
"""
from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None

ALIAS = "parity_id <> id"  # as in db.models, frozen here


def upgrade() -> None:
    op.create_table('job_outcome',
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('tests', sa.Integer(), nullable=False),
    sa.Column('test_ids', sa.LargeBinary(), nullable=False),
    sa.Column('outcomes', sa.LargeBinary(), nullable=False),
    sa.Column('skips', sa.LargeBinary(), nullable=False),
    sa.Column('reruns', sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('job_pk')
    )
    op.create_index('ix_test_case_alias', 'test_case', ['id'],
                    sqlite_where=sa.text(ALIAS), postgresql_where=sa.text(ALIAS))


def downgrade() -> None:
    op.drop_index('ix_test_case_alias', table_name='test_case')
    op.drop_table('job_outcome')
