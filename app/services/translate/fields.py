"""What happens to each request field when a request crosses from one API to the other.

One table per direction, read by the translators (a field not listed is refused by name)
and by the README's field table (tests/unit/test_field_table.py keeps the two the same).

Fates: ``passed`` (same name and meaning), ``translated`` (another name or shape),
``dropped`` (a hint with no effect on the output), ``refused`` (400 naming the field).
"""

from __future__ import annotations

from typing import Literal

Fate = Literal["passed", "translated", "dropped", "refused"]
Table = dict[str, tuple[Fate, str]]

# Ollama caller -> OpenAI-API engine (/api/chat, /api/generate, /api/embed, /api/embeddings).
OLLAMA_TO_OPENAI: Table = {
    "model": ("translated", "the engine's name for the model; answers carry the name the caller sent"),
    "messages": ("translated", "roles and text as is; see images, tool_calls, tool_name, thinking"),
    "messages[].images": ("translated", "base64 images become image_url parts with data: URLs"),
    "messages[].tool_calls": ("translated", "arguments object -> JSON string; each call gets an id"),
    "messages[].tool_name": ("translated", "tool_call_id of the assistant call it answers"),
    "messages[].thinking": ("dropped", "earlier reasoning is not sent back to the model"),
    "prompt": ("passed", "to /v1/completions; system is put before it"),
    "system": ("translated", "put before the prompt (generate)"),
    "suffix": ("passed", "completions suffix"),
    "raw": ("dropped", "/v1/completions takes the prompt as is (raw)"),
    "images": ("refused", "/v1/completions takes no images; use /api/chat (an empty list is no images)"),
    "template": ("refused", "an OpenAI-API engine applies its own template"),
    "context": ("refused", "token context of an earlier answer has no OpenAI counterpart"),
    "tools": ("passed", "same shape in both APIs"),
    "format": ("translated", "\"json\" -> response_format json_object; a schema -> json_schema"),
    "think": ("translated", "a level -> reasoning_effort; true -> \"medium\"; false -> "
                            "chat_template_kwargs.enable_thinking=false"),
    "logprobs": ("passed", "chat: logprobs; generate: logprobs as top_logprobs count"),
    "top_logprobs": ("passed", "chat: top_logprobs"),
    "stream": ("translated", "stream, and stream_options.include_usage for the job's token counts"),
    "keep_alive": ("dropped", "a hint; a load/unload request (no prompt) is answered as Ollama does"),
    "input": ("passed", "embeddings input"),
    "truncate": ("dropped", "OpenAI engines refuse too-long input either way"),
    "dimensions": ("passed", "embeddings dimensions"),
    "options": ("translated", "see options.*"),
    "max_output_tokens": ("dropped", "not an Ollama field (Ollama ignores it); the budget is options.num_predict"),
    "temperature": ("dropped", "not an Ollama field at the top level (Ollama ignores it); use options.temperature"),
    "top_p": ("dropped", "not an Ollama field at the top level (Ollama ignores it); use options.top_p"),
    "options.temperature": ("passed", ""),
    "options.top_p": ("passed", ""),
    "options.seed": ("passed", ""),
    "options.stop": ("passed", ""),
    "options.presence_penalty": ("passed", ""),
    "options.frequency_penalty": ("passed", ""),
    "options.num_predict": ("translated", "max_tokens"),
    "options.top_k": ("passed", "as top_k (llama.cpp and vLLM read it)"),
    "options.min_p": ("passed", "as min_p (llama.cpp, vLLM read it)"),
    "options.num_ctx": ("dropped", "a window hint: the engine's window is set where it runs; "
                                   "routing sends the request to a copy whose window holds it"),
    "options.num_gpu": ("dropped", "a load hint"),
    "options.num_thread": ("dropped", "a load hint"),
    "options.num_batch": ("dropped", "a load hint"),
    "options.main_gpu": ("dropped", "a load hint"),
    "options.use_mmap": ("dropped", "a load hint"),
    "options.numa": ("dropped", "a load hint"),
    "options.low_vram": ("dropped", "a load hint"),
    "options.repeat_penalty": ("translated", "repeat_penalty (llama.cpp reads it); repetition_penalty where the "
                                             "engine is vLLM (its /v1/models says owned_by vllm)"),
    "options.repeat_last_n": ("refused", "no OpenAI counterpart"),
    "options.typical_p": ("refused", "no OpenAI counterpart"),
    "options.mirostat": ("refused", "no OpenAI counterpart"),
    "options.num_keep": ("refused", "no OpenAI counterpart"),
    "options.penalize_newline": ("refused", "no OpenAI counterpart"),
}

# An engine's own name for a field, where it has one: the engine as its /v1/models calls itself
# (``owned_by``). vLLM reads ``repetition_penalty`` and ignores ``repeat_penalty``.
ENGINE_NAMES: dict[str, dict[str, str]] = {"vllm": {"options.repeat_penalty": "repetition_penalty"}}

# OpenAI caller -> Ollama-API engine (/v1/chat/completions, /v1/completions, /v1/embeddings).
OPENAI_TO_OLLAMA: Table = {
    "model": ("translated", "the engine's name for the model; answers carry the name the caller sent"),
    "messages": ("translated", "roles as is; text parts joined into content"),
    "messages[].content[].image_url": ("translated", "data: URLs become base64 images; remote URLs are "
                                                     "refused (Pairwise never fetches them)"),
    "messages[].tool_calls": ("translated", "arguments JSON string -> object"),
    "messages[].tool_call_id": ("translated", "tool_name of the call it answers"),
    "messages[].name": ("dropped", "a participant label"),
    "messages[].refusal": ("dropped", "an earlier refusal's text"),
    "prompt": ("passed", "a string or a list of strings (joined); token ids are refused"),
    "suffix": ("passed", "generate suffix"),
    "tools": ("passed", "same shape in both APIs"),
    "tool_choice": ("translated", "\"auto\" as is; \"none\" sends no tools; \"required\" or a named "
                                  "function: the answer is constrained (format) to the tool's parameters and "
                                  "comes back as that call"),
    "parallel_tool_calls": ("translated", "true is Ollama's behaviour; false keeps the first call"),
    "response_format": ("translated", "json_object -> format \"json\"; json_schema -> format schema"),
    "reasoning_effort": ("translated", "think level"),
    "temperature": ("translated", "options.temperature"),
    "top_p": ("translated", "options.top_p"),
    "top_k": ("translated", "options.top_k"),
    "min_p": ("translated", "options.min_p"),
    "seed": ("translated", "options.seed"),
    "stop": ("translated", "options.stop"),
    "presence_penalty": ("translated", "options.presence_penalty"),
    "frequency_penalty": ("translated", "options.frequency_penalty"),
    "max_tokens": ("translated", "options.num_predict"),
    "max_completion_tokens": ("translated", "options.num_predict"),
    "n": ("translated", "1 as is; more than 1 is refused"),
    "logprobs": ("translated", "chat: logprobs; completions: logprobs + top_logprobs count"),
    "top_logprobs": ("passed", ""),
    "stream": ("passed", ""),
    "stream_options": ("translated", "the usage chunk is sent only when include_usage is asked"),
    "input": ("passed", "a string or a list of strings; token ids are refused"),
    "dimensions": ("passed", "embeddings dimensions"),
    "encoding_format": ("translated", "base64 is encoded by Pairwise from the engine's floats"),
    "user": ("dropped", "an end-user label"),
    "store": ("dropped", "OpenAI's storage flag"),
    "metadata": ("dropped", "OpenAI's storage tags"),
    "service_tier": ("dropped", "OpenAI's scheduling hint"),
    "logit_bias": ("refused", "no Ollama counterpart"),
    "echo": ("refused", "no Ollama counterpart"),
    "best_of": ("refused", "no Ollama counterpart"),
    "modalities": ("refused", "no Ollama counterpart"),
    "audio": ("refused", "no Ollama counterpart"),
    "prediction": ("refused", "no Ollama counterpart"),
    "web_search_options": ("refused", "no Ollama counterpart"),
}



def is_empty(value: object) -> bool:
    """Ollama reads an empty value as an absent one (litellm sends ``"images": []`` on every generate)."""
    return value is None or value == "" or value == [] or value == {}


def fate(table: Table, name: str) -> Fate:
    """A field's fate; a field the table does not know is refused."""
    return table.get(name, ("refused", ""))[0]
