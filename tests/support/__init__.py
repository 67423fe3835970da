"""Tooling shared by the tests and the benchmarks; never shipped with the service."""
