"""An orchestrator: a LangGraph graph that calls two other agents over A2A
with a2a-grpc's client (one over gRPC, one over JSON-RPC), served by
a2a-grpc itself:

    RESEARCH_AGENT=http://127.0.0.1:8081 WRITER_AGENT=http://127.0.0.1:8082 \\
        a2a-grpc serve --agent orchestrator:graph

Each URL is an agent's base URL: the client reads its card and calls it over
the binding asked for (RESEARCH_BINDING, default GRPC; WRITER_BINDING,
default JSONRPC). The graph's nodes are ordinary LangGraph nodes; where a
real orchestrator would let a model choose which agent to call, this one
calls both in turn.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.types import Message, Part, SendMessageRequest, TaskState

State = MessagesState


async def ask(url: str, binding: str, text: str) -> str:
    """Send `text` to the agent at `url` over `binding`; its answer, and how it went."""
    client = await A2AClient.connect(url, ClientOptions(prefer=[binding]))
    try:
        sent = await client.send_message(SendMessageRequest(message=Message(
            message_id=str(uuid.uuid4()), role="ROLE_USER", parts=[Part(text=text)])))
        task = sent.task
        answer = " ".join(p.text for a in task.artifacts for p in a.parts if p.text)
        return (f"{task.status.state and TaskState.Name(task.status.state)} over "
                f"{client.interface.protocol_binding}: {answer}")
    finally:
        await client.close()


async def research(state: State) -> dict[str, Any]:
    question = str(state["messages"][-1].content)
    found = await ask(os.environ["RESEARCH_AGENT"], os.environ.get("RESEARCH_BINDING", "GRPC"),
                      question)
    return {"messages": [AIMessage(content=f"research: {found}")]}


async def write(state: State) -> dict[str, Any]:
    notes = str(state["messages"][-1].content)
    written = await ask(os.environ["WRITER_AGENT"], os.environ.get("WRITER_BINDING", "JSONRPC"),
                        notes)
    return {"messages": [AIMessage(content=f"writer: {written}")]}


builder = StateGraph(State)
builder.add_node("research", research)
builder.add_node("write", write)
builder.add_edge(START, "research")
builder.add_edge("research", "write")
builder.add_edge("write", END)
graph = builder.compile(checkpointer=InMemorySaver(), name="orchestrator")
