"""Tests of the detail panels (State, Tasks, Metadata, Diff)."""
