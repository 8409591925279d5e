"""MFU in the training log: the model FLOPs of the logged updates over their seconds and the
device's peak, where the peak is known (bf16 or fp16 on a listed NVIDIA GPU); on this CPU with a
peak set by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from nmt.model.flops import training_flops_of_pairs
from nmt.train import utilization
from nmt.train.trainer import Trainer
from tests.conftest import prepared_tiny

PEAK = 1e9  # FLOP/s: a stand-in peak for this CPU


def test_the_logged_mfu_is_the_logged_updates_model_flops_over_their_seconds_and_the_peak(tmp_path, monkeypatch):
    monkeypatch.setattr(utilization, "device_peak_flops", lambda device, precision: PEAK)
    trainer = Trainer(prepared_tiny(tmp_path, "train.max_steps=4", "train.log_every=2", "train.valid_every=1000",
                                    "train.valid_bleu_sentences=0"))
    lines: list[str] = []
    trainer.log = lambda message: lines.append(str(message))
    trainer.run(show_progress=False)
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in records if r["kind"] == "train"]
    assert [r["step"] for r in train] == [2, 4]
    _, batches = trainer.data.epoch(0)  # one batch per update: the tiny recipe's update_freq is 1
    data, model = trainer.train_data, trainer.model.cfg
    vocab = trainer.tgt_tokenizer.get_piece_size()
    for record, window in zip(train, (batches[:2], batches[2:4])):
        pairs = np.concatenate(window)
        flops = training_flops_of_pairs(model, vocab, data.src.lengths[pairs] + 1, data.tgt.lengths[pairs] + 1)
        tokens = int(data.tgt.lengths[pairs].sum()) + len(pairs)
        seconds = tokens / record["tgt_tokens_per_s"]
        assert record["mfu"] == pytest.approx(flops / seconds / PEAK, rel=1e-4)
    logged = [line for line in lines if line.startswith(("step 2:", "step 4:"))]
    assert [line.split(" MFU ")[1] for line in logged] == [f"{100 * r['mfu']:.1f} %" for r in train]


def test_mfu_is_measured_against_a_known_gpus_bf16_peak_only(monkeypatch):
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert utilization.device_peak_flops(cpu, "bf16") is None and utilization.device_peak_flops(cuda, "fp32") is None
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H200")
    assert utilization.device_peak_flops(cuda, "bf16") == utilization.device_peak_flops(cuda, "fp16") == 989e12
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA GeForce RTX 4090")
    assert utilization.device_peak_flops(cuda, "bf16") is None  # not listed: no guess


def test_a_lora_run_counts_only_the_work_it_does(tmp_path, monkeypatch):
    monkeypatch.setattr(utilization, "device_peak_flops", lambda device, precision: PEAK)
    plain = Trainer(prepared_tiny(tmp_path / "plain")).utilization
    lora = Trainer(prepared_tiny(tmp_path / "lora", "train.lora_rank=4")).utilization
    assert plain.work_share == 1.0 and 0.5 < lora.work_share < 1.0
