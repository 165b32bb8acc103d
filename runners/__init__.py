"""Self-hosted GPU runner tooling (GPU detection, just-in-time registration, result bundles).

Nothing here yet: the package exists so that its place in the dependency direction
(`runners` imports `db` only) is fixed and tested from the start."""
