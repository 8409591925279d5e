"""The GPU-only branches of a training update, run on the CPU: bf16 and fp16 autocast with the
loss scaler on, the compiled step, the host-sync budget, resuming across precisions, and
fine-tuning from a parent loaded to another device."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
import torch

from nmt.checkpoint import load_checkpoint
from nmt.data.batching import collate, epoch_batches
from nmt.model.matmul_attention import CPU_SOFTMAX_MIN_COLUMNS
from nmt.data.prepare import prepare
from nmt.data.tokenizer import train_tokenizer
from nmt.train import checkpointing
from nmt.train import step as step_module
from nmt.train.trainer import Trainer, train
from tests.conftest import assert_same_gradients, compile_with_aot_eager, loss_and_gradients, prepared_tiny, tiny_recipe
from tests.host_syncs import HostSyncCounter

QUIET = ["train.valid_bleu_sentences=0", "train.log_every=5", "train.valid_every=1000"]
# Compiling traces every layer: one of each holds every operator the step has, in half the tracing time.
ONE_LAYER_EACH = ["model.encoder_layers=1", "model.decoder_layers=1"]


def groups_of(trainer: Trainer, n: int) -> list:
    """The first n updates' groups of batches, over as many epochs as that takes."""
    batches, epoch = [], 0
    while len(batches) < n * trainer.train_cfg.update_freq:
        batches += epoch_batches(trainer.train_data, trainer.train_cfg.max_tokens, trainer.train_cfg.seed, epoch)
        epoch += 1
    freq = trainer.train_cfg.update_freq
    return [batches[i * freq:(i + 1) * freq] for i in range(n)]


def weights(trainer: Trainer) -> dict:
    return {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_trainer_runs_end_to_end_in_mixed_precision(tmp_path, precision):
    recipe = prepared_tiny(tmp_path, f"train.precision={precision}", "train.max_steps=20", *QUIET)
    result = train(recipe, show_progress=False)
    assert result.step == 20
    payload = load_checkpoint(result.checkpoint)
    assert all(torch.isfinite(t).all() for t in payload["model"].values())
    losses = [line for line in (tmp_path / "metrics.jsonl").read_text().splitlines() if '"train"' in line]
    first, last = (float(line.split('"loss": ')[1].split(",")[0]) for line in (losses[0], losses[-1]))
    assert last < first  # it learns
    if precision == "fp16":  # the scaler runs on the CPU too, and its state is checkpointed
        assert payload["scaler"]["scale"] > 0 and payload["scaler"]["growth_interval"] == 2000
    else:
        assert payload["scaler"] == {}


def test_fp16_scaler_skips_an_overflowing_update_and_halves_its_scale(tmp_path):
    recipe = prepared_tiny(tmp_path, "train.precision=fp16", "train.clip_norm=1.0", *QUIET)
    trainer = Trainer(recipe)
    assert trainer.update.scaler.is_enabled()
    first, second, third = groups_of(trainer, 3)
    trainer.train_step(first)
    before, scale = weights(trainer), trainer.update.scaler.get_scale()

    # An inf in one gradient: the whole update is skipped and the scale halves.
    parameter = next(trainer.model.parameters())
    hook = parameter.register_hook(lambda grad: torch.full_like(grad, math.inf))
    trainer.train_step(second)
    hook.remove()
    after = weights(trainer)
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert trainer.update.scaler.get_scale() == scale / 2

    # Clipping sees the unscaled gradients (their norm, not the norm times the loss scale).
    seen = []
    original = torch.nn.utils.clip_grad_norm_

    def recording_clip(parameters, max_norm, *args, **kwargs):
        norm = original(parameters, max_norm, *args, **kwargs)
        seen.append(float(norm))
        return norm

    torch.nn.utils.clip_grad_norm_ = recording_clip
    try:
        trainer.train_step(third)
    finally:
        torch.nn.utils.clip_grad_norm_ = original
    assert 0 < seen[0] < 100 < scale / 2  # unscaled: the scale is 32768
    assert not all(torch.equal(after[k], v) for k, v in weights(trainer).items())  # this update happened

    trainer.checkpoints.save(trainer.progress)
    assert load_checkpoint(trainer.checkpoints.folder / "last.pt")["scaler"]["scale"] == scale / 2


def test_resume_across_precisions(tmp_path):
    base = [*QUIET, "train.valid_every=4"]
    steps = {"fp16": 4, "bf16": 8, "fp32": 12}
    for precision, until in steps.items():
        recipe = prepared_tiny(tmp_path, f"train.precision={precision}", f"train.max_steps={until}", *base)
        assert train(recipe, show_progress=False).step == until
    # And back to fp16 from an fp32 checkpoint (an empty scaler state): a fresh scale, with a note.
    recipe = prepared_tiny(tmp_path, "train.precision=fp16", "train.max_steps=16", *base)
    trainer = Trainer(recipe)
    notes = []
    trainer.log = notes.append
    assert trainer.run(show_progress=False).step == 16
    assert any("no loss scale in the checkpoint" in n for n in notes)
    assert load_checkpoint(tmp_path / "checkpoints" / "last.pt")["scaler"]["scale"] > 0


def test_fine_tuning_loads_the_parent_to_the_cpu(tmp_path, monkeypatch):
    """On a GPU the model lives on CUDA while the tokenizers are compared on the host: the parent
    must be read to the CPU (it was read to the model's device, and torch.equal then raised)."""
    parent = prepared_tiny(tmp_path / "parent", "train.max_steps=2", *QUIET)
    train(parent, show_progress=False)
    locations = []
    real_open = checkpointing.open_checkpoint

    def open_and_record(path, map_location="cpu", **options):
        locations.append(str(map_location))
        return real_open(path, map_location, **options)

    monkeypatch.setattr(checkpointing, "open_checkpoint", open_and_record)
    child = tiny_recipe(tmp_path / "child", f"train.init_from={parent.out / 'checkpoints' / 'last.pt'}",
                        "train.max_steps=2", *QUIET)
    train_tokenizer(child.data, child.tokenizer, child.out, child.train.init_from)  # the parent's tokenizer
    prepare(child.data, child.tokenizer, child.out)
    trainer = Trainer(child)
    monkeypatch.setattr(trainer.checkpoints, "device", torch.device("meta"))  # where a GPU run's model would be
    trainer.checkpoints.init_from_parent()
    assert locations == ["cpu"]


def test_fused_adam_takes_the_steps_of_torchs_reference_loop(tmp_path, monkeypatch):
    """Every device's step runs fused Adam; from the same weights and gradients its updates, and
    the moments it keeps, are those of torch's unfused loop within float rounding (two updates,
    with weight decay; no dropout, and each update from the same weights, so both see the same
    gradients: the key biases' are rounding noise, which Adam would blow up to full steps)."""
    settings = ["model.dropout=0", "train.weight_decay=0.01", *QUIET]
    trainers = {}
    for fused in (True, False):
        monkeypatch.setattr(step_module, "fused_adam", lambda device, fused=fused: fused)
        trainers[fused] = Trainer(prepared_tiny(tmp_path / str(fused), *settings))
    assert trainers[True].update.optimizer.defaults["fused"] and not trainers[False].update.optimizer.defaults["fused"]
    start = weights(trainers[True])
    for group in groups_of(trainers[True], 2):
        trainers[False].model.load_state_dict(trainers[True].model.state_dict())
        for trainer in trainers.values():
            trainer.train_step(group)
    fused, loop = weights(trainers[True]), weights(trainers[False])
    assert any(not torch.equal(fused[k], start[k]) for k in start)
    for key in fused:
        assert torch.allclose(fused[key], loop[key], rtol=1e-5, atol=1e-7), key
    for a, b in zip(trainers[True].update.optimizer.state.values(), trainers[False].update.optimizer.state.values()):
        assert float(a["step"]) == float(b["step"]) == 2
        assert torch.allclose(a["exp_avg"], b["exp_avg"], rtol=1e-5, atol=1e-9)
        assert torch.allclose(a["exp_avg_sq"], b["exp_avg_sq"], rtol=1e-5, atol=1e-12)


@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("fused", [True, False])
def test_a_training_update_reads_nothing_back_from_the_device(tmp_path, monkeypatch, precision, fused):
    """No host sync in an update with fused Adam, the optimizer of one process or DDP (the loss is
    read every log_every updates, outside the update). With the unfused Adam (FSDP's), whose step
    counts live on the host on every device, only those host values are read, and fp16's overflow
    flag once. The weights' average (train.ema_decay) is moved within the update, reading nothing."""
    monkeypatch.setattr(step_module, "fused_adam", lambda device: fused)
    recipe = prepared_tiny(tmp_path, f"train.precision={precision}", "train.update_freq=2", "train.clip_norm=1.0",
                           "train.ema_decay=0.99", *QUIET)
    trainer = Trainer(recipe)
    first, second = groups_of(trainer, 2)
    trainer.train_step(first)  # the first update creates Adam's state
    with HostSyncCounter() as syncs:
        trainer.train_step(second)
    if fused:
        assert syncs.ops == []
    else:
        adam_steps = len(list(trainer.model.parameters()))  # `step.item()` on host tensors, once per parameter
        scaler = 1 if precision == "fp16" else 0
        assert syncs.ops == ["aten._local_scalar_dense.default"] * (adam_steps + scaler)


@pytest.mark.slow
def test_compiled_step_compiles_once_without_graph_breaks_and_matches_eager(tmp_path, monkeypatch):
    """nmt's side of compiling: dynamo traces the step once, into one graph that every batch shape
    shares, and AOT autograd's forward and backward give eager's losses. Inductor's code generation
    is torch's and costs a minute of C++ compiling on a CPU: the backend here is aot_eager (the same
    traces, run by torch's own kernels); the GPU day compiles with inductor (compiled_vs_eager, and
    the compiled speed runs)."""
    from torch._dynamo.utils import counters

    compile_with_aot_eager(monkeypatch)
    settings = ["train.compile=true", "train.max_tokens=256", *ONE_LAYER_EACH, *QUIET]
    recipe = prepared_tiny(tmp_path, *settings)
    eager = Trainer(prepared_tiny(tmp_path / "eager", *settings[1:]))
    compiled = Trainer(recipe)
    compiled.model.load_state_dict(eager.model.state_dict())
    rng = np.random.default_rng(0)  # 12 batches of 2 to 13 random sentences: 12 different shapes
    groups = [[rng.choice(len(compiled.train_data), size, replace=False)] for size in range(2, 14)]
    # The first batch's source as long as its target (S = T): dimensions of equal size must not
    # share a symbol, else the first batch without that equality compiles the step again.
    def same_lengths(batch):
        return batch.src.shape[1] == batch.tgt_in.shape[1]

    first = next(group for group in ([rng.choice(len(compiled.train_data), 4, replace=False)] for _ in range(10_000))
                 if same_lengths(collate(compiled.train_data, group[0])))
    # And the 3 shortest pairs: fewer keys than a CPU's softmax pads to (CPU_SOFTMAX_MIN_COLUMNS),
    # a width eager attention compares and a compiled graph must not.
    data = compiled.train_data
    shortest = [np.argsort(np.maximum(data.src.lengths, data.tgt.lengths), kind="stable")[:3]]
    groups = [first, shortest] + [group for group in groups if len(group[0]) not in (3, 4)]

    torch._dynamo.reset()
    counters.clear()
    shapes = set()
    for group in groups:  # 12 updates, batches of different shapes
        b = collate(compiled.train_data, group[0])
        shapes.add((tuple(b.src.shape), tuple(b.tgt_in.shape)))
        loss_compiled, tokens = compiled.train_step(group)
        loss_eager, _ = eager.train_step(group)
        assert loss_compiled.item() / tokens == pytest.approx(loss_eager.item() / tokens, rel=2e-3)
    assert len(shapes) == 12 and not all(same_lengths(collate(compiled.train_data, g[0])) for g in groups)
    assert {src[1] < CPU_SOFTMAX_MIN_COLUMNS for src, _ in shapes} == {True, False}
    assert not counters["graph_break"], dict(counters["graph_break"])  # the whole step in one graph ...
    assert counters["frames"]["total"] == counters["frames"]["ok"] == 1
    assert counters["stats"]["unique_graphs"] == 1  # ... for every shape: no recompilation
    assert counters["aot_autograd"]["total"] == 1  # traced once: no second trace for specialized floats
    # Each update's loss agreeing with eager's, on weights both steps updated, checks the gradients
    # and the optimizer too. (Weights are not compared element by element: the key biases have a
    # zero gradient in exact arithmetic, and Adam turns their rounding noise into full-size steps.)


def test_cuda_settings_tf32_scoped_to_the_update_and_fused_adam():
    """What a CUDA device gets, set without one: TF32 for fp32 matmuls inside the block (a training
    update) unless train.tf32=false, the process's own setting restored after it; a CPU changes
    nothing. Fused Adam on CUDA and on a CPU."""
    from nmt.model.precision import tf32

    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
        with tf32(torch.device("cpu"), True):
            assert not torch.backends.cuda.matmul.allow_tf32
        with tf32(torch.device("cuda"), True):
            assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
        assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        with tf32(torch.device("cuda"), False):
            assert not torch.backends.cuda.matmul.allow_tf32
        assert torch.backends.cuda.matmul.allow_tf32
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
    assert step_module.fused_adam(torch.device("cuda")) and step_module.fused_adam(torch.device("cpu"))


def test_cuda_attention_without_cudnn_inside_an_update_only():
    """cuDNN's attention kernel builds a plan for every new shape (seconds per update on a GPU while
    token batches bring new shapes): off inside the block on CUDA, the process's setting after;
    a CPU changes nothing."""
    from nmt.model.precision import attention_kernels

    assert torch.backends.cuda.cudnn_sdp_enabled()
    with attention_kernels(torch.device("cpu")):
        assert torch.backends.cuda.cudnn_sdp_enabled()
    with attention_kernels(torch.device("cuda")):
        assert not torch.backends.cuda.cudnn_sdp_enabled()
        assert torch.backends.cuda.flash_sdp_enabled() and torch.backends.cuda.mem_efficient_sdp_enabled()
    assert torch.backends.cuda.cudnn_sdp_enabled()


def test_each_training_update_runs_inside_the_attention_choice(tmp_path, monkeypatch):
    """TrainStep enters attention_kernels for its device around each whole update."""
    calls = []

    @contextlib.contextmanager
    def recording(device):
        calls.append(("enter", device.type))
        yield
        calls.append(("exit", device.type))

    monkeypatch.setattr(step_module, "attention_kernels", recording)
    trainer = Trainer(prepared_tiny(tmp_path, *QUIET))
    real_forward = trainer.update.forward
    trainer.update.forward = lambda *args: calls.append(("forward", None)) or real_forward(*args)
    for group in groups_of(trainer, 2):
        trainer.train_step(group)
    assert calls == [("enter", "cpu"), ("forward", None), ("exit", "cpu")] * 2


def test_an_update_after_validation_runs_every_module_in_training_mode(tmp_path):
    """The step sets training mode only when the model left it (validation's eval): each module's
    flag, as the forward meets it, is training, in the update after an eval and in the next."""
    trainer = Trainer(prepared_tiny(tmp_path, *QUIET))
    modes = []
    real_forward = trainer.update.forward
    trainer.update.forward = lambda *args: modes.append({m.training for m in trainer.model.modules()}) or real_forward(*args)
    trainer.model.eval()  # as validate() leaves it, were it not to restore training mode itself
    for group in groups_of(trainer, 2):
        trainer.train_step(group)
    assert modes == [{True}, {True}]


def test_ddp_device_ids_name_one_gpu_even_for_plain_cuda(monkeypatch):
    """`cuda` without an index (bench/gpu.py's device) must not reach DDP as device_ids=[None]."""
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 3)
    assert step_module._device_ids(torch.device("cuda")) == [3]
    assert step_module._device_ids(torch.device("cuda:1")) == [1]
    assert step_module._device_ids(torch.device("cpu")) is None


def test_batches_padded_to_a_multiple_of_8_give_the_same_loss_and_gradients(tmp_path):
    """CUDA's collation pads both sides to a multiple of 8 (length_multiple), unless no mask reaches
    an attention kernel (train.attention: varlen): the extra PAD columns are masked keys and
    unscored targets, so loss and gradients are those of the unpadded batch."""
    from nmt.data.batching import length_multiple

    assert length_multiple("cuda") == 8 and length_multiple("cpu") == 1
    assert length_multiple("cuda", varlen_attention=True) == length_multiple("cpu", varlen_attention=True) == 1
    trainer = Trainer(prepared_tiny(tmp_path, *QUIET))
    indices = epoch_batches(trainer.train_data, trainer.train_cfg.max_tokens, 1, 0)[0]
    plain, padded = collate(trainer.train_data, indices), collate(trainer.train_data, indices, 8)
    assert padded.src.size(1) % 8 == 0 and padded.tgt_in.size(1) % 8 == 0
    assert padded.src.size(1) > plain.src.size(1) or padded.tgt_in.size(1) > plain.tgt_in.size(1)
    assert torch.equal(padded.out_targets, plain.out_targets)
    model = trainer.model.eval()  # no dropout: the same function of both batches
    (plain_loss, plain_grads), (padded_loss, padded_grads) = (loss_and_gradients(model, b) for b in (plain, padded))
    assert torch.allclose(plain_loss, padded_loss, rtol=1e-5)
    assert_same_gradients(model, plain_grads, padded_grads)  # float rounding only: the summation order differs


def test_compile_auto_compiles_long_cuda_runs_only_and_falls_back_to_eager_with_the_reason():
    """`train.compile: auto` (the default): eager on a CPU; on CUDA compiled for a long run, eager
    for a short one, and eager with the reason where compiling fails; `true` there is an error,
    and on a CPU compiles with a note of what it costs there."""
    from nmt.config import TrainConfig
    from nmt.errors import NmtError
    from nmt.train.compiling import resolve_compile

    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    works = lambda device: None  # noqa: E731 (no CUDA here: the smoke test is what differs)

    def fails(device):
        raise RuntimeError("Compiler: cc is not found\nmore detail")

    long_run = TrainConfig(max_steps=100_000)
    assert long_run.compile == "auto"
    assert resolve_compile(long_run, cpu, works) == (False, None)
    assert resolve_compile(long_run, cuda, works) == (True, "train.compile auto: the training step is compiled")
    compiled, note = resolve_compile(long_run, cuda, fails)
    assert not compiled and note == ("train.compile auto: eager, torch.compile fails on this machine "
                                     "(RuntimeError: Compiler: cc is not found)")
    for short in (TrainConfig(max_steps=300), TrainConfig(max_steps=100_000, max_minutes=2)):
        compiled, note = resolve_compile(short, cuda, works)
        assert not compiled and "too short to pay back a compile" in note
    compiled, note = resolve_compile(TrainConfig(compile=True, max_steps=10), cpu, works)
    assert compiled and note.startswith("train.compile=true on a CPU") and "compiling pays on GPUs" in note
    assert resolve_compile(TrainConfig(compile=True, max_steps=10), cuda, works) == (True, None)
    assert resolve_compile(TrainConfig(compile=False), cuda, works) == (False, None)
    with pytest.raises(NmtError, match="train.compile=true, but torch.compile fails on this machine"):
        resolve_compile(TrainConfig(compile=True), cuda, fails)


def test_the_compile_smoke_test_runs_and_catches_a_wrong_compiled_output(monkeypatch):
    from nmt.model.compiler import compile_smoke_test

    compile_smoke_test(torch.device("cpu"), backend="aot_eager")
    monkeypatch.setattr(torch, "compile", lambda layer, **settings: lambda x: layer(x) + 1)
    with pytest.raises(RuntimeError, match="differs from eager"):
        compile_smoke_test(torch.device("cpu"), backend="aot_eager")


@pytest.mark.parametrize("capabilities", [{"avx512_bf16": True}, {"amx_bf16": True}, {"avx512_bf16": False}, {}])
def test_precision_auto_trains_in_bf16_where_the_cpu_multiplies_it_and_says_so(tmp_path, monkeypatch, capabilities):
    """train.precision auto (the default): bf16 on a CPU with AVX512-BF16 or AMX-BF16, fp32 on one
    without, whatever this host has; the run's log says which and why, the update autocasts to it
    (its loss equals an explicit setting's), and the memory estimate counts 2 or 4 bytes a weight."""
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: capabilities)
    native = any(capabilities.values())
    chosen = "bf16" if native else "fp32"
    logs = {}
    losses = {}
    for setting in ("auto", chosen):
        recipe = prepared_tiny(tmp_path / setting, f"train.precision={setting}", *QUIET)
        trainer = Trainer(recipe)
        logs[setting] = []
        trainer.log = lambda message, setting=setting: logs[setting].append(str(message))
        trainer._start()
        assert trainer.train_cfg.precision == trainer.update.train_cfg.precision == chosen
        losses[setting] = [trainer.train_step(group)[0].item() for group in groups_of(trainer, 3)]
    assert losses["auto"] == losses[chosen]
    named = "AMX-BF16" if capabilities.get("amx_bf16") else "AVX512-BF16"
    expected = f"train.precision auto: bf16 ({named} dot products)" if native else \
        "train.precision auto: fp32 (no bf16 arithmetic on cpu)"
    assert expected in logs["auto"] and not any("train.precision" in line for line in logs[chosen])
    assert not any(line.startswith("warning") and "precision" in line for line in logs["auto"] + logs[chosen])
    # the model's part of the estimate (the rest is what the test process holds at the time)
    memory = [next(line for line in logs[s] if line.startswith("memory estimate")).split("; the process")[0]
              for s in ("auto", chosen)]
    assert memory[0] == memory[1]


def test_bf16_on_a_cpu_without_bf16_arithmetic_is_a_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {"avx512_bf16": False})
    trainer = Trainer(prepared_tiny(tmp_path, "train.precision=bf16", *QUIET))
    said = []
    trainer.log = lambda message: said.append(str(message))
    trainer._start()
    assert ("warning: train.precision=bf16 on a CPU without bf16 arithmetic: slower than fp32 (train.precision auto "
            "chooses for this CPU)") in said
