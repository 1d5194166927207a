"""The framework adapters as users install them: each extra in a fresh
virtualenv brings its framework and no other, and the one line each docs
page gives (`a2a-grpc serve --agent FILE:OBJECT`) serves the example in
examples/frameworks/ from a folder that is not the repository: a message,
the pause for input, the answer that resumes it. The base install names the
extra an adapter needs."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.packaging.conftest import venv_of
from tests.packaging.installed import HEADERS, ROOT, run, serving

EXAMPLES = ROOT / "examples" / "frameworks"
# extra -> (its distribution, the example, the object served, the first message,
#           the question it asks, the answer, what the answer ends the task with)
CASES = {
    "langgraph": ("langgraph", "langgraph_agent.py", "graph", "Lisbon in May",
                  "Book it? (yes/no)", "yes", "Booked."),
    "pydantic-ai": ("pydantic-ai-slim", "pydantic_ai_agent.py", "agent", "refund 42",
                    'Approve refund({"order":"42"})? Answer yes or no.', "yes",
                    "Done: order 42 refunded"),
    "adk": ("google-adk", "adk_agent.py", "root_agent", "expense 30 EUR taxi",
            "Waiting for ask_manager(", "approved", "The manager said: approved"),
}
FRAMEWORKS = {"langgraph", "langchain-core", "pydantic-ai-slim", "google-adk"}


@pytest.fixture(scope="module", params=sorted(CASES))
def with_extra(request: pytest.FixtureRequest, installed: tuple[Path, Path],
               tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    wheel, _ = installed
    extra = request.param
    return extra, venv_of(tmp_path_factory, f"extra-{extra}", f"{wheel}[{extra}]")


def test_each_extra_installs_its_framework_alone(with_extra: tuple[str, Path]) -> None:
    extra, python = with_extra
    names = {line.split("==")[0].lower() for line in run(
        python, "-m", "pip", "list", "--format=freeze", cwd=python.parent).splitlines()}
    mine = CASES[extra][0]
    assert mine in names
    others = FRAMEWORKS - {mine, "langchain-core" if extra == "langgraph" else ""}
    assert not others & names, others & names
    assert "No broken requirements" in run(python, "-m", "pip", "check", cwd=python.parent)


async def test_the_one_line_serves_the_example(with_extra: tuple[str, Path],
                                               tmp_path: Path) -> None:
    extra, python = with_extra
    _, example, obj, first, question, answer, ending = CASES[extra]
    shutil.copy(EXAMPLES / example, tmp_path / example)
    spec = f"{example.removesuffix('.py')}:{obj}"
    async with serving(python, tmp_path, "--store", "memory", "--agent", spec) as (_, port):
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            async with http.get(base + "/.well-known/agent-card.json") as resp:
                card = await resp.json()
            asked = await _send(http, base, first)
            assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", asked
            assert asked["status"]["message"]["parts"][0]["text"].startswith(question)
            done = await _send(http, base, answer, asked["contextId"], asked["id"])
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    text = "".join(p.get("text", "") for a in done["artifacts"] for p in a["parts"])
    assert text.endswith(ending), text
    assert card["skills"][0]["name"] == card["name"]


async def _send(http: aiohttp.ClientSession, base: str, text: str, context_id: str = "",
                task_id: str = "") -> dict[str, Any]:
    body = {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": text}], "contextId": context_id, "taskId": task_id}}
    async with http.post(base + "/message:send", json=body) as resp:
        task: dict[str, Any] = (await resp.json())["task"]
    return task


@pytest.mark.parametrize("extra", sorted(CASES))
def test_the_base_install_names_the_extra_of_an_adapter(installed: tuple[Path, Path],
                                                        tmp_path: Path, extra: str) -> None:
    _, python = installed
    module = {"langgraph": "langgraph", "pydantic-ai": "pydantic_ai", "adk": "adk"}[extra]
    done = subprocess.run([str(python), "-c", f"import a2a_grpc.adapters.{module}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert f"pip install 'a2a-grpc[{extra}]'" in done.stderr
