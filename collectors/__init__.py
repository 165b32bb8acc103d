"""Collectors: read CI result files (and, later, GitHub Actions) into Parity's store."""
