"""Qt widgets of the desktop inspector (one per file)."""
