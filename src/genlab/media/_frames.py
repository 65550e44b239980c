"""Frames of a kept result as pictures, for judges that look (a vision model, code of one's own).

:func:`frames` gives ``count`` frames spread evenly over a kept video (the first and the last
included) as Pillow images, decoded with PyAV; a kept image gives itself. Covers, last frames
and sidecars are not results and are skipped. PyAV and Pillow are imported only when it is
called, so the client stays light (``Result.frames`` calls it).

Example:
    >>> import os, tempfile
    >>> from genlab.emulator import samples
    >>> folder = tempfile.mkdtemp()
    >>> clip = os.path.join(folder, "t1.mp4")
    >>> with open(clip, "wb") as out:
    ...     _ = out.write(samples.video(64, 48, 1.0, fps=10))
    >>> pictures = frames([clip], 3)
    >>> len(pictures), pictures[0].size, pictures[0].mode
    (3, (64, 48), 'RGB')
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from genlab.media._sniff import SNIFF_BYTES, sniff
from genlab.media._storage import is_remote, media_name, read_media

if TYPE_CHECKING:
    from PIL.Image import Image


def frames(places: Sequence[str], count: int = 4) -> list[Image]:
    """``count`` evenly spaced frames of the first kept video among ``places`` as RGB
    images; for kept images, the images themselves (each once, whatever ``count``).

    Raises:
        ValueError: ``count`` below 1, or nothing kept that has a picture.
    """
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    pictures: list[Image] = []
    for place in places:
        stem = PurePosixPath(media_name(place)).stem
        if stem.endswith(("_cover", "_last_frame")) or media_name(place).endswith(".json"):
            continue
        data = read_media(place) if is_remote(place) else None
        if data is None:
            with open(place, "rb") as file:
                head = file.read(SNIFF_BYTES)
        else:
            head = data[:SNIFF_BYTES]
        kind = sniff(head)
        opened: Any = io.BytesIO(data) if data is not None else place
        if kind is not None and kind.mime.startswith("image/"):
            from PIL import Image as PILImage

            with PILImage.open(opened) as image:
                pictures.append(image.convert("RGB"))
            continue
        if kind is not None and kind.mime.startswith("audio/"):
            continue
        return _video_frames(opened, media_name(place), count)
    if not pictures:
        raise ValueError("nothing kept to look at: the result has no kept picture or video "
                         "(keep results with genlab.connect(keep=True), the default)")
    return pictures


def _video_frames(opened: Any, name: str, count: int) -> list[Image]:
    import av

    with av.open(opened) as container:
        if not container.streams.video:
            raise ValueError(f"{name} has no video stream")
        stream = container.streams.video[0]
        total = int(stream.frames or 0)
        if total <= 0:  # no count in the header: one packet per frame, counted undecoded
            total = sum(1 for packet in container.demux(stream) if packet.size)
            container.seek(0)
        last = max(total - 1, 0)
        wanted = ([last // 2] if count == 1
                  else [round(i * last / (count - 1)) for i in range(count)])
        stream.thread_type = "AUTO"
        kept: dict[int, Image] = {}
        tail: tuple[int, Any] | None = None
        for index, frame in enumerate(container.decode(stream)):
            tail = (index, frame)
            if index in wanted:
                kept[index] = frame.to_image()
            if index >= wanted[-1]:
                break
        if tail is None:
            raise ValueError(f"{name} has no frames PyAV can decode")
        # A header that overcounts: the frames asked past the end are the last one decoded.
        ending = kept[tail[0]] if tail[0] in kept else tail[1].to_image()
        return [kept.get(i, ending) for i in wanted]
