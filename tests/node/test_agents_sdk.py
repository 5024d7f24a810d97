"""The openai-agents SDK with its default model (the Responses API) through Pairwise: an agent
that calls a function tool and answers, run whole and streamed, over both engine APIs, at a
node's front door and through a peer relay."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest

from tests.node.conftest import Route

pytest.importorskip("agents")


def run_agent(route: Route, model: str, stream: bool) -> tuple[str, list[str]]:
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)
    called: list[str] = []

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        called.append(city)
        return "sunny"

    async def go() -> str:
        client = openai.AsyncOpenAI(base_url=f"{route.url}/v1", api_key="unused", max_retries=0)
        # OpenAIResponsesModel is the SDK's default model class (what Agent(model="name") resolves to).
        agent = Agent(name="helper", instructions="Answer briefly.", tools=[get_weather],
                      model=OpenAIResponsesModel(model=model, openai_client=client))
        if stream:
            result: Any = Runner.run_streamed(agent, "weather in Paris?")
            async for _ in result.stream_events():
                pass
        else:
            result = await Runner.run(agent, "weather in Paris?")
        await client.close()
        return str(result.final_output)

    return asyncio.run(go()), called


@pytest.mark.parametrize("model", ["oa-model", "ol-model"])
@pytest.mark.parametrize("stream", [False, True])
def test_an_agent_calls_its_tool_and_answers(route: Route, model: str, stream: bool) -> None:
    answer, called = run_agent(route, model, stream)
    assert called == ["tiny"]  # the tiny model calls the first tool it is offered, with schema-made arguments
    assert answer
    engine = route.openai_engine if model == "oa-model" else route.ollama_engine
    last = engine.stats()["last_body"]["messages"]
    assert last[0]["role"] == "system" and last[-1]["role"] == "tool" and last[-1]["content"] == "sunny"


def test_the_default_model_is_the_responses_model() -> None:
    from agents import Agent
    from agents.models.openai_provider import OpenAIProvider

    model = OpenAIProvider(api_key="x", base_url="http://127.0.0.1:1/v1").get_model("m")
    assert type(model).__name__ == "OpenAIResponsesModel" and Agent(name="a").model is None
