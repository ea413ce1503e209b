"""Benchmarks behind ``checkpoint-inspector bench …``; each module defines ``register(subparsers)``."""
