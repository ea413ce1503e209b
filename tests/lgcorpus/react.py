"""Prebuilt agents: ``create_react_agent`` and ``langchain.agents.create_agent`` + ``TodoListMiddleware``.

Both run tools in a ``ToolNode``; every tool call is its own ``Send`` (a PUSH task of node
``tools``), so a step with two tool calls has two ``tools`` tasks.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from ._util import cfg, oldest
from .fakes import ScriptedToolModel


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"It is sunny in {city}."


@tool
def get_time(city: str) -> str:
    """The local time in a city."""
    return f"It is 10:00 in {city}."


REACT_SCRIPT = [[("get_weather", {"city": "Paris"}), ("get_time", {"city": "Paris"})],
                "Sunny, and it is 10:00 in Paris."]


def build_react(checkpointer: Any = None) -> Any:
    """The prebuilt ReAct agent (langgraph.prebuilt.create_react_agent) with two tools."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in favour of create_agent
        from langgraph.prebuilt import create_react_agent
        return create_react_agent(ScriptedToolModel(script=REACT_SCRIPT, prefix="react"),
                                  [get_weather, get_time], checkpointer=checkpointer)


def run_react(checkpointer: Any) -> list[dict]:
    """One conversation with two parallel tool calls; then a replay from the tool step."""
    graph = build_react(checkpointer)
    thread = "react-1"
    graph.invoke({"messages": [HumanMessage("Weather and time in Paris?", id="h-1")]}, cfg(thread))
    tools_step = oldest(graph, thread, lambda s: s.next == ("tools", "tools"))
    graph.invoke(None, tools_step.config)           # replay: a fork checkpoint, the tools run again
    return [cfg(thread)]


AGENT_SCRIPT = [
    [("write_todos", {"todos": [{"content": "Look up the weather", "status": "in_progress"},
                                {"content": "Answer the user", "status": "pending"}]})],
    [("get_weather", {"city": "Oslo"})],
    [("write_todos", {"todos": [{"content": "Look up the weather", "status": "completed"},
                                {"content": "Answer the user", "status": "completed"}]})],
    "It is sunny in Oslo.",
]


def build_agent(checkpointer: Any = None) -> Any:
    """langchain.agents.create_agent with TodoListMiddleware (a ``todos`` channel) and a tool."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import TodoListMiddleware
    return create_agent(ScriptedToolModel(script=AGENT_SCRIPT, prefix="agent"), [get_weather],
                        middleware=[TodoListMiddleware()], checkpointer=checkpointer)


def run_agent(checkpointer: Any) -> list[dict]:
    """One task-planning conversation: todos written, a tool called, todos completed."""
    graph = build_agent(checkpointer)
    thread = "agent-1"
    graph.invoke({"messages": [HumanMessage("What is the weather in Oslo?", id="h-1")]}, cfg(thread))
    return [cfg(thread)]
