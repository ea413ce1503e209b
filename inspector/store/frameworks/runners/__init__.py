"""Scripts the inspector runs with YOUR Python, in YOUR environment, to fork or resume through a
framework's own API (never imported by the inspector; they import only the framework)."""
