"""Kenfold at scale on loopback: see run.py."""
