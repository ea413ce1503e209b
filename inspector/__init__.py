"""Checkpoint Inspector: record, inspect, diff, fork and resume agent checkpoints."""

__version__ = "0.2.0"
