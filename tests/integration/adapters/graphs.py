"""LangGraph graphs for the adapter's tests: plain Python nodes and LangChain's
own fake chat model (GenericFakeChatModel: it streams its reply word by word),
no model downloads. `make_durable` is what `serve --agent` is given in the
restart test: an async factory, since AsyncSqliteSaver opens in the loop."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt


async def chat(state: MessagesState) -> dict[str, Any]:
    """Answers through a chat model (streamed as tokens), counting the history."""
    said = state["messages"][-1].content
    model = GenericFakeChatModel(messages=iter([AIMessage(
        content=f"you said {said} ({len(state['messages'])} messages)")]))
    return {"messages": [await model.ainvoke(state["messages"])]}


def ask(state: MessagesState) -> dict[str, Any]:
    name = interrupt("What is your name?")
    return {"messages": [AIMessage(content=f"Hi {name}")]}


def ask_name(state: MessagesState) -> dict[str, Any]:
    """As LangGraph's docs write a node without a chat model: a tuple."""
    name = interrupt("What is your name?")
    return {"messages": [("ai", f"hello {name}")]}


def as_dict(state: MessagesState) -> dict[str, Any]:
    """A single message, as an OpenAI-style dict (not a list)."""
    return {"messages": {"role": "assistant", "content": "nice to meet you"}}


def as_object(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(content="bye")]}


def ask_data(state: MessagesState) -> dict[str, Any]:
    answer = interrupt({"need": "approval", "amount": 5})
    return {"messages": [AIMessage(content=f"approved: {answer}")]}


async def wait(state: MessagesState) -> dict[str, Any]:
    await asyncio.Event().wait()  # never set: waits until cancelled
    return {}


def boom(state: MessagesState) -> dict[str, Any]:
    raise ValueError("boom: the tool is down")


def build(*nodes: Any, checkpointer: Any = None, name: str = "test graph") -> Any:
    graph = StateGraph(MessagesState)
    previous = START
    for node in nodes:
        graph.add_node(node.__name__, node)
        graph.add_edge(previous, node.__name__)
        previous = node.__name__
    graph.add_edge(previous, END)
    return graph.compile(checkpointer=checkpointer or InMemorySaver(), name=name)


async def make_durable() -> Any:
    """A chat graph whose conversations are kept in LANGGRAPH_DB (SQLite)."""
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    saver = AsyncSqliteSaver(await aiosqlite.connect(os.environ["LANGGRAPH_DB"]))
    return build(chat, checkpointer=saver, name="durable chat")
