"""retention marker: when a job's plain passed results were dropped

`ci_job.raw_pruned_at` is set by `parity db prune` (`db.retention`) for a job whose plain
passed rows it deleted; the job's outcome vector is then their record, and a state rebuild
keeps that vector instead of deriving it from the rows that are left.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30
"""
from alembic import op
import sqlalchemy as sa


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


# Plain ALTER TABLE on both databases. A batch operation would copy and drop `ci_job` on
# SQLite, and dropping it cascades to every result of the store.
def upgrade() -> None:
    op.add_column('ci_job', sa.Column('raw_pruned_at', sa.DateTime(), nullable=True))


def downgrade() -> None:  # SQLite 3.35 or later drops a column in place
    pruned = op.get_bind().execute(sa.text(
        'SELECT count(*) FROM ci_job WHERE raw_pruned_at IS NOT NULL')).scalar()
    if pruned:  # without the marker a state rebuild would derive vectors from what is left
        raise RuntimeError(f'{pruned} jobs have pruned results: this store cannot go back to '
                           'a schema without retention')
    op.execute('ALTER TABLE ci_job DROP COLUMN raw_pruned_at')
