"""test_result carries its run's day in the key; PostgreSQL partitions it by month

`run_day` (YYYYMMDD of the run's time, 0 for a run without one) joins the key (job, test,
artifact), so the results table has its time column in the key and can be partitioned and
later distributed by it. On PostgreSQL the table becomes partitioned by range of `run_day`,
one partition per month of the stored runs plus one for undated runs; the writer makes a
new month's partition before writing into it (`db.partitions`). On SQLite the table stays
one clustered table with the same key. The rows are copied in key order.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01
"""
from alembic import op
import sqlalchemy as sa

from parity.db import partitions

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
VALUES = "outcome, phase, duration_s, rerun_count, message, skip_category"
NOTABLE = "outcome IN ('failed', 'error') OR rerun_count > 0"


def _values() -> list[sa.Column]:
    return [
        sa.Column('outcome', sa.String(length=16), nullable=False),
        sa.Column('phase', sa.String(length=16), nullable=True),
        sa.Column('duration_s', sa.Float(), nullable=True),
        sa.Column('rerun_count', sa.Integer(), nullable=False),
        sa.Column('message', sa.Text(), nullable=True),
        sa.Column('skip_category', sa.String(length=32), nullable=True),
    ]


def _foreign_keys() -> list[sa.ForeignKeyConstraint]:
    return [
        sa.ForeignKeyConstraint(['artifact_pk'], ['artifact.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['test_pk'], ['test_case.id'], ),
    ]


def _day(column: str) -> str:
    if op.get_bind().dialect.name == 'postgresql':
        return f"COALESCE(CAST(to_char({column}, 'YYYYMMDD') AS INTEGER), 0)"
    return f"COALESCE(CAST(strftime('%Y%m%d', {column}) AS INTEGER), 0)"


def _swap(new: str) -> None:
    """Replace test_result by the filled table `new`, keeping PostgreSQL's default names,
    and index its notable rows again."""
    op.drop_table('test_result')
    op.rename_table(new, 'test_result')
    if op.get_bind().dialect.name == 'postgresql':
        op.execute(f"ALTER INDEX {new}_pkey RENAME TO test_result_pkey")
        for col in ('job_pk', 'artifact_pk', 'test_pk'):
            op.execute(f"ALTER TABLE test_result RENAME CONSTRAINT {new}_{col}_fkey "
                       f"TO test_result_{col}_fkey")
    op.create_index('ix_test_result_notable', 'test_result', ['job_pk', 'test_pk'],
                    unique=False, sqlite_where=sa.text(NOTABLE),
                    postgresql_where=sa.text(NOTABLE))


def upgrade() -> None:
    bind = op.get_bind()
    pg = bind.dialect.name == 'postgresql'
    op.create_table('test_result_new',
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('test_pk', ID, nullable=False),
    sa.Column('artifact_pk', sa.Integer(), nullable=False),
    sa.Column('run_day', sa.Integer(), autoincrement=False, nullable=False),
    *_values(), *_foreign_keys(),
    sa.PrimaryKeyConstraint('job_pk', 'test_pk', 'artifact_pk', 'run_day'),
    sqlite_with_rowid=False,
    postgresql_partition_by='RANGE (run_day)',
    )
    if pg:  # a partition for every month of the stored runs, and one for undated runs
        days = [0] + [r[0] for r in bind.execute(sa.text(
            f"SELECT DISTINCT {_day('created_at')} FROM ci_run"))]
        for ddl in sorted({partitions.create_sql(d).replace(
                f"PARTITION OF {partitions.TABLE} ", "PARTITION OF test_result_new ")
                for d in days}):
            op.execute(ddl)
    op.execute(
        f"INSERT INTO test_result_new (job_pk, test_pk, artifact_pk, run_day, {VALUES}) "
        f"SELECT r.job_pk, r.test_pk, r.artifact_pk, {_day('c.created_at')}, "
        f"{', '.join('r.' + v for v in VALUES.split(', '))} FROM test_result r "
        "LEFT JOIN ci_job j ON j.id = r.job_pk LEFT JOIN ci_run c ON c.id = j.run_pk "
        "ORDER BY r.job_pk, r.test_pk, r.artifact_pk")
    _swap('test_result_new')


def downgrade() -> None:
    op.create_table('test_result_old',
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('test_pk', ID, nullable=False),
    sa.Column('artifact_pk', sa.Integer(), nullable=False),
    *_values(), *_foreign_keys(),
    sa.PrimaryKeyConstraint('job_pk', 'test_pk', 'artifact_pk'),
    sqlite_with_rowid=False,
    )
    op.execute(
        f"INSERT INTO test_result_old (job_pk, test_pk, artifact_pk, {VALUES}) "
        f"SELECT job_pk, test_pk, artifact_pk, {VALUES} FROM test_result "
        "ORDER BY job_pk, test_pk, artifact_pk")
    _swap('test_result_old')
