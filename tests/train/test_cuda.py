"""CUDA-only checks (`pytest -m cuda`; `make gpu-check` runs them on a GPU machine). Skipped where
no CUDA device is visible: their logic runs on the CPU in test_train_step.py and test_search.py."""

from __future__ import annotations

import contextlib

import pytest
import torch

from nmt.data.batching import epoch_batches
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.checkpoint import load_checkpoint
from nmt.train.trainer import Trainer, train
from tests.conftest import prepared_tiny

pytestmark = pytest.mark.cuda
ON_CUDA = ["train.device=cuda", "train.valid_bleu_sentences=0", "train.valid_every=1000", "train.log_every=5"]


@contextlib.contextmanager
def host_syncs_are_errors():
    torch.cuda.set_sync_debug_mode("error")
    try:
        yield
    finally:
        torch.cuda.set_sync_debug_mode("default")


@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("compiled", [False, True])
def test_a_training_update_on_cuda_never_waits_for_the_device(tmp_path, precision, compiled):
    recipe = prepared_tiny(tmp_path, f"train.precision={precision}", f"train.compile={str(compiled).lower()}",
                           "train.update_freq=2", "train.clip_norm=1.0", *ON_CUDA)
    trainer = Trainer(recipe)
    assert trainer.device.type == "cuda"
    batches = epoch_batches(trainer.train_data, trainer.train_cfg.max_tokens, 1, 0)
    trainer.train_step(batches[:2])  # compiles, creates Adam's state
    with host_syncs_are_errors():
        loss, tokens = trainer.train_step(batches[2:4])
    assert torch.isfinite(loss) and tokens > 0


@pytest.mark.parametrize("compiled", [False, True])
def test_a_guided_alignment_update_on_cuda_never_waits_for_the_device(tmp_path, compiled):
    """train.guided_alignment in bf16: the batch's alignment targets travel with it, and the
    update's alignment loss stays on the device."""
    recipe = prepared_tiny(tmp_path, "train.precision=bf16", f"train.compile={str(compiled).lower()}",
                           "data.word_alignments=dice", "train.guided_alignment.weight=0.1", *ON_CUDA)
    trainer = Trainer(recipe)
    batches = epoch_batches(trainer.train_data, trainer.train_cfg.max_tokens, 1, 0)
    trainer.train_step(batches[:1])
    with host_syncs_are_errors():
        loss, tokens = trainer.train_step(batches[1:2])
    assert torch.isfinite(loss) and torch.isfinite(trainer.update.alignment_loss) and trainer.update.alignment_loss > 0


def graphed_and_eager(tmp_path, precision: str, *settings: str) -> tuple[Trainer, Trainer, list]:
    """Two trainers from the same weights, an update in 2 passes on bucketed batches: one replaying
    its compiled step from CUDA graphs, one eager; and 12 updates' groups of batches, every shape
    twice (recorded, then replayed)."""
    settings = ("train.update_freq=2", "train.micro_batches=2", "train.max_tokens=128", "train.tf32=false",
                f"train.precision={precision}", *settings, *ON_CUDA)
    graphed = Trainer(prepared_tiny(tmp_path / "graphed", *settings, "train.compile=true", "train.cuda_graphs=true"))
    eager = Trainer(prepared_tiny(tmp_path / "eager", *settings, "train.compile=false"))
    assert graphed.update.cuda_graphs
    eager.model.load_state_dict(graphed.model.state_dict())
    batches = epoch_batches(graphed.train_data, 128, 1, 0, group=2, bucketed=True)
    return graphed, eager, [batches[i:i + 2] for i in range(0, 12, 2)] * 2


def same_losses(graphed: Trainer, eager: Trainer, group: list, precision: str) -> None:
    """One update of each trainer: the same loss per token."""
    loss_graphed, tokens = graphed.train_step(group)
    loss_eager, _ = eager.train_step(group)
    assert float(loss_graphed) / tokens == pytest.approx(float(loss_eager) / tokens,
                                                         rel=1e-3 if precision == "fp32" else 2e-2)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_cuda_graphs_over_shape_buckets_train_as_the_eager_step(tmp_path, precision):
    """train.cuda_graphs: the compiled step replayed from CUDA graphs, an update in 2 passes (each
    backward adding into gradients that no replay overwrites; in bf16 the bf16 weights' gradients
    too), on bucketed batches: the eager step's losses, update after update, and no host sync once
    every shape was recorded."""
    graphed, eager, groups = graphed_and_eager(tmp_path, precision)
    assert graphed.update.shape_buckets
    for group in groups:
        same_losses(graphed, eager, group, precision)
    with host_syncs_are_errors():
        loss, _ = graphed.train_step(groups[0])
    assert torch.isfinite(loss)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_the_weights_average_swaps_in_and_out_of_a_graphed_step(tmp_path, precision):
    """train.ema_decay under CUDA graphs: validation puts the average into the parameters the
    graphs read (their storage exchanged, fp32's own parameters, bf16's masters) and gives the
    weights back; the replays after it still make the eager step's losses, and moving the average
    never waits for the device."""
    graphed, eager, groups = graphed_and_eager(tmp_path, precision, "train.ema_decay=0.9")
    assert graphed.update.average
    for i, group in enumerate(groups):
        if i == len(groups) // 2:
            trained = [p.detach().clone() for p in graphed.update.parameters]
            with graphed.update.validation_model():
                assert not all(torch.equal(p, t) for p, t in zip(graphed.update.parameters, trained))
            assert all(torch.equal(p, t) for p, t in zip(graphed.update.parameters, trained))
        same_losses(graphed, eager, group, precision)
    with host_syncs_are_errors():
        loss, _ = graphed.train_step(groups[0])
    assert torch.isfinite(loss)


def test_fine_tuning_and_resuming_on_cuda_across_precisions(tmp_path):
    parent = prepared_tiny(tmp_path / "parent", "train.max_steps=5", "train.device=cpu", "train.valid_bleu_sentences=0")
    train(parent, show_progress=False)
    child = [f"train.init_from={parent.out / 'checkpoints' / 'last.pt'}", *ON_CUDA, "train.valid_every=4"]
    for precision, steps in (("fp16", 4), ("bf16", 8), ("fp32", 12), ("fp16", 16)):
        recipe = prepared_tiny(tmp_path / "child", *child, f"train.precision={precision}", f"train.max_steps={steps}")
        assert train(recipe, show_progress=False).step == steps
    assert load_checkpoint(tmp_path / "child" / "checkpoints" / "last.pt")["scaler"]["scale"] > 0


def test_a_bf16_run_logs_its_mfu_where_the_gpus_peak_is_known(tmp_path):
    """On the GPU day's H100 or H200: `mfu` in metrics.jsonl, above zero and below one; on a GPU
    nmt has no datasheet peak for, none."""
    import json

    from nmt.devices import datasheet_bf16_tflops

    train(prepared_tiny(tmp_path, "train.precision=bf16", "train.max_steps=5", *ON_CUDA), show_progress=False)
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    [logged] = [r for r in records if r["kind"] == "train"]
    if datasheet_bf16_tflops(torch.cuda.get_device_name())[0] is None:
        assert "mfu" not in logged
    else:
        assert 0 < logged["mfu"] < 1


def test_a_fine_tune_is_built_on_cuda_and_starts_from_exactly_the_parents_weights(trained_tiny, tmp_path):
    """With train.init_from the model is built on the GPU, nothing drawn (nmt.model.from_weights.
    unfilled_transformer): after loading, under bf16 weights with fp32 masters, every weight is
    the parent's and the sinusoid tables are the CPU's."""
    parent = trained_tiny.out / "checkpoints" / "last.pt"
    recipe = prepared_tiny(tmp_path, f"train.init_from={parent}", "train.precision=bf16", *ON_CUDA)
    trainer = Trainer(recipe)
    assert all(t.is_cuda for t in [*trainer.model.parameters(), *trainer.model.buffers()])
    trainer.checkpoints.init_from_parent()
    state = trainer.model.state_dict()  # the fp32 masters
    for name, tensor in load_checkpoint(parent)["model"].items():
        assert torch.equal(state[name].cpu(), tensor), name
    on_cpu = dict(Trainer(prepared_tiny(tmp_path / "cpu", "train.device=cpu")).model.named_buffers())
    for name, buffer in trainer.model.named_buffers():
        assert torch.equal(buffer.cpu(), on_cpu[name]), name


def test_translation_on_cuda_equals_the_cpu_in_fp32_and_runs_in_bf16(trained_tiny):
    checkpoint = trained_tiny.out / "checkpoints" / "last.pt"
    lines = [line.strip() for line in open(trained_tiny.data.valid + ".en", encoding="utf-8")]
    fp32 = trained_tiny.decode.model_copy(update={"precision": "fp32"})
    on_cpu = translate_lines(load_engine([checkpoint], device="cpu"), lines, fp32)
    on_cuda = translate_lines(load_engine([checkpoint], device="cuda"), lines, fp32)
    assert [h[0].tokens for h in on_cuda] == [h[0].tokens for h in on_cpu]
    bf16 = translate_lines(load_engine([checkpoint], device="cuda"), lines, trained_tiny.decode)  # auto: bf16
    assert len(bf16) == len(lines)


def test_lora_in_bf16_on_cuda_keeps_frozen_weights_in_bf16_and_their_fp32_values_on_the_host(tmp_path):
    """LoRA in bf16 on CUDA: frozen linear weights bf16 on the device, their fp32 values in host
    memory; a run with validation saves the base weights exactly as they started, and every
    update stays on the device."""
    recipe = prepared_tiny(tmp_path, "train.precision=bf16", "train.lora_rank=4", "train.compile=false",
                           "train.max_steps=4", "train.valid_every=2", "train.valid_bleu_sentences=4", *ON_CUDA[:1])
    trainer = Trainer(recipe)
    start = {key: value.detach().cpu().clone() for key, value in trainer.model.state_dict().items()}
    frozen = [m for m in trainer.model.modules() if isinstance(m, torch.nn.Linear) and not m.weight.requires_grad]
    assert trainer.update.master_weights and frozen
    assert all(m.weight.dtype == torch.bfloat16 and m.weight.is_cuda for m in frozen)
    batches = epoch_batches(trainer.train_data, trainer.train_cfg.max_tokens, 1, 0)
    trainer.train_step(batches[:1])
    with host_syncs_are_errors():
        loss, _ = trainer.train_step(batches[1:2])
    assert torch.isfinite(loss)
    result = train(recipe, show_progress=False)
    saved = load_checkpoint(result.checkpoint)["model"]
    for key, value in start.items():
        if "lora_" not in key:
            assert torch.equal(saved[key].float().cpu(), value.float()), key


@pytest.mark.parametrize("precision,graphs,guided", [("fp32", False, False), ("bf16", False, False),
                                                     ("bf16", True, False), ("bf16", False, True)])
def test_packed_rows_train_compiled_with_flex_attention_as_the_eager_step(tmp_path, monkeypatch, precision, graphs,
                                                                           guided):
    """train.pack_width on CUDA: the compiled step attends through FlexAttention's block masks (its
    backward runs on a GPU only), the eager step through dense masks; the same losses update after
    update, and no host sync. With CUDA graphs, every pass of one shape, compiled for it alone.
    With guided alignment, its heads read the dense cross mask: the same alignment losses too."""
    from nmt.model import transformer as transformer_module
    from nmt.train.training_data import run_epoch_batches

    flex_calls = []
    flex_attend = transformer_module.flex_attend
    monkeypatch.setattr(transformer_module, "flex_attend", lambda *args: flex_calls.append(1) or flex_attend(*args))
    settings = ["train.pack_width=64", "train.max_tokens=256", "train.tf32=false", f"train.precision={precision}", *ON_CUDA]
    if guided:
        settings += ["data.word_alignments=dice", "train.guided_alignment.weight=1.0", "train.guided_alignment.layer=-1",
                     "train.guided_alignment.heads=2"]
    compiled = Trainer(prepared_tiny(tmp_path / "compiled", *settings, "train.compile=true",
                                     f"train.cuda_graphs={str(graphs).lower()}"))
    assert compiled.update.one_packed_shape == graphs
    eager = Trainer(prepared_tiny(tmp_path / "eager", *settings, "train.compile=false"))
    eager.model.load_state_dict(compiled.model.state_dict())
    batches = run_epoch_batches(compiled.train_data, compiled.train_cfg, 0)
    for group in ([b] for b in batches[:6]):
        loss_compiled, tokens = compiled.train_step(group)
        loss_eager, _ = eager.train_step(group)
        assert float(loss_compiled) / tokens == pytest.approx(float(loss_eager) / tokens,
                                                              rel=2e-3 if precision == "fp32" else 3e-2)
        if guided:
            assert float(compiled.update.alignment_loss) == pytest.approx(float(eager.update.alignment_loss), rel=3e-2)
    assert flex_calls  # traced into the compiled step; the eager step's dense masks never call it
    with host_syncs_are_errors():
        loss, _ = compiled.train_step(batches[6:7])
    assert torch.isfinite(loss)


def test_flash_attentions_segments_attend_as_the_key_padding_mask():
    """train.attention: varlen's kernel, torch's varlen_attn (FlashAttention), over the key-padding
    segments, some holding no query (nmt.model.varlen_attention): in bf16 the output and gradients
    of the masked attention in fp32 within bf16's rounding, and a padding key's gradient zero. A
    full row, a one-key row and others; the encoder's shape and the encoder-decoder attention's."""
    import torch.nn.functional as F

    from nmt.model.varlen_attention import key_padding_segments, varlen_attention

    torch.manual_seed(0)
    real, keys, heads, width = [30, 1, 17, 29, 30], 30, 8, 64
    mask = (torch.arange(keys)[None, :] < torch.tensor(real)[:, None])[:, None, None, :].cuda()
    for queries in (keys, 23):
        q = torch.randn(len(real), heads, queries, width, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        k, v = (torch.randn(len(real), heads, keys, width, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                for _ in range(2))
        grad = torch.randn(len(real), queries, heads * width, device="cuda", dtype=torch.bfloat16)
        ours = varlen_attention(q, k, v, key_padding_segments(mask, queries))
        exact = [t.detach().float().requires_grad_() for t in (q, k, v)]
        theirs = F.scaled_dot_product_attention(*exact, attn_mask=mask).transpose(1, 2).reshape(grad.shape)
        ours_grads = torch.autograd.grad(ours, (q, k, v), grad)
        theirs_grads = torch.autograd.grad(theirs, exact, grad.float())
        for a, b in zip([ours.detach(), *ours_grads], [theirs.detach(), *theirs_grads]):
            assert float((a.float() - b).abs().max() / b.abs().max()) < 2e-2
        assert ours_grads[1][1, :, 1:].abs().max() == 0 and ours_grads[2][2, :, 17:].abs().max() == 0


@pytest.mark.parametrize("compiled", [False, True])
def test_varlen_attention_trains_as_the_masked_step_and_never_waits_for_the_device(tmp_path, compiled):
    """train.attention: varlen in bf16, eager and compiled: the losses of the masked kernels' step
    (train.attention: sdpa) from the same weights, update after update, and no host sync."""
    settings = ["train.precision=bf16", "train.tf32=false", f"train.compile={str(compiled).lower()}", *ON_CUDA]
    varlen = Trainer(prepared_tiny(tmp_path / "varlen", *settings, "train.attention=varlen"))
    masked = Trainer(prepared_tiny(tmp_path / "masked", *settings, "train.attention=sdpa"))
    assert varlen.model.varlen_attention and not masked.model.varlen_attention
    masked.model.load_state_dict(varlen.model.state_dict())
    batches = epoch_batches(varlen.train_data, varlen.train_cfg.max_tokens, 1, 0)
    for group in ([b] for b in batches[:5]):
        loss_varlen, tokens = varlen.train_step(group)
        loss_masked, _ = masked.train_step(group)
        assert float(loss_varlen) / tokens == pytest.approx(float(loss_masked) / tokens, rel=3e-2)
    with host_syncs_are_errors():
        loss, _ = varlen.train_step(batches[5:6])
    assert torch.isfinite(loss)
