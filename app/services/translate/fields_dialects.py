"""What happens to each field of the two dialects Pairwise answers by way of Chat Completions:
OpenAI Responses (``/v1/responses``) and Anthropic Messages (``/v1/messages``).

Each request is made a Chat Completions request (then, for an Ollama-API engine, an Ollama one:
see fields.OPENAI_TO_OLLAMA), so it takes the same way as every request: routing, failover, the
relay to a peer, rented nodes, jobs and usage. Rows as in fields.py (check, fate, how); a field not
listed is refused. The Messages API's operations: ``create`` (/v1/messages) and ``count``
(/v1/messages/count_tokens, which needs no max_tokens).
"""

from __future__ import annotations

from app.services.translate.checks import (
    BOOL,
    INT,
    MODEL,
    NUMBER,
    OBJECT,
    STRING,
    STRINGS,
    choice,
    fields,
    integer,
    list_of,
    one_of,
)
from app.services.translate.fields import F, Table

INPUT = one_of("a string or a list of input items", STRING, list_of(OBJECT, "input items"))
BLOCKS = list_of(fields({"type": STRING}, required=("type",)), "content blocks")
TEXT_OR_BLOCKS = one_of("a string or a list of content blocks", STRING, BLOCKS)
RESPONSE_TOOLS = list_of(fields({"type": STRING}, required=("type",)), "tool objects")
RESPONSE_TOOL_CHOICE = one_of("\"none\", \"auto\", \"required\" or a tool object", STRING, OBJECT)
TEXT = fields({"format": fields({"type": STRING, "name": STRING, "schema": OBJECT, "strict": BOOL}, required=("type",))})
REASONING = fields({"effort": STRING, "summary": STRING})
MESSAGES = list_of(fields({"role": STRING, "content": TEXT_OR_BLOCKS}, required=("role", "content")), "message objects")
SYSTEM = one_of("a string or a list of text blocks", STRING, BLOCKS)
TOOLS = list_of(fields({"name": STRING, "description": STRING, "input_schema": OBJECT, "type": STRING},
                       required=("name",)), "tool objects")
TOOL_CHOICE = fields({"type": STRING, "name": STRING, "disable_parallel_tool_use": BOOL}, required=("type",))
THINKING = fields({"type": STRING, "budget_tokens": INT}, required=("type",))
OUTPUT_CONFIG = fields({"effort": STRING, "format": fields({"type": STRING, "schema": OBJECT}, required=("type", "schema"))})

RESPONSES_TO_CHAT: Table = {
    "model": F("passed", "", MODEL, required=True),
    "input": F("translated", "a string is one user message; items become messages (see input[])", INPUT),
    "input[].message": F("translated", "role and content; developer is system; input_text/output_text parts are text"),
    "input[].input_image": F("translated", "an image_url part (a data: URL; a remote URL is refused by an Ollama "
                                          "engine); a file_id is refused"),
    "input[].function_call": F("translated", "an assistant tool call (call_id is its id)"),
    "input[].function_call_output": F("translated", "a tool message answering call_id"),
    "input[].reasoning": F("dropped", "earlier reasoning is not sent back to the model"),
    "instructions": F("translated", "a system message first (not carried over by previous_response_id)", STRING),
    "previous_response_id": F("translated", "the stored conversation goes first; kept in memory only, the last 256 "
                                           "responses for an hour; an unknown or expired id is refused by name", STRING),
    "store": F("translated", "false: the response is not kept for previous_response_id", BOOL),
    "tools": F("translated", "function tools as Chat Completions tools; built-in tools (web_search, "
                            "file_search, code_interpreter, ...) are refused by name", RESPONSE_TOOLS),
    "tool_choice": F("translated", "\"auto\", \"none\", \"required\" as is; a named function as Chat "
                                  "Completions names it", RESPONSE_TOOL_CHOICE),
    "parallel_tool_calls": F("passed", "", BOOL),
    "text": F("translated", "text.format json_schema / json_object -> response_format; text as is", TEXT),
    "max_output_tokens": F("translated", "max_tokens", integer(1)),
    "temperature": F("passed", "", NUMBER),
    "top_p": F("passed", "", NUMBER),
    "reasoning": F("translated", "reasoning.effort -> reasoning_effort (minimal -> low; none -> not asked)", REASONING),
    "stream": F("translated", "stream, with usage asked for the job's token counts", BOOL),
    "metadata": F("dropped", "OpenAI's storage tags", OBJECT),
    "user": F("dropped", "an end-user label", STRING),
    "safety_identifier": F("dropped", "an end-user label", STRING),
    "prompt_cache_key": F("dropped", "a caching hint", STRING),
    "service_tier": F("dropped", "OpenAI's scheduling hint", STRING),
    "truncation": F("dropped", "the engine refuses a too-long input either way", choice("auto", "disabled")),
    "include": F("dropped", "extra output OpenAI can attach (none is made here)", STRINGS),
    "background": F("refused", "responses are answered while the caller waits (use /v1/batches for later)", BOOL),
    "conversation": F("refused", "OpenAI's stored conversations; use previous_response_id"),
    "prompt": F("refused", "OpenAI's stored prompt templates"),
    "top_logprobs": F("refused", "log probabilities are not translated to the Responses shape", integer(0, 20)),
    "max_tool_calls": F("refused", "no engine counterpart", integer(1)),
}

ANTHROPIC_TO_CHAT: Table = {
    "model": F("passed", "", MODEL, required=True),
    "max_tokens": F("passed", "as max_tokens", integer(1), required=("create",)),
    "messages": F("translated", "role and content blocks (see messages[].content[])", MESSAGES, required=True),
    "messages[].content[].text": F("translated", "text"),
    "messages[].content[].image": F("translated", "an image_url part: base64 sources as data: URLs, url sources "
                                                 "as URLs (an Ollama engine refuses those)"),
    "messages[].content[].tool_use": F("translated", "an assistant tool call (id, name, input as JSON arguments)"),
    "messages[].content[].tool_result": F("translated", "a tool message answering tool_use_id (is_error noted "
                                                       "in its text)"),
    "messages[].content[].thinking": F("dropped", "earlier reasoning is not sent back to the model"),
    "messages[].content[].redacted_thinking": F("dropped", "earlier reasoning is not sent back to the model"),
    "system": F("translated", "a system message first (text blocks joined)", SYSTEM),
    "tools": F("translated", "name, description, input_schema -> function tools; server tools (web_search, "
                            "code_execution, ...) are refused by name", TOOLS),
    "tool_choice": F("translated", "auto, any -> required, tool -> a named function, none; "
                                  "disable_parallel_tool_use -> parallel_tool_calls false", TOOL_CHOICE),
    "stop_sequences": F("translated", "stop", STRINGS),
    "temperature": F("passed", "", NUMBER),
    "top_p": F("passed", "", NUMBER),
    "top_k": F("passed", "as top_k (llama.cpp, vLLM and Ollama read it)", integer(0)),
    "thinking": F("translated", "enabled -> reasoning_effort by budget_tokens (under 4096 low, under 16384 "
                               "medium, else high); adaptive, between_tools -> medium; disabled -> not asked", THINKING),
    "output_config": F("translated", "format json_schema -> response_format json_schema; effort -> "
                                    "reasoning_effort (xhigh, max -> high)", OUTPUT_CONFIG),
    "cache_control": F("dropped", "a prompt caching hint", OBJECT),
    "inference_geo": F("dropped", "where Anthropic runs the model; your machines run it"),
    "speed": F("dropped", "Anthropic's scheduling hint"),
    "diagnostics": F("dropped", "Anthropic's diagnostics request"),
    "user_profile_id": F("dropped", "an end-user label"),
    "workspace_id": F("dropped", "Anthropic's workspace"),
    "stream": F("translated", "stream, with usage asked for the job's token counts", BOOL),
    "metadata": F("dropped", "Anthropic's request tags", OBJECT),
    "service_tier": F("dropped", "Anthropic's scheduling hint", STRING),
    "container": F("refused", "Anthropic's code execution containers"),
    "mcp_servers": F("refused", "remote MCP servers are not called from here", list_of(OBJECT, "server objects")),
}
