"""job_summary: each job's counts over its test groups, kept at ingest

The jobs every view reads came with their counts summed from `test_summary` on each read
(about a hundred groups per job). The sum is now one row per job, written with the groups;
this revision fills it from the groups already stored.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-30
"""
from alembic import op
import sqlalchemy as sa


revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None

COUNTS = ('total', 'passed', 'failed', 'error', 'skipped', 'xfailed', 'xpassed', 'flaky',
          'vendor_skipped')


def upgrade() -> None:
    op.create_table(
        'job_summary',
        sa.Column('job_pk', sa.Integer(), sa.ForeignKey('ci_job.id', ondelete='CASCADE'),
                  primary_key=True),
        *[sa.Column(c, sa.Integer(), nullable=False) for c in COUNTS],
        sa.Column('duration_s', sa.Float(), nullable=False),
    )
    cols = ', '.join(COUNTS + ('duration_s',))
    sums = ', '.join(f'SUM({c})' for c in COUNTS + ('duration_s',))
    op.execute(f'INSERT INTO job_summary (job_pk, {cols}) '
               f'SELECT job_pk, {sums} FROM test_summary GROUP BY job_pk')


def downgrade() -> None:
    op.drop_table('job_summary')
