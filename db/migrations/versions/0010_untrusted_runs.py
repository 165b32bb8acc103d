"""untrusted runs: why a run is left out of the parity views

`ci_run.untrusted` holds the reason a run cannot be trusted as a project's own CI (a fork's
pull request, a `pull_request_target` or `workflow_run` chain, a branch the source does not
follow); empty for a trusted run. The views leave untrusted runs out unless asked.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-30
"""
from alembic import op
import sqlalchemy as sa


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:  # plain ALTER TABLE: a batch copy of ci_run would cascade
    op.add_column('ci_run', sa.Column('untrusted', sa.String(64), nullable=False,
                                      server_default=''))


def downgrade() -> None:
    op.execute('ALTER TABLE ci_run DROP COLUMN untrusted')
