"""benchmark_series: each distinct combination of a benchmark row's dimensions, stored once

A window of a long history holds tens of thousands of benchmark rows but a few dozen
series; reading every row's dimension texts was most of the views' benchmark reads. Each
row now names its series (`benchmark_metric.series_pk`); this revision makes the series of
the rows already stored and fills the column.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02
"""
from alembic import op
import sqlalchemy as sa

from parity.db.models import SERIES_DIMENSIONS
from parity.db.store import series_key

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
    conn = op.get_bind()
    metric = sa.table('benchmark_metric', sa.column('series_pk'),
                      *(sa.column(c) for c in SERIES_DIMENSIONS))
    series = sa.table('benchmark_series', sa.column('id'), sa.column('key'),
                      *(sa.column(c) for c in SERIES_DIMENSIONS))
    found = conn.execute(sa.select(*(metric.c[c] for c in SERIES_DIMENSIONS)).distinct()).all()
    rows = {series_key(tuple(d)): dict(zip(SERIES_DIMENSIONS, d)) for d in found}
    if rows:
        conn.execute(series.insert(), [dict(r, key=k) for k, r in rows.items()])
    # each row's series: the one whose every dimension equals the row's (a missing number
    # equals a missing one; the texts are never missing, and are matched through the
    # series' index, so each row is one index look-up however many series there are)
    texts = {'benchmark', 'model', 'metric', 'statistic', 'unit', 'direction', 'config_key',
             'precision'}
    same = sa.and_(*(series.c[c] == metric.c[c] if c in texts
                     else series.c[c].is_not_distinct_from(metric.c[c])
                     for c in SERIES_DIMENSIONS))
    conn.execute(metric.update().values(series_pk=sa.select(sa.func.min(series.c.id))
                                        .where(same).scalar_subquery()))


def downgrade() -> None:
    op.drop_index('ix_benchmark_series_dims', table_name='benchmark_series')
    with op.batch_alter_table('benchmark_metric') as batch:
        batch.drop_column('series_pk')
    op.drop_table('benchmark_series')
