"""Fixtures shared across test folders."""

pytest_plugins = ["tests.audio.output_fixtures"]
