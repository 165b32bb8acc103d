"""job_outcome: each distinct set of test ids is stored once (test_set)

A job's vector held its sorted test ids (8 bytes a test) beside one byte a test for each of
its outcome, skip and rerun codes. A lane's shards run the same tests night after night, so
the ids repeat from job to job: in the 50M demo store 8,736 vectors hold 8 distinct id
arrays, 401 MB of ids in all, and the ids were most of what a history view read (1,100 jobs
of the 50M store: 69 MB, 52 ms; the codes alone and their sets, 19 MB, 9 ms). Each
distinct set is now a `test_set` row, found again by a hash of its bytes, and a vector
points to it. The sets of the vectors already stored are made here, and each vector keeps
its codes as they are.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04
"""
import hashlib

import sqlalchemy as sa
from alembic import op

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None

CHUNK = 200  # vectors per read while copying (a few dozen MB of ids at real size)


def _codes() -> list[sa.Column]:
    return [sa.Column(c, sa.LargeBinary(), nullable=False) for c in ('outcomes', 'skips', 'reruns')]


def _job_columns() -> list[sa.Column]:
    return [sa.Column('job_pk', sa.Integer(), nullable=False),
            sa.Column('tests', sa.Integer(), nullable=False)]


def _swap(new: str, fks: tuple[str, ...]) -> None:
    """Replace job_outcome by the filled table `new`, keeping PostgreSQL's default names."""
    op.drop_table('job_outcome')
    op.rename_table(new, 'job_outcome')
    if op.get_bind().dialect.name == 'postgresql':
        op.execute(f"ALTER INDEX {new}_pkey RENAME TO job_outcome_pkey")
        for col in fks:
            op.execute(f"ALTER TABLE job_outcome RENAME CONSTRAINT {new}_{col}_fkey "
                       f"TO job_outcome_{col}_fkey")


def _chunks(conn, sql: str):
    """The rows of `sql` (ordered by job_pk, with `:after` and `:n`), a chunk at a time."""
    after = -1
    while True:
        rows = conn.execute(sa.text(sql), {"after": after, "n": CHUNK}).all()
        if not rows:
            return
        yield rows
        after = rows[-1][0]


def upgrade() -> None:
    op.create_table('test_set',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('digest', sa.LargeBinary(), nullable=False),
    sa.Column('tests', sa.Integer(), nullable=False),
    sa.Column('test_ids', sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('digest')
    )
    op.create_table('job_outcome_new',
    *_job_columns(),
    sa.Column('set_pk', sa.Integer(), nullable=False),
    *_codes(),
    sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['set_pk'], ['test_set.id'], ),
    sa.PrimaryKeyConstraint('job_pk')
    )
    conn = op.get_bind()
    sets: dict[bytes, int] = {}
    for rows in _chunks(conn, "SELECT job_pk, tests, test_ids, outcomes, skips, reruns "
                              "FROM job_outcome WHERE job_pk > :after ORDER BY job_pk LIMIT :n"):
        for job_pk, tests, ids, outcomes, skips, reruns in rows:
            ids = bytes(ids)
            digest = hashlib.blake2b(ids, digest_size=16).digest()
            if digest not in sets:  # the hash of the ids' bytes, as db.state makes it
                sets[digest] = conn.execute(sa.text(
                    "INSERT INTO test_set (digest, tests, test_ids) VALUES (:d, :n, :ids) "
                    "RETURNING id"), {"d": digest, "n": len(ids) // 8, "ids": ids}).scalar_one()
            conn.execute(sa.text(
                "INSERT INTO job_outcome_new (job_pk, tests, set_pk, outcomes, skips, reruns) "
                "VALUES (:j, :t, :s, :o, :k, :r)"),
                {"j": job_pk, "t": tests, "s": sets[digest], "o": bytes(outcomes),
                 "k": bytes(skips), "r": bytes(reruns)})
    _swap('job_outcome_new', ('job_pk', 'set_pk'))
    op.create_index('ix_job_outcome_set', 'job_outcome', ['set_pk'])


def downgrade() -> None:
    op.create_table('job_outcome_old',
    *_job_columns(),
    sa.Column('test_ids', sa.LargeBinary(), nullable=False),
    *_codes(),
    sa.ForeignKeyConstraint(['job_pk'], ['ci_job.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('job_pk')
    )
    op.execute("INSERT INTO job_outcome_old (job_pk, tests, test_ids, outcomes, skips, reruns) "
               "SELECT o.job_pk, o.tests, s.test_ids, o.outcomes, o.skips, o.reruns "
               "FROM job_outcome o JOIN test_set s ON s.id = o.set_pk")
    op.drop_index('ix_job_outcome_set', table_name='job_outcome')
    _swap('job_outcome_old', ('job_pk',))
    op.drop_table('test_set')
