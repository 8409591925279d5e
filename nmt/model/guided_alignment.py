"""Guided alignment (Garg et al., 2019; fairseq's alignment_layer / alignment_heads, Marian's
guided-alignment): the first heads of one decoder layer are trained, beside translation, to attend
where word alignments point, so that they give the model's word alignments. CTranslate2 reads
alignments from the same heads (its alignment_layer and alignment_heads), so an exported guided
model returns alignments and carries markup as nmt's own engine does.

The loss is the cross-entropy between each target position's alignment distribution A (its links,
normalized: nmt.data.word_alignments) and the mean of the guided heads' attention p, summed over
positions: -Σ_t Σ_s A[t, s] · log p[t, s]. Positions without links add nothing.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


def guided_alignment_loss(log_attention: Tensor, alignment: Tensor) -> Tensor:
    """log_attention (B, H, T, S): the guided heads' attention log-probabilities (-inf at padding);
    alignment (B, T, S): each target position's alignment distribution (rows of zeros: none).
    Returns the summed cross-entropy, in fp32."""
    heads = log_attention.size(1)
    # Padding's -inf made finite: the mean over heads of all -inf, and 0 · -inf where A is 0, would
    # be NaN (in the backward pass too, where masking the forward's value does not reach).
    log_attention = log_attention.clamp_min(-1e4)
    log_mean = log_attention[:, 0] if heads == 1 else torch.logsumexp(log_attention, dim=1) - math.log(heads)
    return -(alignment.to(log_mean.dtype) * log_mean).sum()


def alignment_heads(recipe) -> tuple[int, int] | None:
    """(decoder layer from 0, heads) of a recipe's train.guided_alignment; None when it is off."""
    guided = recipe.train.guided_alignment
    if not guided.active:
        return None
    return guided.layer % recipe.model.decoder_layers, guided.heads
