"""indexes for windowed reads: runs by creation time, and the notable test results

`ix_ci_run_created` serves every view's time window. `ix_test_result_notable` is a partial
index of the failed, errored and rerun results (a few per cent of all rows) in job order, so
a history view finds a window's failures without reading every result of it, and ingest
appends to it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""
from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

NOTABLE = "outcome IN ('failed', 'error') OR rerun_count > 0"  # as in db.models, frozen here


def upgrade() -> None:
    op.create_index('ix_ci_run_created', 'ci_run', ['created_at'])
    op.create_index('ix_test_result_notable', 'test_result', ['job_pk', 'test_pk'],
                    sqlite_where=sa.text(NOTABLE), postgresql_where=sa.text(NOTABLE))


def downgrade() -> None:
    op.drop_index('ix_test_result_notable', table_name='test_result')
    op.drop_index('ix_ci_run_created', table_name='ci_run')
