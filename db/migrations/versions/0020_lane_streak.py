"""lane_streak, streak_cutoff: each lane's failing tests at a cutoff behind the newest run

A view follows failure streaks through the per-job vectors of its history (60 days); a
test failing for longer showed a streak cut at the history's start. `lane_streak` holds
each lane's tests that were failing at `streak_cutoff` (how many runs, since when), kept by
`db.streaks` with the runs, one row of arrays a lane. Existing stores get theirs from their vectors right after the
upgrade (`db.migrate.upgrade` calls `db.streaks.complete`), not here: a revision creates
the shape, the code that fills it may change.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-05
"""
import sqlalchemy as sa
from alembic import op

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('streak_cutoff',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('cutoff', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('lane_streak',
    sa.Column('framework', sa.String(length=100), nullable=False),
    sa.Column('hardware', sa.String(length=200), nullable=False),
    sa.Column('suite', sa.String(length=200), nullable=False),
    sa.Column('tests', sa.Integer(), nullable=False),
    sa.Column('ids', sa.LargeBinary(), nullable=False),
    sa.Column('tails', sa.LargeBinary(), nullable=False),
    sa.Column('since', sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint('framework', 'hardware', 'suite')
    )


def downgrade() -> None:
    op.drop_table('lane_streak')
    op.drop_table('streak_cutoff')
