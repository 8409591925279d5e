"""Model FLOPs utilization (MFU) for the training log: the model's FLOPs of the updates since the
last log line (nmt.model.flops: real tokens, padding left out; a run that trains only some
weights counts only the gradients it computes) over the seconds they took, as a share of the
processes' GPUs' datasheet bf16 dense peak. Logged only where that peak is known: bf16 or fp16
training on an NVIDIA GPU listed in nmt.devices (fp32 runs use other units, a CPU has no datasheet
peak); `make bench` measures a CPU against its matmul ceiling instead."""

from __future__ import annotations

import numpy as np
import torch

from nmt.config import TrainConfig
from nmt.data.shards import ParallelShards
from nmt.devices import datasheet_bf16_tflops
from nmt.model.flops import training_flops_of_pairs, trained_work_share
from nmt.model.transformer import Transformer
from nmt.train.freezing import frozen_as_configured

# the lengths a run with frozen weights counts its share of the work at (it barely depends on them)
SHARE_LENGTHS = (32, 32)


def device_peak_flops(device: torch.device, precision: str) -> float | None:
    """FLOP/s of one device at the run's precision, from its datasheet; None where unknown."""
    if device.type != "cuda" or precision not in ("bf16", "fp16"):
        return None
    tflops, _ = datasheet_bf16_tflops(torch.cuda.get_device_name(device))
    return None if tflops is None else tflops * 1e12


class Utilization:
    def __init__(self, model: Transformer, vocab: int, peak_flops: float, work_share: float = 1.0):
        """`peak_flops`: of all the run's processes together; `work_share`: the share of training
        every weight that this run computes (nmt.model.flops.trained_work_share)."""
        self.model_cfg, self.vocab, self.peak_flops, self.work_share = model.cfg, vocab, peak_flops, work_share

    @classmethod
    def of_run(cls, model: Transformer, vocab: int, cfg: TrainConfig, device: torch.device,
               processes: int) -> Utilization | None:
        """The run's MFU meter, or None where its device's peak is unknown. A run with frozen
        weights counts its share of the work on fake tensors first (seconds for NLLB-3.3B's shape)."""
        peak = device_peak_flops(device, cfg.precision)
        if peak is None:
            return None
        share = 1.0
        if cfg.freeze or cfg.lora_rank:
            share = trained_work_share(model.cfg, vocab, lambda counted: frozen_as_configured(counted, cfg),
                                       *SHARE_LENGTHS)
        return cls(model, vocab, peak * processes, share)

    def update_flops(self, data: ParallelShards, group: list[np.ndarray]) -> float:
        """The model FLOPs of one update's batches (every process's), EOS and BOS included."""
        pairs = np.concatenate(group)
        return self.work_share * training_flops_of_pairs(self.model_cfg, self.vocab, data.src.lengths[pairs] + 1,
                                                         data.tgt.lengths[pairs] + 1)

    def mfu(self, flops: float, seconds: float) -> float:
        return flops / seconds / self.peak_flops
