"""Tests of the diff engine (inspector.diff), its CLI command and benchmark."""
