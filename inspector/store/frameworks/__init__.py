"""Adapters for other frameworks' session and checkpoint stores: OpenAI Agents SDK, CrewAI,
Google ADK (each read-only; decoding never executes anything read)."""
