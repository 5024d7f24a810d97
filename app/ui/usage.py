"""How to call a model through this node, as text a user can copy: the base URLs, the model id,
a curl line and a few lines of Python with the official OpenAI client."""

from __future__ import annotations


def usage_snippets(listen: str, model: str) -> str:
    base = f"http://{listen}"
    return "\n".join([
        f"OpenAI base URL: {base}/v1    Ollama URL: {base}    model: {model}",
        "",
        f"curl {base}/v1/chat/completions -H 'Content-Type: application/json' \\",
        f"  -d '{{\"model\": \"{model}\", \"messages\": [{{\"role\": \"user\", \"content\": \"Hello\"}}]}}'",
        "",
        "from openai import OpenAI",
        f"client = OpenAI(base_url=\"{base}/v1\", api_key=\"unused\")",
        f"reply = client.chat.completions.create(model=\"{model}\", messages=[{{\"role\": \"user\", \"content\": \"Hello\"}}])",
        "print(reply.choices[0].message.content)",
    ])
