"""test_case: the partial index of vendor-named tests holds their parity id too

Every view that compares vendors reads the few tests whose parity key differs from their key
(`db.state.aliases`: 2,956 of 431,000 tests in the 50M store) through the partial index
`ix_test_case_alias`. That index held only `id`, so each of those rows was then looked up
in `test_case`, whose rows hold the test's texts and lie in hash order: one page read per
alias. With (id, parity_id) the index answers the read by itself (SQLite: a covering index;
PostgreSQL: an index-only scan once vacuum has marked the table's pages all-visible). The
50M SQLite store, the read alone: 209-261 ms -> 3 ms with the file out of the page cache,
9 -> 1.5 ms in it.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03
"""
import sqlalchemy as sa
from alembic import op

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None

ALIAS = "parity_id <> id"


def _create(columns: list[str]) -> None:
    op.create_index('ix_test_case_alias', 'test_case', columns,
                    sqlite_where=sa.text(ALIAS), postgresql_where=sa.text(ALIAS))


def upgrade() -> None:
    op.drop_index('ix_test_case_alias', table_name='test_case')
    _create(['id', 'parity_id'])


def downgrade() -> None:
    op.drop_index('ix_test_case_alias', table_name='test_case')
    _create(['id'])
