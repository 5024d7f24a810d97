"""What happens to each field of the two dialects Pairwise answers by way of Chat Completions:
OpenAI Responses (``/v1/responses``) and Anthropic Messages (``/v1/messages``).

Each request is made a Chat Completions request (then, for an Ollama-API engine, an Ollama one:
see fields.OPENAI_TO_OLLAMA), so it takes the same way as every request: routing, failover, the
relay to a peer, rented nodes, jobs and usage. Fates as in fields.py; a field not listed is refused.
"""

from __future__ import annotations

from app.services.translate.fields import Table

RESPONSES_TO_CHAT: Table = {
    "model": ("passed", ""),
    "input": ("translated", "a string is one user message; items become messages (see input[])"),
    "input[].message": ("translated", "role and content; developer is system; input_text/output_text parts are text"),
    "input[].input_image": ("translated", "an image_url part (a data: URL; a remote URL is refused by an Ollama "
                                          "engine); a file_id is refused"),
    "input[].function_call": ("translated", "an assistant tool call (call_id is its id)"),
    "input[].function_call_output": ("translated", "a tool message answering call_id"),
    "input[].reasoning": ("dropped", "earlier reasoning is not sent back to the model"),
    "instructions": ("translated", "a system message first (not carried over by previous_response_id)"),
    "previous_response_id": ("translated", "the stored conversation goes first; kept in memory only, the last 256 "
                                           "responses for an hour; an unknown or expired id is refused by name"),
    "store": ("translated", "false: the response is not kept for previous_response_id"),
    "tools": ("translated", "function tools as Chat Completions tools; built-in tools (web_search, "
                            "file_search, code_interpreter, ...) are refused by name"),
    "tool_choice": ("translated", "\"auto\", \"none\", \"required\" as is; a named function as Chat "
                                  "Completions names it"),
    "parallel_tool_calls": ("passed", ""),
    "text": ("translated", "text.format json_schema / json_object -> response_format; text as is"),
    "max_output_tokens": ("translated", "max_tokens"),
    "temperature": ("passed", ""),
    "top_p": ("passed", ""),
    "reasoning": ("translated", "reasoning.effort -> reasoning_effort (minimal -> low; none -> not asked)"),
    "stream": ("translated", "stream, with usage asked for the job's token counts"),
    "metadata": ("dropped", "OpenAI's storage tags"),
    "user": ("dropped", "an end-user label"),
    "safety_identifier": ("dropped", "an end-user label"),
    "prompt_cache_key": ("dropped", "a caching hint"),
    "service_tier": ("dropped", "OpenAI's scheduling hint"),
    "truncation": ("dropped", "the engine refuses a too-long input either way"),
    "include": ("dropped", "extra output OpenAI can attach (none is made here)"),
    "background": ("refused", "responses are answered while the caller waits (use /v1/batches for later)"),
    "conversation": ("refused", "OpenAI's stored conversations; use previous_response_id"),
    "prompt": ("refused", "OpenAI's stored prompt templates"),
    "top_logprobs": ("refused", "log probabilities are not translated to the Responses shape"),
    "max_tool_calls": ("refused", "no engine counterpart"),
}

ANTHROPIC_TO_CHAT: Table = {
    "model": ("passed", ""),
    "max_tokens": ("passed", "as max_tokens"),
    "messages": ("translated", "role and content blocks (see messages[].content[])"),
    "messages[].content[].text": ("translated", "text"),
    "messages[].content[].image": ("translated", "an image_url part: base64 sources as data: URLs, url sources "
                                                 "as URLs (an Ollama engine refuses those)"),
    "messages[].content[].tool_use": ("translated", "an assistant tool call (id, name, input as JSON arguments)"),
    "messages[].content[].tool_result": ("translated", "a tool message answering tool_use_id (is_error noted "
                                                       "in its text)"),
    "messages[].content[].thinking": ("dropped", "earlier reasoning is not sent back to the model"),
    "messages[].content[].redacted_thinking": ("dropped", "earlier reasoning is not sent back to the model"),
    "system": ("translated", "a system message first (text blocks joined)"),
    "tools": ("translated", "name, description, input_schema -> function tools; server tools (web_search, "
                            "code_execution, ...) are refused by name"),
    "tool_choice": ("translated", "auto, any -> required, tool -> a named function, none; "
                                  "disable_parallel_tool_use -> parallel_tool_calls false"),
    "stop_sequences": ("translated", "stop"),
    "temperature": ("passed", ""),
    "top_p": ("passed", ""),
    "top_k": ("passed", "as top_k (llama.cpp, vLLM and Ollama read it)"),
    "thinking": ("translated", "enabled -> reasoning_effort by budget_tokens (under 4096 low, under 16384 "
                               "medium, else high); adaptive, between_tools -> medium; disabled -> not asked"),
    "output_config": ("translated", "format json_schema -> response_format json_schema; effort -> "
                                    "reasoning_effort (xhigh, max -> high)"),
    "cache_control": ("dropped", "a prompt caching hint"),
    "inference_geo": ("dropped", "where Anthropic runs the model; your machines run it"),
    "speed": ("dropped", "Anthropic's scheduling hint"),
    "diagnostics": ("dropped", "Anthropic's diagnostics request"),
    "user_profile_id": ("dropped", "an end-user label"),
    "workspace_id": ("dropped", "Anthropic's workspace"),
    "stream": ("translated", "stream, with usage asked for the job's token counts"),
    "metadata": ("dropped", "Anthropic's request tags"),
    "service_tier": ("dropped", "Anthropic's scheduling hint"),
    "container": ("refused", "Anthropic's code execution containers"),
    "mcp_servers": ("refused", "remote MCP servers are not called from here"),
}
