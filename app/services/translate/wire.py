"""The wire shapes the translators read: OpenAI Chat Completions (request, answer, chunk), Ollama
chat/generate/embed, Anthropic Messages and OpenAI Responses requests.

Static types only (issue 31: nothing is checked per chunk). A request is checked by its field table
(validate.py) before it is read as one of these; an engine's answer is read as the API documents it,
and the few values whose type decides what is sent are narrowed where they are read. Every shape is
``total=False``: each operation sends its own subset, and a reader uses ``.get``.
"""

from __future__ import annotations

from typing import TypedDict, cast

from app.services.json_types import JsonObject, JsonValue

# OpenAI Chat Completions


class OpenAIFunctionCall(TypedDict, total=False):
    name: str
    arguments: str


class OpenAIToolCall(TypedDict, total=False):
    index: int
    id: str
    type: str
    function: OpenAIFunctionCall


class OpenAIMessage(TypedDict, total=False):
    """A message of a request (its content may be a list of parts)."""

    role: str
    content: str | list[JsonObject] | None
    refusal: str | None
    reasoning_content: str | None
    reasoning: str | None
    tool_calls: list[OpenAIToolCall]
    tool_call_id: str
    name: str


class OpenAIReply(TypedDict, total=False):
    """An answer's message, or a streamed delta of one: its content is text."""

    role: str
    content: str | None
    refusal: str | None
    reasoning_content: str | None
    reasoning: str | None
    tool_calls: list[OpenAIToolCall]


class OpenAIUsage(TypedDict, total=False):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class OpenAITopLogprob(TypedDict, total=False):
    token: str
    logprob: float
    bytes: list[int]


class OpenAILogprobToken(OpenAITopLogprob, total=False):
    top_logprobs: list[OpenAITopLogprob]


class OpenAILogprobs(TypedDict, total=False):
    """Chat's ``content`` list, or the legacy completions' columns."""

    content: list[OpenAILogprobToken]
    refusal: None
    tokens: list[str]
    token_logprobs: list[float]
    top_logprobs: list[dict[str, float]]
    text_offset: list[int]


class OpenAIChoice(TypedDict, total=False):
    index: int
    message: OpenAIReply
    delta: OpenAIReply
    text: str
    finish_reason: str | None
    logprobs: OpenAILogprobs | None


class OpenAIEmbedding(TypedDict, total=False):
    object: str
    index: int
    embedding: list[float] | str


class OpenAIAnswer(TypedDict, total=False):
    """A whole answer, a streamed chunk, or an embeddings answer."""

    id: str
    object: str
    created: int
    model: str
    choices: list[OpenAIChoice]
    usage: OpenAIUsage | None
    data: list[OpenAIEmbedding]
    error: JsonValue


class OpenAIFunction(TypedDict, total=False):
    name: str
    description: str
    parameters: JsonObject
    strict: bool


class OpenAITool(TypedDict, total=False):
    type: str
    function: OpenAIFunction


class OpenAIToolChoice(TypedDict, total=False):
    type: str
    function: OpenAIFunction
    name: str


class OpenAIRequest(TypedDict, total=False):
    """Chat, completions and embeddings requests; the fields the translators read or write by name
    (the rest go by their tables, fields.py)."""

    model: str
    messages: list[OpenAIMessage]
    prompt: str | list[str] | list[int] | list[list[int]]
    input: str | list[str] | list[int] | list[list[int]]
    suffix: str
    tools: list[OpenAITool]
    tool_choice: str | OpenAIToolChoice
    parallel_tool_calls: bool
    response_format: JsonObject
    reasoning_effort: str
    logprobs: bool | int
    top_logprobs: int
    n: int
    dimensions: int
    encoding_format: str
    stream: bool
    stream_options: JsonObject
    max_tokens: int
    stop: JsonValue
    temperature: float
    top_p: float
    top_k: int
    chat_template_kwargs: JsonObject


# Ollama


class OllamaFunctionCall(TypedDict, total=False):
    name: str
    arguments: JsonObject


class OllamaToolCall(TypedDict, total=False):
    id: str
    function: OllamaFunctionCall


class OllamaMessage(TypedDict, total=False):
    role: str
    content: str
    thinking: str
    images: list[str]
    tool_calls: list[OllamaToolCall]
    tool_name: str


class OllamaLogprob(TypedDict, total=False):
    token: str
    logprob: float
    top_logprobs: list[OllamaLogprob]


class OllamaAnswer(TypedDict, total=False):
    """A whole chat/generate answer, a streamed line, or an embed answer."""

    model: str
    created_at: str
    message: OllamaMessage
    response: str
    thinking: str
    done: bool
    done_reason: str
    prompt_eval_count: int
    eval_count: int
    total_duration: int
    load_duration: int
    prompt_eval_duration: int
    eval_duration: int
    context: list[int]
    logprobs: list[OllamaLogprob]
    embeddings: list[list[float]]
    embedding: list[float]
    error: JsonValue


class OllamaRequest(TypedDict, total=False):
    """Chat, generate and embed requests."""

    model: str
    messages: list[OllamaMessage]
    prompt: str
    system: str
    suffix: str
    images: list[str]
    input: str | list[str]
    options: JsonObject
    format: JsonValue
    think: bool | str | None
    logprobs: bool
    top_logprobs: int
    tools: list[JsonObject]
    stream: bool
    raw: bool
    dimensions: int
    keep_alive: JsonValue


# Anthropic Messages


class AnthropicBlock(TypedDict, total=False):
    """A content block (a message's blocks have their ``type`` checked, a tool result's are only
    objects); each value is narrowed where it is read."""

    type: JsonValue
    text: JsonValue
    source: JsonValue
    id: JsonValue
    name: JsonValue
    input: JsonValue
    tool_use_id: JsonValue
    content: JsonValue
    is_error: JsonValue


class AnthropicMessage(TypedDict, total=False):
    role: str
    content: str | list[AnthropicBlock]


class AnthropicTool(TypedDict, total=False):
    type: str | None
    name: str
    description: str
    input_schema: JsonObject


class AnthropicToolChoice(TypedDict, total=False):
    type: str
    name: str
    disable_parallel_tool_use: bool


class AnthropicThinking(TypedDict, total=False):
    type: str
    budget_tokens: int


class AnthropicFormat(TypedDict, total=False):
    type: str
    schema: JsonObject


class AnthropicOutputConfig(TypedDict, total=False):
    effort: str
    format: AnthropicFormat


class AnthropicRequest(TypedDict, total=False):
    model: str
    system: str | list[AnthropicBlock]
    messages: list[AnthropicMessage]
    max_tokens: int
    tools: list[AnthropicTool]
    tool_choice: AnthropicToolChoice
    stop_sequences: list[str]
    thinking: AnthropicThinking
    output_config: AnthropicOutputConfig
    stream: bool


# OpenAI Responses


class ResponsesFormat(TypedDict, total=False):
    type: str
    name: str
    schema: JsonObject
    strict: bool


class ResponsesText(TypedDict, total=False):
    format: ResponsesFormat


class ResponsesReasoning(TypedDict, total=False):
    effort: str | None
    summary: str | None


class ResponsesTool(TypedDict, total=False):
    """Only ``type`` is checked here; the rest is checked as the chat tool it becomes."""

    type: str
    name: JsonValue
    description: JsonValue
    parameters: JsonValue
    strict: JsonValue


class ResponsesPart(TypedDict, total=False):
    type: str
    text: str
    annotations: list[JsonObject]
    logprobs: list[JsonObject]


class ResponsesItem(TypedDict, total=False):
    """An output item: a message, a reasoning item or a function call."""

    type: str
    id: str
    status: str
    role: str
    content: list[ResponsesPart]
    summary: list[JsonObject]
    call_id: str
    name: str
    arguments: str


class ResponsesObject(TypedDict, total=False):
    """A response as the openai SDK types it (``openai.types.responses.Response``)."""

    id: str
    object: str
    created_at: int
    status: str
    model: str
    output: list[ResponsesItem]
    error: JsonObject | None
    incomplete_details: JsonObject | None
    instructions: str | None
    metadata: JsonObject
    parallel_tool_calls: bool
    temperature: float | None
    top_p: float | None
    tool_choice: JsonValue
    tools: list[ResponsesTool]
    max_output_tokens: int | None
    previous_response_id: str | None
    store: bool
    reasoning: ResponsesReasoning
    text: ResponsesText
    truncation: str
    user: str | None
    usage: JsonObject | None


class ResponsesRequest(TypedDict, total=False):
    model: str
    instructions: str
    input: str | list[JsonObject]
    tools: list[ResponsesTool]
    tool_choice: JsonValue
    parallel_tool_calls: bool
    temperature: float
    top_p: float
    max_output_tokens: int
    text: ResponsesText
    reasoning: ResponsesReasoning
    stream: bool
    store: bool
    previous_response_id: str
    metadata: JsonObject
    user: str


def as_json(shape: OpenAIRequest | OllamaRequest | OpenAIAnswer | OllamaAnswer) -> JsonObject:
    """A wire shape as the JSON object it is (each of its fields holds JSON values), for the code that
    passes a body on without reading it (the inference service, the upstream clients)."""
    return cast(JsonObject, shape)
