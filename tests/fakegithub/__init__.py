"""A faithful fake GitHub REST API on loopback, for the collector and runner tests and for
trying the collector by hand (`python -m tests.fakegithub`)."""
from tests.fakegithub.server import FakeGitHub, Faults
from tests.fakegithub.world import World, zip_bytes

__all__ = ["FakeGitHub", "Faults", "World", "zip_bytes"]
