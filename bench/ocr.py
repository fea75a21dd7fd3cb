"""OCR benchmark: pages/s and character accuracy on scans made from known contract text.

    .venv/bin/python bench/ocr.py [--corpus DIR] [--pages N] [--seed S] [--json OUT]

A page of text from each of N CUAD contracts (sorted, one every len/N) is drawn at 200 dpi in a
serif font, then "scanned": rotated by a small random skew, blurred a little, and sprinkled with
Gaussian noise and specks (three levels: light, medium, heavy). Each scan is read the ways Lexrag reads
scans (`rag.ingest.extract.extract` with the real Tesseract):

- as an image-only PDF, its page drawn by pypdfium2 at RAG_OCR_DPI (300, the default) and at 200 dpi;
- as a PNG upload (the image as it is, 200 dpi).

For each way it prints pages/s (drawing + OCR, one process, Tesseract on one thread), the
character accuracy 1 - CER (Levenshtein distance / reference length, whitespace collapsed on both
sides; a page where nothing was recognised counts 0 and is counted under "no text") and the mean
word confidence Tesseract reported, so RAG_OCR_LOW_CONFIDENCE can be set against accuracy. Needs no
database.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.ingest.extract import OcrOptions, extract
from rag.ingest.extract.ocr import Tesseract
from ragsite.exceptions import NoExtractableText

CORPUS = Path("/work/shared/eval/cuad-full-corpus/cuad")
SCAN_DPI = 200
PAGE_INCHES = (8.5, 11)
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"
NOISE = {
    "light": {"sigma": 12, "skew": 1.0, "blur": 0.4, "specks": 300},
    "medium": {"sigma": 25, "skew": 1.8, "blur": 0.6, "specks": 1000},
    "heavy": {"sigma": 40, "skew": 2.5, "blur": 0.9, "specks": 3000},
}


def page_text(path: Path, chars: int = 2200) -> str:
    """About a page of the contract's text from its second quarter, wrapped at 80 columns."""
    words = " ".join(path.read_text(encoding="utf-8", errors="replace").split())
    start = words.find(" ", len(words) // 4) + 1
    chunk = words[start : start + chars]
    chunk = chunk[: chunk.rfind(" ")]
    return "\n".join(textwrap.wrap(chunk, 80))


def draw_page(text: str) -> Image.Image:
    width, height = (round(side * SCAN_DPI) for side in PAGE_INCHES)
    image = Image.new("L", (width, height), 255)
    try:
        font = ImageFont.truetype(FONT, size=round(11 / 72 * SCAN_DPI))  # 11 pt
    except OSError:
        font = ImageFont.load_default(size=round(11 / 72 * SCAN_DPI))
    ImageDraw.Draw(image).multiline_text((SCAN_DPI, SCAN_DPI), text, font=font, fill=0, spacing=10)
    return image


def scan(image: Image.Image, level: str, rng: random.Random) -> Image.Image:
    """Skew, blur, Gaussian noise and dark specks, like a photocopied page through a feeder."""
    noise = NOISE[level]
    skewed = image.rotate(rng.uniform(-noise["skew"], noise["skew"]), resample=Image.BICUBIC, fillcolor=255)
    blurred = skewed.filter(ImageFilter.GaussianBlur(noise["blur"]))
    pixels = np.asarray(blurred, dtype=np.float32)
    generator = np.random.default_rng(rng.randrange(2**32))
    pixels = pixels + generator.normal(0, noise["sigma"], pixels.shape)
    ys = generator.integers(0, pixels.shape[0], noise["specks"])
    xs = generator.integers(0, pixels.shape[1], noise["specks"])
    pixels[ys, xs] = 0
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), mode="L")


def as_file(image: Image.Image, image_format: str) -> bytes:
    out = io.BytesIO()
    if image_format == "PDF":
        image.save(out, "PDF", resolution=SCAN_DPI)
    else:
        image.save(out, image_format, dpi=(SCAN_DPI, SCAN_DPI))
    return out.getvalue()


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions), O(len(a) * len(b)) time, O(len(b)) memory."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


def accuracy(reference: str, recognised: str) -> float:
    ref, got = " ".join(reference.split()), " ".join(recognised.split())
    return 1 - levenshtein(ref, got) / len(ref)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--tesseract", default="tesseract")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    files = sorted(args.corpus.glob("*.txt"))
    picked = [files[i * len(files) // args.pages] for i in range(args.pages)]
    rng = random.Random(args.seed)  # noqa: S311  (reproducible noise, not secrets)
    engine = Tesseract(command=args.tesseract, languages="eng", timeout=300)
    ways = {
        "PDF page drawn at 300 dpi": ("PDF", "pdf", 300),
        "PDF page drawn at 200 dpi": ("PDF", "pdf", 200),
        "PNG upload (200 dpi as scanned)": ("PNG", "png", 300),
    }
    rows = []
    for level in NOISE:
        scans = [(page_text(path), scan(draw_page(page_text(path)), level, rng)) for path in picked]
        for way, (image_format, kind, dpi) in ways.items():
            options = OcrOptions(engine=engine, dpi=dpi, max_pages=10, max_pixels=50_000_000)
            seconds, accuracies, confidences = 0.0, [], []
            for reference, image in scans:
                data = as_file(image, image_format)
                started = time.perf_counter()
                try:
                    document = extract(data, kind, ocr=options)
                except NoExtractableText:  # nothing recognised: no characters right
                    seconds += time.perf_counter() - started
                    accuracies.append(0.0)
                    continue
                seconds += time.perf_counter() - started
                accuracies.append(accuracy(reference, document.text))
                confidences.extend(document.ocr_confidence.values())
            rows.append(
                {
                    "noise": level,
                    "way": way,
                    "pages": len(scans),
                    "pages_per_s": len(scans) / seconds,
                    "s_per_page": seconds / len(scans),
                    "accuracy": statistics.mean(accuracies),
                    "worst_accuracy": min(accuracies),
                    "confidence": statistics.mean(confidences) if confidences else 0.0,
                    "lowest_confidence": min(confidences, default=0.0),
                    "nothing_recognised": len(scans) - len(confidences),
                }
            )

    print(f"OCR benchmark: {args.pages} CUAD pages ({SCAN_DPI} dpi scans, ~2,200 characters each)")
    header = ("noise", "way", "pages/s", "s/page", "1-CER", "worst", "conf", "min conf", "no text")
    print("{:6} {:34} {:>8} {:>7} {:>7} {:>7} {:>6} {:>9} {:>8}".format(*header))
    for row in rows:
        print(
            f"{row['noise']:6} {row['way']:34} {row['pages_per_s']:8.2f} {row['s_per_page']:7.2f} "
            f"{row['accuracy']:7.1%} {row['worst_accuracy']:7.1%} "
            f"{row['confidence']:6.1f} {row['lowest_confidence']:9.1f} {row['nothing_recognised']:8}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
