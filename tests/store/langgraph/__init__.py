"""Tests of the LangGraph store adapter (real langgraph databases)."""
