"""Qt models of the desktop inspector (one per file)."""
