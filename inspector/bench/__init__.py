"""Benchmarks behind ``checkpoint-inspector bench …``; each module defines ``register(subparsers)``."""

PROBE_ENV = "CHECKPOINT_INSPECTOR_BENCH_PROBE"  # 'LONG_RUN,LIVE_RUN': the GUI attaches its probe
