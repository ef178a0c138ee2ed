"""Run a media model entry through an OpenAI-compatible HTTP provider (notes §9).

Audio goes to ``{baseUrl}/audio/transcriptions`` as multipart form data; images go to
``{baseUrl}/chat/completions`` as a ``data:`` URL in a vision message. The HTTP call itself is
a parameter (``HttpPost``; ``provider_post`` by default) so tests can use a local fake server.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import aiohttp

from enrichment.pipeline.config.media import (
    Capability,
    resolve_headers,
    resolve_max_bytes,
    resolve_max_chars,
    resolve_prompt,
    resolve_timeout_seconds,
    trim_output,
)
from enrichment.pipeline.media.entry import (
    EntryJob,
    EntryResult,
    LocalFile,
    ModelAttempt,
    ProviderAccess,
    check_audio_size,
    normalize_provider_id,
)
from enrichment.pipeline.net.http import tls_context

DEFAULT_BASE_URLS: Mapping[str, str] = {
    "openai": "https://api.openai.com/v1",
    "groq": "https://api.groq.com/openai/v1",
    "mistral": "https://api.mistral.ai/v1",
}
DEFAULT_AUDIO_MODELS: Mapping[str, str] = {
    "groq": "whisper-large-v3-turbo",
    "openai": "gpt-4o-mini-transcribe",
    "deepgram": "nova-3",
    "mistral": "voxtral-mini-latest",
}
DEFAULT_IMAGE_MODELS: Mapping[str, str] = {  # notes §2.2 (auto key mode)
    "openai": "gpt-5-mini",
    "anthropic": "claude-opus-4-6",
    "google": "gemini-3-flash-preview",
    "minimax": "MiniMax-VL-01",
    "minimax-portal": "MiniMax-VL-01",
    "zai": "glm-4.6v",
}


@dataclass(frozen=True)
class HttpRequest:
    url: str
    headers: tuple[tuple[str, str], ...]
    timeout_seconds: float
    json_body: object | None = None
    form: tuple[tuple[str, str], ...] = ()
    file: tuple[str, str, bytes, str] | None = None  # (field, file name, data, mime)


@dataclass(frozen=True)
class HttpResponse:
    status: int
    body: bytes


HttpPost = Callable[[HttpRequest], Awaitable[HttpResponse]]
# A transcript or an image description is a few KiB; a provider answering more is broken.
MAX_PROVIDER_RESPONSE_BYTES = 16 * 1024 * 1024


async def provider_post(request: HttpRequest) -> HttpResponse:
    """Default HTTP call: one POST to the provider the operator configured (aiohttp, verified
    TLS, no redirects followed, no proxy from the environment); the answer is read up to
    ``MAX_PROVIDER_RESPONSE_BYTES``."""
    form: aiohttp.FormData | None = None
    if request.file is not None:
        field, name, data, mime = request.file
        form = aiohttp.FormData(list(request.form))
        form.add_field(field, data, filename=name, content_type=mime)
    timeout = aiohttp.ClientTimeout(total=request.timeout_seconds)
    connector = aiohttp.TCPConnector(ssl=tls_context())
    async with (
        aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False) as session,
        session.post(
            request.url,
            headers=dict(request.headers),
            allow_redirects=False,
            data=form,
            json=None if form is not None else request.json_body,
        ) as response,
    ):
        content = bytearray()
        async for chunk in response.content.iter_chunked(64 * 1024):
            content.extend(chunk)
            if len(content) > MAX_PROVIDER_RESPONSE_BYTES:
                raise RuntimeError(
                    f"provider answer larger than {MAX_PROVIDER_RESPONSE_BYTES} bytes"
                )
        return HttpResponse(response.status, bytes(content))


async def run_provider_entry(
    job: EntryJob, http: HttpPost, providers: Mapping[str, ProviderAccess]
) -> EntryResult:
    provider = normalize_provider_id(job.entry.provider)
    access = providers.get(provider, ProviderAccess())
    base_url = job.entry.base_url or job.config.base_url or access.base_url
    base_url = base_url or DEFAULT_BASE_URLS.get(provider)

    def attempt(
        outcome: Literal["success", "skipped", "failed"], reason: str | None, model: str | None
    ) -> ModelAttempt:
        return ModelAttempt("provider", provider or None, model, outcome, reason)

    if job.capability == "video":
        reason = f"unsupported: video description is not available through provider {provider}"
        return attempt("skipped", reason, job.entry.model), None
    model = job.entry.model or (
        DEFAULT_AUDIO_MODELS if job.capability == "audio" else DEFAULT_IMAGE_MODELS
    ).get(provider)
    if not model:
        return attempt("failed", f"no {job.capability} model for provider {provider}", None), None
    if not base_url:
        return attempt("failed", f"provider {provider} has no base URL", model), None
    file = await job.load(resolve_max_bytes(job.entry, job.config, job.capability))
    check_audio_size(job, file)
    if not access.api_key:
        return attempt("failed", f"no API key for provider {provider}", model), None
    with open(file.path, "rb") as handle:
        data = handle.read()
    request = _build_request(job, base_url.rstrip("/"), access.api_key, model, file, data)
    response = await http(request)
    if not 200 <= response.status < 300:
        return attempt("failed", f"HTTP {response.status} from provider {provider}", model), None
    text = trim_output(
        _response_text(job.capability, response.body),
        resolve_max_chars(job.entry, job.config, job.capability),
    )
    if not text:
        return attempt("skipped", "empty output", model), None
    return attempt("success", None, model), text


def _build_request(
    job: EntryJob, base_url: str, api_key: str, model: str, file: LocalFile, data: bytes
) -> HttpRequest:
    headers = {"Authorization": f"Bearer {api_key}", **resolve_headers(job.entry, job.config)}
    timeout = resolve_timeout_seconds(job.entry, job.config, job.capability)
    prompt = resolve_prompt(job.entry, job.config, job.capability)
    mime = file.mime or "application/octet-stream"
    if job.capability == "audio":
        form = [("model", model)]
        language = job.entry.language or job.config.language
        if language:
            form.append(("language", language))
        if job.entry.prompt or job.config.prompt:
            form.append(("prompt", prompt))
        name = file.name or os.path.basename(file.path)
        return HttpRequest(
            f"{base_url}/audio/transcriptions",
            tuple(headers.items()),
            timeout,
            form=tuple(form),
            file=("file", name, data, mime),
        )
    data_url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    content = [
        {"type": "text", "text": prompt},
        {"type": "image_url", "image_url": {"url": data_url}},
    ]
    body = {"model": model, "messages": [{"role": "user", "content": content}]}
    return HttpRequest(
        f"{base_url}/chat/completions", tuple(headers.items()), timeout, json_body=body
    )


def _response_text(capability: Capability, body: bytes) -> str:
    try:
        parsed = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError as error:
        raise RuntimeError("provider returned invalid JSON") from error
    if capability == "audio":
        text = parsed.get("text") if isinstance(parsed, dict) else None
    else:
        try:
            text = parsed["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            text = None
    if not isinstance(text, str):
        raise RuntimeError("provider response has no text")
    return text
