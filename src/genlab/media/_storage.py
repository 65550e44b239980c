"""Where saved media live: a local folder, or any fsspec URL (``s3://bucket/prefix/``, ...).

:meth:`genlab.Client.download` saves into a *location*: a local folder (a path, or a
``file://`` URL), or a remote URL that fsspec understands. Without one it uses the
``GENLAB_MEDIA`` environment variable, else the current folder. Reports and widgets read saved
files back through :func:`read_media` and :func:`media_size`, whatever the store, so only this
module touches fsspec, and only when a remote URL is used: a plain ``import genlab`` and local
downloads never import fsspec, s3fs or botocore.

Types: local files are :class:`~pathlib.Path` objects; remote files are URL strings
(``"s3://team-media/runs/t1.mp4"``), exactly what the history stores.

Credentials come from the backend's usual configuration (for S3: ``AWS_PROFILE`` or
``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, ``AWS_ENDPOINT_URL_S3`` or
``FSSPEC_S3_ENDPOINT_URL`` for an S3-compatible server) or from ``storage_options``, which
are passed to fsspec as they are. Errors name a URL without its query string or user info and
never repeat a credential.

Example:
    >>> media_location("out/videos")
    PosixPath('out/videos')
    >>> media_location("s3://team-media/runs/")
    's3://team-media/runs'
    >>> media_join("s3://team-media/runs", "t1.mp4"), media_name("s3://team-media/runs/t1.mp4")
    ('s3://team-media/runs/t1.mp4', 't1.mp4')
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from genlab._errors import ConfigurationError, MediaError

MEDIA_ENV = "GENLAB_MEDIA"
"""The environment variable naming where ``download()`` saves by default (a folder or a URL)."""

Location = Path | str
"""A saved file or folder: a local :class:`~pathlib.Path`, or a remote URL string."""

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+(?:::[A-Za-z][A-Za-z0-9+.-]+)*://")
_INSTALL = 'pip install "genlab[team]"'
_SECRET_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
_SECRET_KEYS = ("key", "secret", "token", "password", "credential")


def is_remote(location: str | os.PathLike[str]) -> bool:
    """True for a URL fsspec must handle (``s3://``, ``memory://`` ...), False for a local
    path or a ``file://`` URL.

    Example:
        >>> is_remote("s3://bucket/a.mp4"), is_remote("out/a.mp4"), is_remote("file:///tmp/x")
        (True, False, False)
    """
    if not isinstance(location, str):
        return False
    return bool(_URL.match(location)) and not location.lower().startswith("file://")


def media_location(location: str | os.PathLike[str] | None = None) -> Location:
    """Where media are saved: ``location``, else ``GENLAB_MEDIA``, else the current folder.

    A local folder (or ``file://`` URL) becomes a :class:`~pathlib.Path`; a remote URL stays
    a string, without a trailing slash.

    Example:
        >>> media_location("file:///tmp/out")
        PosixPath('/tmp/out')
    """
    if location is None:
        location = os.environ.get(MEDIA_ENV, "").strip() or "."
    if not isinstance(location, str):
        return Path(location)
    if is_remote(location):
        return location.rstrip("/") if not location.endswith("://") else location
    if location.lower().startswith("file://"):
        return Path(url2pathname(unquote(urlsplit(location).path)))
    return Path(location)


KEPT_FOLDER = "genlab-media"
"""The media store's folder beside a history kept in a hidden folder, and its default without
a local history: a folder Jupyter's server serves (it refuses hidden ones), so the
``original:`` links of cards open."""


def kept_beside(history_file: Path | None) -> Path:
    """Where a client keeps results by default: ``media/`` beside a SQLite history's file, or
    ``genlab-media/`` beside its folder when that folder is hidden (``.genlab/history.sqlite``
    keeps in ``genlab-media/``); ``genlab-media/`` without a history file.

    Files kept before stay where they are (a history stores each file's path): only new
    results go to the new folder.

    Example:
        >>> kept_beside(Path(".genlab/history.sqlite")), kept_beside(Path("runs/h.sqlite"))
        (PosixPath('genlab-media'), PosixPath('runs/media'))
        >>> kept_beside(None)
        PosixPath('genlab-media')
    """
    if history_file is None:
        return Path(KEPT_FOLDER)
    folder = history_file.parent
    if folder.name.startswith("."):
        return folder.parent / KEPT_FOLDER
    return folder / "media"


def media_join(location: str | os.PathLike[str], *names: str) -> Location:
    """``location`` / ``names``: a Path for a local folder, a URL string for a remote one.

    Example:
        >>> media_join("memory://media/", "t1", "t1.png")
        'memory://media/t1/t1.png'
    """
    where = media_location(location)
    if isinstance(where, Path):
        return where.joinpath(*names)
    return "/".join([where.rstrip("/"), *names])


def media_name(location: str | os.PathLike[str]) -> str:
    """The file name of a saved file, local or remote (``t1_cover.jpg``).

    Example:
        >>> media_name("s3://bucket/runs/t1_cover.jpg?versionId=3")
        't1_cover.jpg'
    """
    if is_remote(location):
        return PurePosixPath(urlsplit(str(location)).path).name
    return Path(location).name


def shown_url(url: str) -> str:
    """A URL as genlab shows it: no query string, fragment or user info.

    Example:
        >>> shown_url("s3://key:secret@bucket/runs/?versionId=3")
        's3://bucket/runs/'
    """
    text = url.split("?", 1)[0].split("#", 1)[0]
    return re.sub(r"://[^/@]*@", "://", text)


def read_media(
    location: str | os.PathLike[str], *, storage_options: Mapping[str, Any] | None = None
) -> bytes:
    """The bytes of a saved file: a local path, or a URL such as ``s3://bucket/runs/t1.mp4``.

    Reports and widgets read saved media through it, so they work the same on a bucket.

    Raises:
        OSError: a local file cannot be read.
        MediaError: a remote file cannot be read (missing, access denied, ...).
        ConfigurationError: the URL's backend is not installed (``pip install "genlab[team]"``)
            or the protocol is unknown.

    Example:
        >>> import fsspec
        >>> with fsspec.open("memory://genlab-doc/t1.png", "wb") as out:
        ...     _ = out.write(b"\\x89PNG...")
        >>> read_media("memory://genlab-doc/t1.png")[:4], media_size("memory://genlab-doc/t1.png")
        (b'\\x89PNG', 7)
    """
    where = media_location(location)
    if isinstance(where, Path):
        return where.read_bytes()
    fs, path = _filesystem(where, storage_options)
    with _reading(where, storage_options):
        data = fs.cat_file(path)
    return bytes(data)


def media_size(
    location: str | os.PathLike[str], *, storage_options: Mapping[str, Any] | None = None
) -> int:
    """The size in bytes of a saved file, local or remote (raises like :func:`read_media`).

    Example:
        >>> import io, pathlib, tempfile
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (64, 48), "red").save(buffer, "PNG")
        >>> png = buffer.getvalue()
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "kite.png"
        >>> media_size(path.write_bytes(png) and path) == len(png)
        True
    """
    where = media_location(location)
    if isinstance(where, Path):
        return where.stat().st_size
    fs, path = _filesystem(where, storage_options)
    with _reading(where, storage_options):
        return int(fs.size(path))


def store_files(
    files: Sequence[Path], location: str, *, storage_options: Mapping[str, Any] | None = None
) -> list[str]:
    """Upload local ``files`` into the remote folder ``location``; their URLs, in order.

    Each object appears only once it is complete (a failed upload leaves none).

    Raises:
        ConfigurationError: the store refused or the backend is missing; the message says
            what to check.

    Example:
        >>> import io, pathlib, tempfile
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (64, 48), "red").save(buffer, "PNG")
        >>> png = buffer.getvalue()
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "kite.png").write_bytes(png)
        >>> (folder / "kept").mkdir()
        >>> kept = store_files([folder / "kite.png"], str(folder / "kept"))
        >>> [pathlib.Path(url).name for url in kept]
        ['kite.png']
    """
    fs, root = _filesystem(location, storage_options)
    urls = []
    for file in files:
        target = f"{root.rstrip('/')}/{file.name}"
        try:
            fs.put_file(str(file), target)
        except Exception as exc:  # any backend error: one clear, credential-free message
            raise ConfigurationError(
                f"could not store media at {shown_url(location)}: {_why(exc, storage_options)}; "
                "check that the bucket exists and that the credentials (AWS_PROFILE, "
                "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or storage_options) may write to it"
            ) from None
        urls.append(f"{location.rstrip('/')}/{file.name}")
    return urls


def copy_media(
    sources: Sequence[Location],
    location: str | os.PathLike[str],
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> list[Location]:
    """Copy saved files (local or remote) into ``location`` (a folder or a URL); new locations.

    A file already at its target is not copied onto itself.

    Example:
        >>> import io, pathlib, tempfile
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (64, 48), "red").save(buffer, "PNG")
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "kite.png"
        >>> _ = path.write_bytes(buffer.getvalue())
        >>> copied = copy_media([str(path)], str(path.parent / "copy"))
        >>> [pathlib.Path(url).name for url in copied]
        ['kite.png']
    """
    where = media_location(location)
    out: list[Location] = []
    with tempfile.TemporaryDirectory(prefix="genlab-copy-") as tmp:
        for source in sources:
            target = media_join(where, media_name(source))
            staged = Path(source) if not is_remote(source) else Path(tmp) / media_name(source)
            if target == source:
                out.append(target)
                continue
            if is_remote(source):  # staged locally first: no partial file at the target
                staged.write_bytes(read_media(source, storage_options=storage_options))
            if isinstance(target, Path):
                target.parent.mkdir(parents=True, exist_ok=True)
                if not (target.exists() and target.samefile(staged)):
                    shutil.copy2(staged, target)
                out.append(target)
            else:
                out += store_files([staged], str(where), storage_options=storage_options)
    return out


def _filesystem(
    url: str, storage_options: Mapping[str, Any] | None
) -> tuple[Any, str]:  # fsspec has no type information
    """The fsspec filesystem and path of a remote URL, or a ConfigurationError saying why not."""
    shown = shown_url(url)
    try:
        import fsspec.core  # type: ignore[import-untyped]  # optional: the "team" extra
    except ImportError:
        raise ConfigurationError(
            f"media at {shown} need fsspec, which is not installed: {_INSTALL}"
        ) from None
    try:
        fs, path = fsspec.core.url_to_fs(url, **dict(storage_options or {}))
    except ImportError as exc:
        raise ConfigurationError(
            f"media at {shown} need a storage backend that is not installed "
            f"({_why(exc, storage_options)}): {_INSTALL} (s3fs for s3:// URLs)"
        ) from None
    except ValueError as exc:
        raise ConfigurationError(
            f"{shown} is not a storage URL genlab can use ({_why(exc, storage_options)}); "
            "give a local folder or a URL such as s3://bucket/prefix/"
        ) from None
    return fs, str(path)


@contextmanager
def _reading(url: str, storage_options: Mapping[str, Any] | None) -> Iterator[None]:
    """Turns a backend's read error into a :class:`MediaError` naming the URL."""
    try:
        yield
    except (MediaError, ConfigurationError):
        raise
    except Exception as exc:
        reason = "not found" if isinstance(exc, FileNotFoundError) else _why(exc, storage_options)
        raise MediaError(reason, url=url) from None


def _why(exc: BaseException, storage_options: Mapping[str, Any] | None) -> str:
    """A backend error, briefly, with every credential genlab knows of masked."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    for secret in _secrets(storage_options):
        text = text.replace(secret, "***")
    return re.sub(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+)", lambda m: shown_url(m[1]), text)


def _secrets(storage_options: Mapping[str, Any] | None) -> Iterator[str]:
    for name in _SECRET_ENV:
        value = os.environ.get(name)
        if value and len(value) >= 4:
            yield value
    yield from _secret_values(storage_options or {})


def _secret_values(options: Mapping[str, Any]) -> Iterator[str]:
    for key, value in options.items():
        if isinstance(value, Mapping):
            yield from _secret_values(value)
        elif isinstance(value, str) and len(value) >= 4 and any(
            word in str(key).lower() for word in _SECRET_KEYS
        ):
            yield value
