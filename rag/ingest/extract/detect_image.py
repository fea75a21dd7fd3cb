"""Images accepted as scans (read by OCR, scan.py): told apart by their magic bytes."""

from __future__ import annotations

IMAGE_EXTENSION_KINDS = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".tif": "tiff", ".tiff": "tiff"}
IMAGE_KIND_NAMES = {"png": "a PNG image", "jpeg": "a JPEG image", "tiff": "a TIFF image"}
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
)


def image_kind(data: bytes) -> str | None:
    """ "png", "jpeg" or "tiff" when `data` starts like one, else None."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    return None
