"""The PySide6 desktop inspector: a thin, responsive view over the Qt-free core."""
