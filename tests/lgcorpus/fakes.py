"""A deterministic fake chat model that calls tools (no network, same answer in every process).

The reply depends only on the conversation so far, so a replay or a resume in another process
(the inspector's graph runner) produces the same messages, with the same ids, as LangGraph's
own API in the test process. ``script`` maps the number of AI turns already taken to the next
reply: a list of tool calls ``[(tool name, args), …]`` or a final text.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class ScriptedToolModel(BaseChatModel):
    """Replies by turn number: tool calls, then a final answer."""

    script: list[Any]
    prefix: str = "ai"

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-model"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolModel:
        """Tools are named in the script; binding changes nothing."""
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        turn = sum(1 for m in messages if isinstance(m, AIMessage))
        step = self.script[min(turn, len(self.script) - 1)]
        mid = f"{self.prefix}-{turn}"
        if isinstance(step, str):
            message = AIMessage(content=step, id=mid)
        else:
            calls = [{"name": name, "args": args, "id": f"call-{turn}-{i}", "type": "tool_call"}
                     for i, (name, args) in enumerate(step)]
            message = AIMessage(content="", tool_calls=calls, id=mid)
        return ChatResult(generations=[ChatGeneration(message=message)])
