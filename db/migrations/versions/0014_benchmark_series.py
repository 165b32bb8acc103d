"""benchmark_series: each distinct combination of a benchmark row's dimensions, stored once

A window of a long history holds tens of thousands of benchmark rows but a few dozen
series; reading every row's dimension texts was most of the views' benchmark reads. Each
row now names its series (`benchmark_metric.series_pk`); this revision makes the series of
the rows already stored and fills the column (`db.store.name_series`).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02
"""
from alembic import op
import sqlalchemy as sa

from parity.db import store

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def _dimensions() -> list[sa.Column]:
    texts = [('benchmark', 200), ('model', 300), ('metric', 200), ('statistic', 16),
             ('unit', 16), ('direction', 8), ('config_key', 16), ('precision', 32)]
    numbers = [('tp', sa.Integer), ('ep', sa.Integer), ('dp', sa.Integer), ('pp', sa.Integer),
               ('isl', sa.Integer), ('osl', sa.Integer), ('concurrency', sa.Integer),
               ('request_rate', sa.Float), ('batch_size', sa.Integer)]
    return ([sa.Column(n, sa.String(length=size), nullable=False) for n, size in texts]
            + [sa.Column(n, kind(), nullable=True) for n, kind in numbers])


def upgrade() -> None:
    op.create_table(
        'benchmark_series',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('key', sa.String(length=40), nullable=False),
        *_dimensions(),
        sa.UniqueConstraint('key'),
    )
    op.create_index('ix_benchmark_series_dims', 'benchmark_series',
                    ['benchmark', 'model', 'metric', 'config_key'])
    op.add_column('benchmark_metric', sa.Column('series_pk', sa.Integer(), nullable=True))
    # the series of the rows already stored, as `parity db rebuild-state` names them
    store.name_series(op.get_bind())


def downgrade() -> None:
    op.drop_index('ix_benchmark_series_dims', table_name='benchmark_series')
    with op.batch_alter_table('benchmark_metric') as batch:
        batch.drop_column('series_pk')
    op.drop_table('benchmark_series')
