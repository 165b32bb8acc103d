"""test results keyed (job, test, artifact), clustered on SQLite; no secondary indexes

The views read results by job, and the key's prefix serves that; on SQLite the table is
WITHOUT ROWID, so a bulk ingest appends to one B-tree instead of a table and two indexes.
A (job, test, artifact) that was stored twice (a console log naming a test in two
sessions) keeps its last row, as the writer now does.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
VALUES = "outcome, phase, duration_s, rerun_count, message, skip_category"


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


def _swap(new: str) -> None:
    """Replace test_result by the filled table `new`, keeping PostgreSQL's default names."""
    op.drop_table('test_result')
    op.rename_table(new, 'test_result')
    if op.get_bind().dialect.name == 'postgresql':
        op.execute(f"ALTER INDEX {new}_pkey RENAME TO test_result_pkey")
        for col in ('job_pk', 'artifact_pk', 'test_pk'):
            op.execute(f"ALTER TABLE test_result RENAME CONSTRAINT {new}_{col}_fkey "
                       f"TO test_result_{col}_fkey")


def upgrade() -> None:
    op.create_table('test_result_new',
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('test_pk', ID, nullable=False),
    sa.Column('artifact_pk', sa.Integer(), nullable=False),
    *_values(), *_foreign_keys(),
    sa.PrimaryKeyConstraint('job_pk', 'test_pk', 'artifact_pk'),
    sqlite_with_rowid=False,
    )
    op.execute(
        f"INSERT INTO test_result_new (job_pk, test_pk, artifact_pk, {VALUES}) "
        f"SELECT job_pk, test_pk, artifact_pk, {VALUES} FROM test_result WHERE id IN "
        "(SELECT MAX(id) FROM test_result GROUP BY job_pk, test_pk, artifact_pk) "
        "ORDER BY job_pk, test_pk, artifact_pk")
    op.drop_index('ix_test_result_job', table_name='test_result')
    op.drop_index('ix_test_result_test', table_name='test_result')
    _swap('test_result_new')


def downgrade() -> None:
    op.create_table('test_result_old',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('artifact_pk', sa.Integer(), nullable=False),
    sa.Column('test_pk', ID, nullable=False),
    *_values(), *_foreign_keys(),
    sa.PrimaryKeyConstraint('id'),
    )
    op.execute(
        f"INSERT INTO test_result_old (job_pk, artifact_pk, test_pk, {VALUES}) "
        f"SELECT job_pk, artifact_pk, test_pk, {VALUES} FROM test_result "
        "ORDER BY artifact_pk, test_pk")
    _swap('test_result_old')
    op.create_index('ix_test_result_job', 'test_result', ['job_pk'], unique=False)
    op.create_index('ix_test_result_test', 'test_result', ['test_pk'], unique=False)
