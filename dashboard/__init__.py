"""Parity views: `frames` (pure functions returning DataFrames) and, on top, charts and the app.

The dashboard reads the store and never writes it or calls GitHub."""
