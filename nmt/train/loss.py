"""Label-smoothed cross-entropy (section 5.4), summed over non-padding target tokens."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from nmt.data.tokenizer import PAD


def label_smoothed_loss(logits: Tensor, target: Tensor, epsilon: float) -> Tensor:
    """Sum over tokens of (1-ε)·(-log p(target)) + ε·mean_v(-log p(v)); PAD targets are ignored.

    logits (N, V), target (N,). PyTorch spreads ε uniformly over all V classes.
    """
    return F.cross_entropy(logits.float(), target, ignore_index=PAD, label_smoothing=epsilon, reduction="sum")
