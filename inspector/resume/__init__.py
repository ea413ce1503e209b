"""Fork, resume, ownership and stuck-run diagnosis (Qt-free; the GUI and CLI call these)."""
