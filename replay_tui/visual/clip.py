"""CLIP similarity of the two screenshots with their text inpainted (optional: the ``clip`` extra).

The reference masks every text box (``int()`` of each normalised coordinate times the size, separately), inpaints
with OpenCV Telea (radius 3), squashes the image to a square of side min(W, H) with LANCZOS (no crop, the
aspect ratio is not kept), then applies openai-clip's preprocessing: bicubic resize to 224, centre crop 224,
scale to [0, 1], normalise. Features of each image are L2-normalised; the score is their dot product.

Weights are never downloaded: pass ``ViT-B-32.pt`` (OpenAI's release) by path (``--clip-weights`` or
``$REPLAY_TUI_CLIP_WEIGHTS``). Its published sha256 is checked. Without torch or weights the score is ``None``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

VIT_B32_SHA256 = "40d365715913c9da98579312b702a82c18be219cc2a73407c4526f58eba950af"
MEAN = np.array((0.48145466, 0.4578275, 0.40821073), dtype=np.float32)
STD = np.array((0.26862954, 0.26130258, 0.27577711), dtype=np.float32)
SIZE = 224

Encoder = Callable[[np.ndarray], np.ndarray]  # (3, 224, 224) float32 -> feature vector


class ClipUnavailable(Exception):
    """No usable CLIP: torch/open_clip missing, weights missing or not the published file."""


def mask_and_inpaint(image: np.ndarray, bboxes: Sequence[tuple[float, float, float, float]]) -> np.ndarray:
    """RGB uint8 -> RGB uint8 with every text box inpainted (unchanged when there are no boxes)."""
    if not bboxes:
        return image
    bgr = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    mask = np.zeros(bgr.shape[:2], dtype=np.uint8)
    height, width = bgr.shape[:2]
    for x_ratio, y_ratio, w_ratio, h_ratio in bboxes:
        x = int(x_ratio * width)
        y = int(y_ratio * height)
        w = int(w_ratio * width)
        h = int(h_ratio * height)
        mask[y : y + h, x : x + w] = 255
    painted = cv2.inpaint(bgr, mask, 3, cv2.INPAINT_TELEA)
    return cv2.cvtColor(painted, cv2.COLOR_BGR2RGB)


def preprocess(image: np.ndarray, bboxes: Sequence[tuple[float, float, float, float]]) -> np.ndarray:
    """The reference's ``rescale_and_mask`` followed by openai-clip's transform; returns (3, 224, 224) float32."""
    pil = Image.fromarray(mask_and_inpaint(image, bboxes))
    side = min(pil.size)
    pil = pil.resize((side, side), Image.Resampling.LANCZOS)
    # Resize(224, bicubic) on a square, then CenterCrop(224)
    pil = pil.resize((SIZE, SIZE), Image.Resampling.BICUBIC)
    array = np.asarray(pil.convert("RGB"), dtype=np.float32) / 255.0
    array = (array - MEAN) / STD
    return np.ascontiguousarray(array.transpose(2, 0, 1))


class ClipScorer:
    """Cosine similarity of CLIP image features; ``encoder`` maps one preprocessed image to a feature vector."""

    def __init__(self, encoder: Encoder, name: str = "ViT-B/32") -> None:
        self.encoder = encoder
        self.name = name

    def similarity(self, image1: np.ndarray, image2: np.ndarray, boxes1, boxes2) -> float:
        f1 = np.asarray(self.encoder(preprocess(image1, boxes1)), dtype=np.float64).ravel()
        f2 = np.asarray(self.encoder(preprocess(image2, boxes2)), dtype=np.float64).ravel()
        f1 = f1 / np.linalg.norm(f1)
        f2 = f2 / np.linalg.norm(f2)
        return float(f1 @ f2)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_clip_scorer(weights: str | Path, expected_sha256: str | None = VIT_B32_SHA256) -> ClipScorer:
    """A :class:`ClipScorer` for user-supplied ViT-B/32 weights (OpenAI's ``ViT-B-32.pt``), on the CPU in fp32.

    Raises :class:`ClipUnavailable` when the file is missing or is not the published file (sha256), or when
    neither ``open_clip`` nor openai ``clip`` (with torch) is installed (``pip install 'replay_tui[clip]'``).
    """
    path = Path(weights).expanduser()
    if not path.is_file():
        raise ClipUnavailable(f"weights file {str(path)!r} not found")
    if expected_sha256:
        actual = sha256_of(path)
        if actual != expected_sha256:
            raise ClipUnavailable(
                f"sha256 of {path.name} is {actual[:16]}..., expected the published "
                f"{expected_sha256[:16]}... (ViT-B-32.pt)"
            )
    try:
        import torch
    except ImportError as exc:
        raise ClipUnavailable("torch is not installed (install the 'clip' extra)") from exc
    model = _build_model(path, torch)
    model.eval()

    def encode(image: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            tensor = torch.from_numpy(image).unsqueeze(0)
            return model.encode_image(tensor).float().cpu().numpy()[0]

    return ClipScorer(encode)


def _build_model(path: Path, torch):  # pragma: no cover - needs torch and a model package
    try:
        from open_clip.openai import load_openai_model

        return load_openai_model(str(path), precision="fp32", device="cpu", jit=False)
    except ImportError:
        pass
    try:
        import clip as openai_clip

        model, _ = openai_clip.load(str(path), device="cpu", jit=False)
        return model.float()
    except ImportError as exc:
        raise ClipUnavailable("neither open_clip nor openai clip is installed (install the 'clip' extra)") from exc
