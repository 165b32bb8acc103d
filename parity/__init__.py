"""The `parity` command: wires the packages' entry points into subcommands, nothing else."""
