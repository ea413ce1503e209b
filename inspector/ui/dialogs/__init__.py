"""Dialogs: Fork… and Resume… (each drives a core function from inspector.resume)."""
