"""A complete agent for a2a-grpc: counts the words of each message.

Run it:    a2a-grpc serve --agent examples.word_count:WordCount
(from the repository root, so `examples` is importable).
"""

from a2a_grpc import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.types import AgentCapabilities, AgentCard, AgentSkill


class WordCount(AgentExecutor):
    card = AgentCard(
        name="Word counter",
        description="Counts the words in your message.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="count", name="Count words", description="Counts words.",
                           tags=["text"], examples=["how many words is this"])],
    )

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        if not context.text.strip():
            await events.reject("Send some text to count.")
            return
        await events.working("counting")
        count = len(context.text.split())
        await events.artifact(f"{count} words", name="count")
        await events.complete()
