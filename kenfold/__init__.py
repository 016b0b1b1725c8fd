"""Kenfold: one memory for all of a person's AI agents."""

__version__ = "0.1.0"
