"""A LangGraph graph served over A2A, as it is:

    pip install 'a2a-grpc[langgraph]'
    a2a-grpc serve --agent langgraph_agent:graph

The graph is ordinary LangGraph: a chat node and a node that asks for
approval with interrupt(). The chat model here is LangChain's fake one, so
the example runs offline; put your own model in its place.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt


async def chat(state: MessagesState) -> dict[str, Any]:
    said = state["messages"][-1].content
    model = GenericFakeChatModel(messages=iter([AIMessage(content=f"Planning a trip: {said}")]))
    return {"messages": [await model.ainvoke(state["messages"])]}


def approve(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Book it? (yes/no)")
    return {"messages": [AIMessage(content="Booked." if answer == "yes" else "Not booked.")]}


builder = StateGraph(MessagesState)
builder.add_node("chat", chat)
builder.add_node("approve", approve)
builder.add_edge(START, "chat")
builder.add_edge("chat", "approve")
builder.add_edge("approve", END)
# A durable checkpointer (langgraph-checkpoint-sqlite's AsyncSqliteSaver, from an
# async factory: docs/frameworks/langgraph.md) keeps conversations across restarts.
graph = builder.compile(checkpointer=InMemorySaver(), name="trip planner")
