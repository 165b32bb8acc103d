"""initial schema

Revision ID: 0001
Revises: 
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('ci_run',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('ci_system', sa.String(length=32), nullable=False),
    sa.Column('repository', sa.String(length=200), nullable=False),
    sa.Column('workflow', sa.String(length=300), nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('head_sha', sa.String(length=64), nullable=False),
    sa.Column('branch', sa.String(length=200), nullable=False),
    sa.Column('event', sa.String(length=64), nullable=False),
    sa.Column('conclusion', sa.String(length=32), nullable=False),
    sa.Column('url', sa.String(length=500), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('started_at', sa.DateTime(), nullable=True),
    sa.Column('completed_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('ci_system', 'repository', 'run_id', 'attempt')
    )
    op.create_table('framework',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=32), nullable=False),
    sa.Column('version', sa.String(length=100), nullable=False),
    sa.Column('image', sa.String(length=300), nullable=False),
    sa.Column('rocm_version', sa.String(length=32), nullable=False),
    sa.Column('cuda_version', sa.String(length=32), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name', 'version', 'image', 'rocm_version', 'cuda_version')
    )
    op.create_table('hardware',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('vendor', sa.String(length=16), nullable=False),
    sa.Column('sku', sa.String(length=32), nullable=False),
    sa.Column('arch', sa.String(length=32), nullable=False),
    sa.Column('gpu_count', sa.Integer(), nullable=False),
    sa.Column('raw_name', sa.String(length=200), nullable=False),
    sa.Column('mapped', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('vendor', 'sku', 'arch', 'gpu_count', 'raw_name')
    )
    op.create_table('ingest_error',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('path', sa.Text(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('format', sa.String(length=32), nullable=False),
    sa.Column('at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('path', 'sha256')
    )
    op.create_table('test_case',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=False, nullable=False),
    sa.Column('test_key', sa.Text(), nullable=False),
    sa.Column('parity_id', sa.BigInteger(), nullable=False),
    sa.Column('parity_key', sa.Text(), nullable=False),
    sa.Column('file', sa.Text(), nullable=False),
    sa.Column('classname', sa.Text(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('params', sa.Text(), nullable=True),
    sa.Column('group_name', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('test_case', schema=None) as batch_op:
        batch_op.create_index('ix_test_case_parity_id', ['parity_id'], unique=False)

    op.create_table('ci_job',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_pk', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.String(length=100), nullable=False),
    sa.Column('name', sa.String(length=500), nullable=False),
    sa.Column('suite', sa.String(length=200), nullable=False),
    sa.Column('runner_labels', sa.Text(), nullable=False),
    sa.Column('runner_name', sa.String(length=200), nullable=False),
    sa.Column('runner_group', sa.String(length=200), nullable=False),
    sa.Column('hardware_id', sa.Integer(), nullable=True),
    sa.Column('framework_id', sa.Integer(), nullable=True),
    sa.Column('conclusion', sa.String(length=32), nullable=False),
    sa.Column('url', sa.String(length=500), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('started_at', sa.DateTime(), nullable=True),
    sa.Column('completed_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['framework_id'], ['framework.id'], ),
    sa.ForeignKeyConstraint(['hardware_id'], ['hardware.id'], ),
    sa.ForeignKeyConstraint(['run_pk'], ['ci_run.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('run_pk', 'job_id')
    )
    with op.batch_alter_table('ci_job', schema=None) as batch_op:
        batch_op.create_index('ix_ci_job_hw_fw', ['hardware_id', 'framework_id'], unique=False)

    op.create_table('artifact',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=300), nullable=False),
    sa.Column('path', sa.Text(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('size_bytes', sa.BigInteger(), nullable=False),
    sa.Column('format', sa.String(length=32), nullable=False),
    sa.Column('parser_version', sa.String(length=16), nullable=False),
    sa.Column('records', sa.Integer(), nullable=False),
    sa.Column('ingested_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('job_pk', 'sha256')
    )
    op.create_table('test_summary',
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('group_name', sa.Text(), nullable=False),
    sa.Column('total', sa.Integer(), nullable=False),
    sa.Column('passed', sa.Integer(), nullable=False),
    sa.Column('failed', sa.Integer(), nullable=False),
    sa.Column('error', sa.Integer(), nullable=False),
    sa.Column('skipped', sa.Integer(), nullable=False),
    sa.Column('xfailed', sa.Integer(), nullable=False),
    sa.Column('xpassed', sa.Integer(), nullable=False),
    sa.Column('flaky', sa.Integer(), nullable=False),
    sa.Column('vendor_skipped', sa.Integer(), nullable=False),
    sa.Column('duration_s', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('job_pk', 'group_name')
    )
    op.create_table('accuracy_metric',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('artifact_pk', sa.Integer(), nullable=False),
    sa.Column('record_no', sa.Integer(), nullable=False),
    sa.Column('model', sa.String(length=300), nullable=False),
    sa.Column('task', sa.String(length=200), nullable=False),
    sa.Column('metric', sa.String(length=100), nullable=False),
    sa.Column('filter', sa.String(length=100), nullable=False),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('stderr', sa.Float(), nullable=True),
    sa.Column('n', sa.Integer(), nullable=True),
    sa.Column('higher_is_better', sa.Boolean(), nullable=False),
    sa.Column('is_group', sa.Boolean(), nullable=False),
    sa.Column('parent_group', sa.String(length=200), nullable=False),
    sa.Column('threshold', sa.Float(), nullable=True),
    sa.Column('gate_passed', sa.Boolean(), nullable=True),
    sa.Column('config', sa.Text(), nullable=False),
    sa.Column('config_key', sa.String(length=16), nullable=False),
    sa.Column('precision', sa.String(length=32), nullable=False),
    sa.Column('tp', sa.Integer(), nullable=True),
    sa.Column('ep', sa.Integer(), nullable=True),
    sa.Column('dp', sa.Integer(), nullable=True),
    sa.Column('concurrency', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['artifact_pk'], ['artifact.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('artifact_pk', 'record_no', 'task', 'metric', 'filter')
    )
    with op.batch_alter_table('accuracy_metric', schema=None) as batch_op:
        batch_op.create_index('ix_accuracy_job', ['job_pk'], unique=False)

    op.create_table('benchmark_metric',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('artifact_pk', sa.Integer(), nullable=False),
    sa.Column('record_no', sa.Integer(), nullable=False),
    sa.Column('benchmark', sa.String(length=200), nullable=False),
    sa.Column('model', sa.String(length=300), nullable=False),
    sa.Column('metric', sa.String(length=200), nullable=False),
    sa.Column('statistic', sa.String(length=16), nullable=False),
    sa.Column('unit', sa.String(length=16), nullable=False),
    sa.Column('direction', sa.String(length=8), nullable=False),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('samples', sa.Text(), nullable=True),
    sa.Column('status', sa.String(length=64), nullable=True),
    sa.Column('config', sa.Text(), nullable=False),
    sa.Column('config_key', sa.String(length=16), nullable=False),
    sa.Column('precision', sa.String(length=32), nullable=False),
    sa.Column('tp', sa.Integer(), nullable=True),
    sa.Column('ep', sa.Integer(), nullable=True),
    sa.Column('dp', sa.Integer(), nullable=True),
    sa.Column('pp', sa.Integer(), nullable=True),
    sa.Column('isl', sa.Integer(), nullable=True),
    sa.Column('osl', sa.Integer(), nullable=True),
    sa.Column('concurrency', sa.Integer(), nullable=True),
    sa.Column('request_rate', sa.Float(), nullable=True),
    sa.Column('batch_size', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['artifact_pk'], ['artifact.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('artifact_pk', 'record_no', 'metric')
    )
    with op.batch_alter_table('benchmark_metric', schema=None) as batch_op:
        batch_op.create_index('ix_benchmark_job', ['job_pk'], unique=False)
        batch_op.create_index('ix_benchmark_series', ['benchmark', 'model', 'metric', 'config_key'], unique=False)

    op.create_table('test_result',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_pk', sa.Integer(), nullable=False),
    sa.Column('artifact_pk', sa.Integer(), nullable=False),
    sa.Column('test_pk', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('outcome', sa.String(length=16), nullable=False),
    sa.Column('phase', sa.String(length=16), nullable=True),
    sa.Column('duration_s', sa.Float(), nullable=True),
    sa.Column('rerun_count', sa.Integer(), nullable=False),
    sa.Column('message', sa.Text(), nullable=True),
    sa.Column('skip_category', sa.String(length=32), nullable=True),
    sa.ForeignKeyConstraint(['artifact_pk'], ['artifact.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['test_pk'], ['test_case.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('test_result', schema=None) as batch_op:
        batch_op.create_index('ix_test_result_job', ['job_pk'], unique=False)
        batch_op.create_index('ix_test_result_test', ['test_pk'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('test_result', schema=None) as batch_op:
        batch_op.drop_index('ix_test_result_test')
        batch_op.drop_index('ix_test_result_job')

    op.drop_table('test_result')
    with op.batch_alter_table('benchmark_metric', schema=None) as batch_op:
        batch_op.drop_index('ix_benchmark_series')
        batch_op.drop_index('ix_benchmark_job')

    op.drop_table('benchmark_metric')
    with op.batch_alter_table('accuracy_metric', schema=None) as batch_op:
        batch_op.drop_index('ix_accuracy_job')

    op.drop_table('accuracy_metric')
    op.drop_table('test_summary')
    op.drop_table('artifact')
    with op.batch_alter_table('ci_job', schema=None) as batch_op:
        batch_op.drop_index('ix_ci_job_hw_fw')

    op.drop_table('ci_job')
    with op.batch_alter_table('test_case', schema=None) as batch_op:
        batch_op.drop_index('ix_test_case_parity_id')

    op.drop_table('test_case')
    op.drop_table('ingest_error')
    op.drop_table('hardware')
    op.drop_table('framework')
    op.drop_table('ci_run')
