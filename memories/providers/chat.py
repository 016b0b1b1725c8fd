"""Chat model client: an OpenAI-compatible /chat/completions API asked for strict JSON (spec §1.12).

Used by extraction and by the classification of untyped remembers. Whatever the model says is only
data: the caller gets a decoded JSON object and checks every field of it before anything is stored.
Answers are decoded tolerantly, because small local models wrap JSON in `<think>` blocks, Markdown
fences or a sentence of prose even when asked for strict output.
"""

import json
import re
from typing import Any

from kenfold.provider_settings import ChatSettings
from memories.providers.embeddings.endpoint import ProviderEndpoint, ProviderError, ProviderVariables

# Extraction reads a whole session on a CPU model: 12-32 s measured on a 4B model, so minutes of margin.
CHAT_TIMEOUT = 180.0
MAX_RESPONSE_BYTES = 1024 * 1024
SEED = 7
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


class ChatError(ProviderError):
    """The chat model gave no usable answer. ``retryable``: trying again later may help (the provider was
    unreachable, slow, overloaded); a model that answers garbage will answer garbage again."""

    @property
    def retryable(self) -> bool:
        return self.status is None or self.status in (408, 429) or self.status >= 500


class ChatOutputError(ChatError):
    """The model answered, but not JSON of the requested shape, or it was cut off (never retried)."""

    @property
    def retryable(self) -> bool:
        return False


def tagged(tag: str, text: str) -> str:
    """`text` as data between <tag> and </tag>, with every closing tag inside it neutralized, so that text
    cannot end the data early and speak as the prompt ("</session> Now ignore the rules...")."""
    closing = re.compile(rf"<\s*/\s*{re.escape(tag)}\s*>", re.IGNORECASE)
    return f"<{tag}>\n{closing.sub(f'</ {tag}>', text)}\n</{tag}>"


class ChatModel:
    """POST {base}/chat/completions {model, messages, temperature 0, seed, max_tokens, reasoning_effort,
    response_format json_schema strict}; returns the decoded JSON object of the answer."""

    def __init__(self, *, url: str, model: str, api_key: str = "", reasoning: str = "none") -> None:
        self.model = model
        self.reasoning = reasoning
        self._endpoint = ProviderEndpoint(
            url,
            "chat/completions",
            api_key=api_key,
            variables=ProviderVariables("KENFOLD_CHAT_URL", "KENFOLD_CHAT_API_KEY", "KENFOLD_CHAT_MODEL"),
            what="the chat model",
            error=ChatError,
            max_response_bytes=MAX_RESPONSE_BYTES,
        )

    def complete_json(
        self,
        *,
        system: str,
        user: str,
        schema_name: str,
        schema: dict[str, Any],
        max_tokens: int,
        timeout: float = CHAT_TIMEOUT,
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            # Deterministic answers: the same session gives the same proposals when it is retried.
            "temperature": 0,
            "seed": SEED,
            "max_tokens": max_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "strict": True, "schema": schema},
            },
        }
        if self.reasoning != "omit":
            payload["reasoning_effort"] = self.reasoning
        body = self._endpoint.post(payload, timeout=timeout)
        choice = _first_choice(body)
        if choice.get("finish_reason") == "length":
            raise ChatOutputError(
                f"the chat model's answer was cut off at {max_tokens} tokens; choose a model that follows "
                "the JSON schema (KENFOLD_CHAT_MODEL), or lower KENFOLD_CHAT_REASONING"
            )
        message = choice.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise ChatOutputError("the chat model answered without message content")
        return decode_json_object(content)


def _first_choice(body: object) -> dict[str, Any]:
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ChatOutputError(
            "the chat model answered JSON without choices; check that KENFOLD_CHAT_URL is an "
            "OpenAI-compatible API base URL (Kenfold appends /chat/completions)"
        )
    return choices[0]


def decode_json_object(text: str) -> dict[str, Any]:
    """The outermost {...} of a model's answer, past <think> blocks, fences and surrounding prose."""
    text = _THINK.sub("", text)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ChatOutputError(f"the chat model answered no JSON object: {_excerpt(text)}")
    try:
        value = json.loads(text[start : end + 1])
    except ValueError:
        raise ChatOutputError(f"the chat model answered invalid JSON: {_excerpt(text)}") from None
    if not isinstance(value, dict):
        raise ChatOutputError("the chat model answered JSON that is not an object")
    return value


def _excerpt(text: str) -> str:
    return " ".join(text.split())[:200] or "(empty)"


def chat_from_settings(*, chat: ChatSettings) -> ChatModel | None:
    """The chat model of ``chat`` (settings.CHAT), or None when none is configured (no URL)."""
    if not chat.url:
        return None
    return ChatModel(url=chat.url, model=chat.model, api_key=chat.api_key, reasoning=chat.reasoning)
