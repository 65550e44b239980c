"""Provenance in every kept file: the request that made it, written inside the file itself.

A kept image or video carries a small JSON object (schema :data:`PROVENANCE_SCHEMA`): the
model, the prompt, every field of the request with its defaults, the seed, the task id, the
content address, the genlab version and when it was kept. It travels with the file when the
file is renamed, copied or mailed; :func:`genlab.inspect` reads it back. Where it goes in each
format is in :mod:`genlab.media._carriers` (PNG ``iTXt``, JPEG ``COM``, WebP ``XMP``, an MP4/MOV
``uuid`` box); other formats are kept unchanged, with a log line saying so.

This is byte surgery in pure Python, with neither Pillow nor PyAV: the client stamps files
with it and stays light. Nothing is re-encoded; the pictures and samples are the same bytes.

Never written: the API key, an ``Authorization`` header or any field named like a credential,
the value of ``$GENLAB_API_KEY`` wherever it appears, ``Bearer`` tokens, user info in URLs and
the query of a signed URL. ``data:`` URIs are written as the digest of their bytes
(``sha256:<hex>``, the identity the content address uses), never as the data.

Example:
    >>> mp4 = b"\\x00\\x00\\x00\\x10ftypisom\\x00\\x00\\x02\\x00"  # a real one has moov, mdat
    >>> facts = provenance_for({"model": "video-a", "prompt": "a fox"}, task_id="t1")
    >>> stamped = stamp(mp4, facts)
    >>> read_provenance(stamped)["prompt"], read_provenance(mp4)
    ('a fox', None)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import mmap
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from genlab._errors import MediaError
from genlab._version import __version__
from genlab.media import _carriers
from genlab.media._sniff import JPEG, MOV, MP4, PNG, SNIFF_BYTES, WEBP, Sniffed, sniff
from genlab.media._storage import _filesystem, is_remote, media_location, read_media, shown_url

logger = logging.getLogger("genlab")

PROVENANCE_SCHEMA = 1
"""The version of the provenance object (its ``"genlab"`` key); bumped when a field changes
meaning. Readers accept newer versions and read the fields they know."""

MAX_PROVENANCE_BYTES = 256 * 1024
"""The most JSON a file carries. Past it, strings longer than :data:`CUT_AT` characters are cut
(their length and digest kept) and ``"cut": true`` is set; past it still, the request is
dropped (the task id and the content address still name it)."""

CUT_AT = 4096
"""Strings longer than this are cut when the provenance would exceed its size limit."""

API_KEY_ENV = "GENLAB_API_KEY"
"""The client's key variable (``genlab.client.API_KEY_ENV``); its value is masked
wherever it appears. Named here because genlab.media sits below the client."""

PROVENANCE_FORMATS = (PNG, JPEG, WEBP, MP4, MOV)
"""The formats that carry provenance."""

_PUT: dict[Sniffed, Callable[[_carriers.Data, bytes], bytes | None]] = {
    PNG: _carriers.put_png,
    JPEG: _carriers.put_jpeg,
    WEBP: _carriers.put_webp,
    MP4: _carriers.put_isobmff,
    MOV: _carriers.put_isobmff,
}
_GET: dict[Sniffed, Callable[[_carriers.Data], bytes | None]] = {
    PNG: _carriers.get_png,
    JPEG: _carriers.get_jpeg,
    WEBP: _carriers.get_webp,
    MP4: _carriers.get_isobmff,
    MOV: _carriers.get_isobmff,
}
_SCHEMA_KEYS = (
    "genlab", "version", "task_id", "model", "prompt", "seed", "address", "role", "index",
    "completed_at", "kept_at",
)
_SECRET_NAME = re.compile(
    r"^(x[-_])?(api[-_]?key|authorization|proxy[-_]authorization|auth|bearer|cookie|"
    r"(access|refresh|id)[-_]?token|token|secret|client[-_]?secret|password|credentials?)$",
    re.IGNORECASE,
)
_SIGNED_QUERY = re.compile(
    r"^(x-amz-.*|x-goog-.*|signature|sig|token|access_token|key|api_key|apikey|auth|policy|"
    r"key-pair-id|credential|googleaccessid|se|sp|sv|skoid|sktid|password|secret)$",
    re.IGNORECASE,
)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://\S+$")
_BEARER = re.compile(r"\b(bearer)\s+[A-Za-z0-9._~+/=-]{4,}", re.IGNORECASE)


class ValidatedRequest(Protocol):
    """What :func:`provenance_for` reads of a request from :func:`genlab.validate`.

    Example:
        >>> import genlab
        >>> request = genlab.validate({"model": "image-b", "prompt": "a kite"})
        >>> provenance_for(request, task_id="t1")["request"]["resolution"]  # as validated
        '1K'
    """

    @property
    def model_name(self) -> str: ...

    @property
    def prompt_text(self) -> str: ...

    def model_dump(self, *, mode: str = ...) -> dict[str, Any]: ...


def provenance_for(
    request: ValidatedRequest | Mapping[str, Any],
    *,
    task_id: str,
    address: str | None = None,
    seed: int | None = None,
    role: str = "result",
    index: int | None = None,
    completed_at: datetime | str | None = None,
    kept_at: datetime | None = None,
) -> dict[str, Any]:
    """The provenance of one kept file (schema :data:`PROVENANCE_SCHEMA`), already cleaned
    of credentials and data (so the JSON sidecar may carry the same object).

    Args:
        request: the validated request (``genlab.validate(body)``): every field is written,
            defaults included; or a body mapping, written as it is.
        task_id: the service's task id.
        address: the request's content address (``genlab.catalog.content_address``).
        seed: the seed, when the request does not say it (a validated request does).
        role: what the file is: ``"result"``, ``"cover"`` or ``"last_frame"``.
        index: which result, for a task with several.
        completed_at: when the task completed.
        kept_at: when the file was kept (default: now).

    Example:
        >>> facts = provenance_for({"model": "image-b", "prompt": "a kite", "seed": 3},
        ...                        task_id="t1", kept_at=datetime(2026, 1, 2, tzinfo=UTC))
        >>> facts["genlab"], facts["seed"], facts["kept_at"]
        (1, 3, '2026-01-02T00:00:00Z')
    """
    if isinstance(request, Mapping):
        body = dict(request)
        model, prompt = body.get("model"), body.get("prompt")
        seed = seed if seed is not None else body.get("seed")
    else:
        body = request.model_dump(mode="json")
        body["model"] = model = request.model_name
        prompt = request.prompt_text or None
        seed = seed if seed is not None else getattr(request, "seed", None)
    facts = {
        "genlab": PROVENANCE_SCHEMA,
        "version": __version__,
        "task_id": task_id,
        "model": model,
        "prompt": prompt,
        "seed": seed,
        "request": body,
        "address": address,
        "role": role,
        "index": index,
        "completed_at": _when(completed_at),
        "kept_at": _when(kept_at or datetime.now(UTC)),
    }
    cleaned: dict[str, Any] = _clean(facts, _secrets())
    return cleaned


def stamp(data: bytes, provenance: Mapping[str, Any]) -> bytes:
    """``data`` (a whole PNG, JPEG, WebP, MP4 or MOV file) with ``provenance`` inside it.

    An earlier stamp is replaced, not repeated. Bytes of another format (GIF, WebM, ...) or
    a broken file come back unchanged (the same object), with a log line saying why.

    Example:
        >>> import io, pathlib, tempfile
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (64, 48), "red").save(buffer, "PNG")
        >>> png = buffer.getvalue()
        >>> facts = provenance_for({"model": "image-b", "prompt": "a kite"}, task_id="t1")
        >>> read_provenance(stamp(png, facts))["task_id"], read_provenance(png)
        ('t1', None)
    """
    kind = sniff(data[:SNIFF_BYTES])
    put = _PUT.get(kind) if kind else None
    if put is None:
        logger.info(
            "genlab: %s files carry no provenance; kept without it (the JSON sidecar has it)",
            kind.mime if kind else "unrecognised",
        )
        return data
    stamped = put(data, encode(provenance))
    if stamped is None:
        logger.warning("genlab: this %s file could not be read; kept without provenance",
                       kind.mime if kind else "")
        return data
    return stamped


def stamp_file(
    location: str | os.PathLike[str],
    provenance: Mapping[str, Any],
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> bool:
    """Write ``provenance`` into a kept file, a local path or a URL (``s3://...``).

    A local file is replaced atomically (a new file beside it, then a rename; its permissions
    kept), so a crash leaves the old file or the new one, never half of either. Returns False
    when the format carries no provenance (the file is left as it was).

    Raises:
        OSError: a local file cannot be read or written.
        MediaError: a remote file cannot be read or written.

    Example:
        >>> import io, pathlib, tempfile
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (64, 48), "red").save(buffer, "PNG")
        >>> png = buffer.getvalue()
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "kite.png"
        >>> _ = path.write_bytes(png)
        >>> stamp_file(path, provenance_for({"model": "image-b", "prompt": "a kite"}, task_id="t1"))
        True
        >>> read_provenance(path)["prompt"]
        'a kite'
    """
    where = media_location(location)
    data = read_media(where, storage_options=storage_options)
    stamped = stamp(data, provenance)
    if stamped is data:
        return False
    if isinstance(where, Path):
        _replace(where, stamped)
        return True
    fs, path = _filesystem(where, storage_options)
    try:
        fs.pipe_file(path, stamped)
    except Exception as exc:  # any backend error: the file's URL, no credential
        raise MediaError(f"could not write provenance ({type(exc).__name__})", url=where) from None
    return True


def read_provenance(
    source: bytes | str | os.PathLike[str],
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The provenance inside a file (its bytes, a path or a URL); None when it has none.

    A local video is not read whole: only its top-level box headers and genlab's box.

    Raises:
        OSError: a local file cannot be read.
        MediaError: a remote file cannot be read.

    Example:
        >>> import io, pathlib, tempfile
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (64, 48), "red").save(buffer, "PNG")
        >>> png = buffer.getvalue()
        >>> stamped = stamp(png, provenance_for({"model": "image-b", "prompt": "a kite"},
        ...                                     task_id="t1"))
        >>> found = read_provenance(stamped)
        >>> found["model"], found["task_id"]
        ('image-b', 't1')
    """
    if isinstance(source, bytes | bytearray):
        return _decode(_payload(source))
    if is_remote(source):
        return _decode(_payload(read_media(source, storage_options=storage_options)))
    with open(media_location(source), "rb") as file:
        if os.fstat(file.fileno()).st_size == 0:
            return None
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _decode(_payload(data))


def encode(provenance: Mapping[str, Any]) -> bytes:
    """The JSON a file carries: cleaned of credentials and data, ``"genlab"`` first,
    within :data:`MAX_PROVENANCE_BYTES`.

    Example:
        >>> encode({"model": "m", "request": {"api_key": "k", "image": "data:,abc"}})
        b'{"genlab":1,"model":"m","request":{"image":"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}}'
    """  # noqa: E501
    facts = _clean(dict(provenance), _secrets())
    assert isinstance(facts, dict)
    facts = {"genlab": facts.pop("genlab", PROVENANCE_SCHEMA), **facts}
    text = _dumps(facts)
    if len(text) > MAX_PROVENANCE_BYTES:
        facts = {**_cut(facts), "cut": True}
        text = _dumps(facts)
    if len(text) > MAX_PROVENANCE_BYTES:
        facts["request"] = None
        text = _dumps(facts)
    if len(text) > MAX_PROVENANCE_BYTES:
        text = _dumps({k: facts.get(k) for k in _SCHEMA_KEYS} | {"cut": True})
    return text


def _payload(data: _carriers.Data) -> bytes | None:
    kind = sniff(bytes(data[:SNIFF_BYTES]))
    get = _GET.get(kind) if kind else None
    return get(data) if get else None


def _decode(payload: bytes | None) -> dict[str, Any] | None:
    if payload is None:
        return None
    try:
        facts = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        logger.warning("genlab: the file's provenance is not readable JSON; ignored")
        return None
    if not isinstance(facts, dict) or not isinstance(facts.get("genlab"), int):
        return None
    return facts


def _dumps(facts: Mapping[str, Any]) -> bytes:
    return json.dumps(facts, ensure_ascii=False, separators=(",", ":"), default=str).encode()


def _when(moment: datetime | str | None) -> str | None:
    if not isinstance(moment, datetime):
        return moment
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    text = moment.astimezone(UTC).isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")


def _secrets() -> list[str]:
    key = os.environ.get(API_KEY_ENV, "").strip()
    return [key] if len(key) >= 4 else []


def _clean(value: Any, secrets: list[str]) -> Any:
    """``value`` without credentials or data (see the module's docstring)."""
    if isinstance(value, Mapping):
        return {
            str(k): _clean(v, secrets) for k, v in value.items()
            if not _SECRET_NAME.match(str(k))
        }
    if isinstance(value, list | tuple):
        return [_clean(v, secrets) for v in value]
    if not isinstance(value, str):
        return value
    if value[:5].lower() == "data:":
        return _data_digest(value)
    for secret in secrets:
        value = value.replace(secret, "***")
    value = _BEARER.sub(r"\1 ***", value)
    return _url_without_credentials(value) if _URL.match(value) else value


def _data_digest(uri: str) -> str:
    """A ``data:`` URI's identity, as ``genlab.catalog.media_digest`` of its bytes."""
    head, _, payload = uri.partition(",")
    try:
        data = base64.b64decode(payload) if head.lower().endswith(";base64") else payload.encode()
    except (binascii.Error, ValueError):
        data = payload.encode()
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _url_without_credentials(url: str) -> str:
    """The URL without user info, and without its query when that signs it."""
    try:
        parts = urlsplit(url)
        signed = any(_SIGNED_QUERY.match(name) for name, _ in parse_qsl(parts.query, True))
    except ValueError:
        return shown_url(url)
    netloc = parts.netloc.rpartition("@")[2]
    if signed:
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _cut(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value]
    if isinstance(value, str) and len(value) > CUT_AT:
        digest = hashlib.sha256(value.encode()).hexdigest()
        return f"{value[:CUT_AT]}… [cut: {len(value)} characters, sha256:{digest}]"
    return value


def _replace(path: Path, data: bytes) -> None:
    descriptor, staged = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
        shutil.copymode(path, staged)
        os.replace(staged, path)
    except BaseException:
        Path(staged).unlink(missing_ok=True)
        raise
