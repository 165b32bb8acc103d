"""alerts: what Parity told someone about, and where

One row per alert fingerprint (a stable hash of the rule and its subject): its rule,
priority and subject, when it was first and last seen firing, its state (open, resolved,
acknowledged), its evidence and a hash of it (an issue is updated only when it changes),
how many rounds in a row it has not fired, and the GitHub issue it lives in.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-30
"""
from alembic import op
import sqlalchemy as sa


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'alert',
        sa.Column('fingerprint', sa.String(40), primary_key=True),
        sa.Column('rule', sa.String(64), nullable=False),
        sa.Column('priority', sa.String(4), nullable=False),
        sa.Column('framework', sa.String(32), nullable=False, server_default=''),
        sa.Column('hardware', sa.String(200), nullable=False, server_default=''),
        sa.Column('subject', sa.Text(), nullable=False),
        sa.Column('state', sa.String(16), nullable=False),
        sa.Column('first_seen', sa.DateTime(), nullable=False),
        sa.Column('last_seen', sa.DateTime(), nullable=False),
        sa.Column('resolved_at', sa.DateTime(), nullable=True),
        sa.Column('quiet_rounds', sa.Integer(), nullable=False, server_default='0'),
        sa.Column('evidence', sa.Text(), nullable=False, server_default='{}'),
        sa.Column('evidence_hash', sa.String(64), nullable=False, server_default=''),
        sa.Column('url', sa.String(500), nullable=False, server_default=''),
        sa.Column('issue_repo', sa.String(200), nullable=False, server_default=''),
        sa.Column('issue_number', sa.Integer(), nullable=True),
        sa.Column('previous_issue', sa.Integer(), nullable=True),
    )
    op.create_index('ix_alert_state', 'alert', ['state'])


def downgrade() -> None:
    op.drop_index('ix_alert_state', 'alert')
    op.drop_table('alert')
