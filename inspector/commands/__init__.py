"""CLI sub-commands: each module defines ``register(subparsers)`` setting ``func``."""
