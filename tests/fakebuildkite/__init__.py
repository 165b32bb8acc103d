"""A fake Buildkite REST API on loopback for the collector's tests (`server.FakeBuildkite`)."""
