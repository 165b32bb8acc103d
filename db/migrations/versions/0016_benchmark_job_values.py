"""benchmark_metric: the job index carries each row's series and numbers

A view reads the benchmark rows of its window's jobs (tens of thousands at real volume) for
their numbers only: the series, artifact, record number and value, the texts coming from
`benchmark_series` (0014). Through an index on `job_pk` alone every row was then looked up
in the table, whose records also hold the config JSON, so a read touched about nine times
the pages it needed (the 50M store's default lookback: 9.0 MB against 1.0 MB). The index
on (job_pk, series_pk, artifact_pk, record_no, value) answers that read by itself and still
serves every lookup by job.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03
"""
from alembic import op

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_benchmark_job_values', 'benchmark_metric',
                    ['job_pk', 'series_pk', 'artifact_pk', 'record_no', 'value'])
    op.drop_index('ix_benchmark_job', table_name='benchmark_metric')


def downgrade() -> None:
    op.create_index('ix_benchmark_job', 'benchmark_metric', ['job_pk'])
    op.drop_index('ix_benchmark_job_values', table_name='benchmark_metric')
