"""The demo agent and the builder of the demo store."""
