import math
import re

import pytest
import torch
import torch.nn.functional as F

from nmt.config import TrainConfig, recipe_from_dict, recipe_to_dict
from nmt.special_tokens import PAD
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.errors import NmtError
from nmt.model.output_loss import output_layer_loss, smoothed_cross_entropy_sum
from nmt.checkpoint import count_parameters
from nmt.checkpoint import TRAINING_WEIGHTS, average_checkpoints, load_checkpoint, save_checkpoint
from nmt.train.metrics import read_metrics
from nmt.train.schedule import Schedule, cooldown_factor, inverse_sqrt_rate
from nmt.train.trainer import Trainer, train
from nmt.data.tokenizer import output_text
from tests.conftest import TINY_DATA, prepared_tiny


def test_label_smoothed_loss_by_hand():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0], [0.5, 0.5, 3.0, 0.0], [1.0, 2.0, 3.0, 4.0]])
    target = torch.tensor([1, 2, PAD])  # the PAD position is ignored
    eps = 0.1
    expected = 0.0
    for row, t in ((0, 1), (1, 2)):
        z = logits[row].tolist()
        log_norm = math.log(sum(math.exp(v) for v in z))
        nll = log_norm - z[t]
        uniform = sum(log_norm - v for v in z) / 4
        expected += (1 - eps) * nll + eps * uniform
    identity = torch.eye(4)  # hidden @ I.T = the logits above
    for rows in (1, 2, 3):
        assert output_layer_loss(logits, identity, target, eps, rows).item() == pytest.approx(expected, rel=1e-6)
    assert output_layer_loss(logits, identity, target, 0.0).item() == pytest.approx(
        sum(math.log(sum(math.exp(v) for v in logits[r].tolist())) - logits[r, t].item() for r, t in ((0, 1), (1, 2))))


@pytest.mark.parametrize("rows", [1, 5, 64])
def test_fused_output_loss_matches_pytorch_in_value_and_gradients(rows):
    torch.manual_seed(0)
    hidden, weight = torch.randn(13, 8), torch.randn(50, 8)
    target = torch.randint(1, 50, (13,))
    target[[2, 7]] = PAD
    h1, w1 = hidden.clone().requires_grad_(), weight.clone().requires_grad_()
    reference = F.cross_entropy(F.linear(h1, w1), target, ignore_index=PAD, label_smoothing=0.1, reduction="sum")
    (reference * 0.5).backward()
    h2, w2 = hidden.clone().requires_grad_(), weight.clone().requires_grad_()
    fused = output_layer_loss(h2, w2, target, 0.1, rows)
    (fused * 0.5).backward()  # the incoming gradient scales the stored ones
    assert fused.item() == pytest.approx(reference.item(), rel=1e-5)
    assert torch.allclose(h2.grad, h1.grad, atol=1e-5) and torch.allclose(w2.grad, w1.grad, atol=1e-5)
    with torch.no_grad():  # validation: no gradients computed
        assert output_layer_loss(hidden, weight, target, 0.1, rows).item() == pytest.approx(reference.item(), rel=1e-5)


def test_fused_output_loss_holds_where_a_targets_probability_underflows():
    """Logits 200 apart: the target's probability is below fp32's smallest (e^-200), and the loss
    and gradients still equal F.cross_entropy's (the log-sum-exp comes from the likeliest piece,
    whose probability is at least 1/V)."""
    hidden, weight = torch.eye(6)[:3] * 200, torch.eye(6)
    target = torch.tensor([3, 0, PAD])  # row 0: target logit 0, top logit 200
    h1, w1 = hidden.clone().requires_grad_(), weight.clone().requires_grad_()
    reference = F.cross_entropy(F.linear(h1, w1), target, ignore_index=PAD, label_smoothing=0.1, reduction="sum")
    reference.backward()
    h2, w2 = hidden.clone().requires_grad_(), weight.clone().requires_grad_()
    fused = output_layer_loss(h2, w2, target, 0.1, 2)
    fused.backward()
    assert math.isfinite(fused.item()) and fused.item() == pytest.approx(reference.item(), rel=1e-6)
    assert reference.item() > 150
    assert torch.allclose(h2.grad, h1.grad, atol=1e-5) and torch.allclose(w2.grad, w1.grad, atol=1e-4)


def test_the_compiled_steps_loss_is_label_smoothed_cross_entropy():
    """The formula a compiled step traces (smoothed_cross_entropy_sum) gives F.cross_entropy's
    label-smoothed sum and its gradient, PAD targets counting zero."""
    torch.manual_seed(0)
    logits = torch.randn(9, 13, dtype=torch.float64) * 3
    target = torch.randint(1, 13, (9,))
    target[[1, 6]] = PAD
    grads = []
    for loss_of in (lambda z: smoothed_cross_entropy_sum(z, target, 0.1),
                    lambda z: F.cross_entropy(z, target, ignore_index=PAD, label_smoothing=0.1, reduction="sum")):
        z = logits.clone().requires_grad_()
        loss = loss_of(z)
        (loss * 0.3).backward()
        grads.append((loss.detach(), z.grad))
    (ours, our_grad), (torchs, torch_grad) = grads
    assert torch.allclose(ours, torchs, rtol=1e-12) and torch.allclose(our_grad, torch_grad, atol=1e-12)
    assert not our_grad[[1, 6]].any()


REDUCTIONS_INSIDE = {"aten._log_softmax.default", "aten._softmax.default", "aten.logsumexp.default",
                     "aten._log_softmax_backward_data.default", "aten._softmax_backward_data.default"}


def reductions_over_the_vocabulary(graph: torch.fx.Graph, vocabulary: int) -> list[torch.fx.Node]:
    """The graph's operators that reduce over a (N, V) tensor's last dimension: those that do
    inside (softmax and its kin), and those whose output is smaller than such an input."""
    def rows_by_vocabulary(node):
        value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        return isinstance(value, torch.Tensor) and value.dim() == 2 and value.size(1) == vocabulary

    found = []
    for node in graph.nodes:
        if node.op != "call_function" or not any(map(rows_by_vocabulary, node.all_input_nodes)):
            continue
        output = node.meta.get("val")
        if str(node.target) in REDUCTIONS_INSIDE or (isinstance(output, torch.Tensor) and output.dim() < 2):
            found.append(node)
    return found


@pytest.mark.parametrize("formula", ["nmt's", "F.cross_entropy"])
def test_the_compiled_steps_loss_reads_the_logits_in_one_pass_each_way(formula):
    """A CPU proxy of the compiled step's loss kernels on a GPU (where the (N, V) logits are the
    largest tensor: 1.7 GB for the base recipe's update in bf16). In the graphs AOT autograd gives
    the compiler, no reduction over the vocabulary needs another's result (inductor then fuses
    them into one pass over the logits: logsumexp's max and sum as an online softmax), and the
    backward reduces nothing over the vocabulary (a pointwise kernel). F.cross_entropy's
    smoothing term sums the log-softmax (a second pass), and its backward sums the incoming
    gradient over the vocabulary: the check fails for it."""
    from functorch.compile import aot_function, make_boxed_func

    graphs = {}

    def keep(name):
        def compiler(graph_module, inputs):
            graphs[name] = graph_module.graph
            return make_boxed_func(graph_module.forward)
        return compiler

    vocabulary, target = 11, torch.tensor([1, PAD, 3, 10, 2, 5])
    loss = (lambda z, t: smoothed_cross_entropy_sum(z, t, 0.1)) if formula == "nmt's" else \
        (lambda z, t: F.cross_entropy(z, t, ignore_index=PAD, label_smoothing=0.1, reduction="sum"))
    aot_function(loss, fw_compiler=keep("forward"), bw_compiler=keep("backward"))(
        torch.randn(6, vocabulary, requires_grad=True), target).backward()
    forward = reductions_over_the_vocabulary(graphs["forward"], vocabulary)
    chained = [node for node in forward if ancestors(node) & set(forward)]
    one_pass_each_way = not chained and not reductions_over_the_vocabulary(graphs["backward"], vocabulary)
    assert one_pass_each_way == (formula == "nmt's")


def ancestors(node: torch.fx.Node) -> set[torch.fx.Node]:
    seen, todo = set(), list(node.all_input_nodes)
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(current.all_input_nodes)
    return seen


def test_fused_output_loss_under_bf16_autocast_stays_close_to_fp32():
    """The mixed-precision path of GPU training, run on the CPU: bf16 products, fp32 sums."""
    torch.manual_seed(0)
    hidden, weight, target = torch.randn(40, 16), torch.randn(30, 16) * 0.3, torch.randint(1, 30, (40,))
    h1, w1 = hidden.clone().requires_grad_(), weight.clone().requires_grad_()
    output_layer_loss(h1, w1, target, 0.1).backward()
    h2, w2 = hidden.clone().requires_grad_(), weight.clone().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = output_layer_loss(h2, w2, target, 0.1, rows=7)
    loss.backward()
    assert h2.grad.dtype == torch.float32 and w2.grad.dtype == torch.float32
    assert torch.allclose(h2.grad, h1.grad, atol=0.05) and torch.allclose(w2.grad, w1.grad, atol=0.05)


def paper_rate(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """The paper's formula (5.3), written out."""
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def test_the_schedule_by_hand_is_the_papers_with_its_peak_as_lr():
    assert paper_rate(4000, 512, 4000) == pytest.approx(6.99e-4, abs=1e-6)  # the base model's peak
    for step in (1, 2000, 4000, 16000):
        assert inverse_sqrt_rate(step, 512 ** -0.5 * 4000 ** -0.5, 4000) == pytest.approx(paper_rate(step, 512, 4000))
    assert inverse_sqrt_rate(50, 1e-3, 100) == pytest.approx(5e-4)
    assert inverse_sqrt_rate(400, 1e-3, 100) == pytest.approx(5e-4)


def test_scheduler_gives_update_n_the_rate_of_step_n_and_no_lr_is_the_papers():
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.Adam([param], lr=1.0)
    scheduler = Schedule(optimizer, TrainConfig(warmup_steps=10), d_model=64)
    for n in range(1, 30):
        assert optimizer.param_groups[0]["lr"] == pytest.approx(paper_rate(n, 64, 10))
        optimizer.step()
        scheduler.step()


def test_a_noam_recipe_becomes_its_peak_rate_with_a_note_and_trains_at_the_same_rates():
    notes = []
    raw = {"output_dir": "x", "data": {"src_lang": "en", "tgt_lang": "de", "train": "t", "valid": "v"}, "model": {"d_model": 64},
           "train": {"lr_schedule": "noam", "lr": 2.0, "warmup_steps": 10}}
    recipe = recipe_from_dict(raw, "old.yaml", say=notes.append)
    assert recipe.train.lr_schedule == "inverse_sqrt" and recipe.train.lr == pytest.approx(2.0 * (64 * 10) ** -0.5)
    assert notes == [f"note: old.yaml: train.lr_schedule: noam with lr 2.0 is now written train.lr_schedule: "
                     f"inverse_sqrt, train.lr: {recipe.train.lr:.4g} (train.lr is the peak rate under every schedule)"]
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.Adam([param], lr=1.0)
    scheduler = Schedule(optimizer, recipe.train, d_model=64)
    for n in range(1, 30):
        assert optimizer.param_groups[0]["lr"] == pytest.approx(paper_rate(n, 64, 10, factor=2.0))
        optimizer.step()
        scheduler.step()


def test_a_factor_given_as_lr_is_an_error_that_says_what_lr_means():
    raw = {"output_dir": "x", "data": {"src_lang": "en", "tgt_lang": "de", "train": "t", "valid": "v"}, "train": {"lr": 2.0}}
    with pytest.raises(NmtError, match=r"^my.yaml: train.lr: the peak learning rate must be below 0.1"):
        recipe_from_dict(raw, "my.yaml")


def test_cooldown_takes_the_rate_linearly_to_zero_over_the_end_of_the_step_budget():
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.Adam([param], lr=1.0)
    cfg = TrainConfig(lr_schedule="inverse_sqrt", lr=1e-3, warmup_steps=2, max_steps=10, cooldown=0.4)
    scheduler = Schedule(optimizer, cfg, d_model=64)
    # Update n runs after n-1 of 10 updates: factor 1 until 6/10 of the budget is used,
    # then (1 - used) / 0.4: 1.0 at n=7, 0.75, 0.5, 0.25 at n=10 (never 0: no wasted update).
    factors = [1.0] * 7 + [0.75, 0.5, 0.25]
    for n, factor in enumerate(factors, start=1):
        assert optimizer.param_groups[0]["lr"] == pytest.approx(inverse_sqrt_rate(n, 1e-3, 2) * factor)
        optimizer.step()
        scheduler.step()
    assert cooldown_factor(0.95, 0.0) == 1.0 and cooldown_factor(1.2, 0.5) == 0.0


def rates_of_updates(cfg: TrainConfig) -> list[float]:
    """The rate each of cfg.max_steps updates runs at, under the step budget."""
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = Schedule(optimizer, cfg, d_model=64)
    rates = []
    for _ in range(cfg.max_steps):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return rates


def test_the_constant_and_cosine_schedules_by_hand():
    # constant: warm-up over 4 updates, then the peak; cooled down over the last half of 10 updates
    # (update n runs after n - 1 of them: (1 - (n - 1)/10) / 0.5 from n = 7)
    constant = TrainConfig(lr_schedule="constant", lr=1e-3, warmup_steps=4, max_steps=10, cooldown=0.5)
    assert rates_of_updates(constant) == pytest.approx(
        [2.5e-4, 5e-4, 7.5e-4, 1e-3, 1e-3, 1e-3, 8e-4, 6e-4, 4e-4, 2e-4])
    # cooldown 1 is a linear decay from the first update
    assert rates_of_updates(TrainConfig(lr_schedule="constant", lr=1e-3, warmup_steps=0, max_steps=4, cooldown=1.0)) == \
        pytest.approx([1e-3, 7.5e-4, 5e-4, 2.5e-4])
    # cosine: warm-up over 2 of 6 updates, then 0.5 (1 + cos(π x)) of the peak, x going from 0 at
    # the warm-up's end (2/6 of the budget) to 1 at the budget's end: x = 0, 1/4, 1/2, 3/4
    cosine = TrainConfig(lr_schedule="cosine", lr=1e-3, warmup_steps=2, max_steps=6)
    assert rates_of_updates(cosine) == pytest.approx([5e-4, 1e-3, 1e-3, 8.53553e-4, 5e-4, 1.46447e-4], rel=1e-5)


def test_a_cosine_with_a_cooldown_and_a_mistyped_plateau_key_are_recipe_errors():
    raw = {"output_dir": "x", "data": {"src_lang": "en", "tgt_lang": "de", "train": "t", "valid": "v"},
           "train": {"lr_schedule": "cosine", "cooldown": 0.3}}
    with pytest.raises(NmtError, match=r"^my.yaml: .*train.cooldown: the cosine schedule already takes the rate to 0"):
        recipe_from_dict(raw, "my.yaml")
    raw["train"] = {"lr_plateau": {"factr": 0.5}}
    with pytest.raises(NmtError, match=r"^my.yaml: train.lr_plateau.factr: unknown key \(did you mean train.lr_plateau.factor\?\)"):
        recipe_from_dict(raw, "my.yaml")
    raw["train"] = {"lr_plateau": {"factor": 1.5}}
    with pytest.raises(NmtError, match=r"train.lr_plateau.factor"):
        recipe_from_dict(raw, "my.yaml")


def test_the_rate_is_cut_after_validations_without_improvement_and_a_resumed_run_keeps_the_cuts(tmp_path, monkeypatch):
    """Scripted dev losses by update: 3 validations without a better one cut the rate twice with
    patience 2 (after the 2nd and the 4th), an improvement restarts the count. A run stopped
    between the cuts and resumed runs its updates at the same rates to the same weights."""
    dev_nll = {1: 3.0, 2: 3.1, 3: 3.2, 4: 2.5, 5: 2.6, 6: 2.7, 7: 2.8, 8: 2.9, 9: 2.4}
    settings = ("train.lr_schedule=constant", "train.lr=1e-3", "train.warmup_steps=0", "train.max_tokens=128",
                "train.valid_every=1", "train.valid_bleu_sentences=0", "train.log_every=1000",
                "train.lr_plateau.factor=0.5", "train.lr_plateau.patience=2")

    def run(recipe) -> tuple[Trainer, list[float], list[str]]:
        trainer, rates, said = Trainer(recipe), [], []
        monkeypatch.setattr("nmt.train.trainer.validate", lambda *args: {"nll": dev_nll[trainer.progress.step]})
        # the rate each update runs at
        trainer.update.optimizer.register_step_pre_hook(lambda optimizer, *_: rates.append(optimizer.param_groups[0]["lr"]))
        trainer.log = lambda message: said.append(str(message))
        trainer.run(show_progress=False)
        return trainer, rates, said

    straight, rates, said = run(prepared_tiny(tmp_path / "straight", "train.max_steps=9", *settings))
    # cut after validation 3 (2 without improvement) and after 6 and 8 (2 and 4 since the best at 4)
    assert rates == pytest.approx([1e-3] * 3 + [5e-4] * 3 + [2.5e-4] * 2 + [1.25e-4])
    assert straight.update.scheduler.scale == 0.125
    assert [line for line in said if "lr_plateau" in line] == [
        f"dev nll not better for {n} validations: the rate is now {scale:g} × the schedule's (train.lr_plateau)"
        for n, scale in ((2, 0.5), (2, 0.25), (4, 0.125))]
    first_cut = next(i for i, line in enumerate(said) if "lr_plateau" in line)
    assert said[first_cut - 1].startswith("step 3 valid: nll 3.200")  # said after the validation it follows

    run(prepared_tiny(tmp_path / "stopped", "train.max_steps=4", *settings))  # after the first cut
    resumed, resumed_rates, _ = run(prepared_tiny(tmp_path / "stopped", "train.max_steps=9", *settings))
    assert resumed_rates == pytest.approx(rates[4:])
    a = load_checkpoint(straight.checkpoints.folder / "last.pt")
    b = load_checkpoint(resumed.checkpoints.folder / "last.pt")
    assert a["scheduler"]["scale"] == b["scheduler"]["scale"] == 0.125
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), name


def test_a_cosine_run_interrupted_after_its_warm_up_resumes_at_the_same_rates(tmp_path, monkeypatch):
    """Ctrl-C at update 5 of 10 (warm-up 3): the resumed run's cosine still starts where warm-up
    ended (3/10 of the budget, kept with the schedule's state), so its updates run at the
    uninterrupted run's rates to the same weights."""
    from nmt.train import stopping

    settings = ("train.lr_schedule=cosine", "train.lr=1e-3", "train.warmup_steps=3", "train.max_steps=10",
                "train.max_tokens=128", "train.valid_every=1000", "train.valid_bleu_sentences=0", "train.log_every=1000")

    def run(out, stop_at: int | None = None) -> tuple[Trainer, list[float]]:
        trainer, rates = Trainer(prepared_tiny(out, *settings)), []
        trainer.update.optimizer.register_step_pre_hook(lambda optimizer, *_: rates.append(optimizer.param_groups[0]["lr"]))
        monkeypatch.setattr("nmt.train.trainer.stop_reason", lambda cfg, p, *args: "signal SIGINT" if p.step == stop_at
                            else stopping.stop_reason(cfg, p, *args))
        trainer.run(show_progress=False)
        return trainer, rates

    straight, rates = run(tmp_path / "straight")
    assert rates[2:4] == pytest.approx([1e-3, 1e-3]) and rates[4] < 1e-3  # the peak at update 3 and 4, then down
    _, first = run(tmp_path / "stopped", stop_at=5)
    assert first == pytest.approx(rates[:5])
    resumed, rest = run(tmp_path / "stopped")
    assert rest == pytest.approx(rates[5:], rel=1e-9)
    a = load_checkpoint(straight.checkpoints.folder / "last.pt")
    b = load_checkpoint(resumed.checkpoints.folder / "last.pt")
    assert a["scheduler"]["decay_from"] == b["scheduler"]["decay_from"] == pytest.approx(0.3)
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), name


def test_cooldown_follows_the_time_budget_when_it_runs_out_first(tmp_path):
    settings = ("train.max_steps=8", "train.valid_every=100000", "train.valid_bleu_sentences=0",
                "train.lr_schedule=inverse_sqrt", "train.lr=1e-3", "train.warmup_steps=1", "train.log_every=1")
    recipe = prepared_tiny(tmp_path, "train.max_minutes=100", "train.cooldown=0.5", *settings)
    trainer = Trainer(recipe)
    trainer.progress.elapsed_seconds = 4500.0  # 3/4 of the time: half-way down the cool-down
    assert trainer._budget_used(2) == pytest.approx(0.75)  # time, not the 2/8 of the steps
    trainer.run(show_progress=False)
    lrs = [row["lr"] for row in read_metrics(recipe.out / "metrics.jsonl") if row["kind"] == "train"]
    factors = [lr / inverse_sqrt_rate(step + 1, 1e-3, 1) for step, lr in enumerate(lrs, start=1)]
    # After update n the next rate uses max(time 0.75, steps n/8): time rules until steps pass it.
    expected = [cooldown_factor(max(0.75, n / 8), 0.5) for n in range(1, 9)]  # 0.5 ×6, 0.25, 0
    assert factors == pytest.approx(expected, abs=0.01)


def test_checkpoints_are_atomic_and_damaged_files_are_clear_errors(tmp_path):
    path = tmp_path / "c.pt"
    save_checkpoint({"model": {"w": torch.ones(3)}, "recipe": {}}, path)
    assert [p.name for p in tmp_path.iterdir()] == ["c.pt"]
    assert torch.equal(load_checkpoint(path)["model"]["w"], torch.ones(3))
    whole = path.read_bytes()
    path.write_bytes(whole[:100])
    with pytest.raises(NmtError, match=r"c.pt: not a readable nmt checkpoint \(not a PyTorch archive"):
        load_checkpoint(path)
    path.write_text("a translation, not a checkpoint\n")
    with pytest.raises(NmtError, match=r"c.pt: not a readable nmt checkpoint \(not a PyTorch archive"):
        load_checkpoint(path)
    start = whole.index(b"data.pkl") + 100  # the pickle's bytes inside the archive, garbled
    path.write_bytes(whole[:start] + b"\xff" * 16 + whole[start + 16:])
    with pytest.raises(NmtError, match=r"c.pt: not a readable nmt checkpoint \(corrupt or truncated\?") as refused:
        load_checkpoint(path)
    assert "weights_only" not in str(refused.value) and "\n" not in str(refused.value)  # none of torch's advice
    torch.save({"something": torch.zeros(1)}, tmp_path / "other.pt")
    with pytest.raises(NmtError, match="other.pt: not an nmt checkpoint"):
        load_checkpoint(tmp_path / "other.pt")


def test_a_checkpoint_from_another_nmt_with_a_key_unknown_here_names_both_versions(trained_tiny, tmp_path):
    """A later nmt may write recipe keys this one lacks: the error says which nmt wrote the file."""
    import nmt
    from nmt.checkpoint import open_checkpoint

    payload = load_checkpoint(trained_tiny.out / "checkpoints" / "last.pt")
    payload["recipe"]["train"]["a_later_key"] = 1
    for version, suffix in ((nmt.__version__, ""), ("99.0", f" (written by nmt 99.0; "
                                                            f"this is nmt {nmt.__version__})")):
        payload["versions"]["nmt"] = version
        save_checkpoint(payload, tmp_path / "later.pt")
        with pytest.raises(NmtError) as refused:
            open_checkpoint(tmp_path / "later.pt")
        assert str(refused.value) == f"{tmp_path / 'later.pt'}: train.a_later_key: unknown key{suffix}"


class Unsafe:
    def __reduce__(self):
        return (print, ("this must never run",))


def test_checkpoints_never_unpickle_code(tmp_path):
    torch.save({"format": "nmt-checkpoint-1", "payload": Unsafe()}, tmp_path / "evil.pt")
    with pytest.raises(NmtError, match=r"not a readable nmt checkpoint \(it holds a Python object \([\w.]*print\)"):
        load_checkpoint(tmp_path / "evil.pt")


def toy_checkpoint(model: dict, path, *overrides: str, **more) -> None:
    """`model`'s tensors saved as a checkpoint of the tiny recipe (with `overrides`), its tokenizers
    stand-ins that are equal in every toy checkpoint."""
    from tests.conftest import tiny_recipe

    tokenizer = torch.frombuffer(bytearray(b"toy"), dtype=torch.uint8)
    save_checkpoint({"model": model, "recipe": recipe_to_dict(tiny_recipe(path.parent, *overrides)),
                     "tokenizer": {"src": tokenizer, "tgt": tokenizer}, **more}, path)


def test_average_of_toy_checkpoints(tmp_path):
    for i, values in enumerate(([1.0, 2.0], [3.0, 6.0], [5.0, 1.0])):
        toy_checkpoint({"w": torch.tensor(values), "n": torch.tensor([7])}, tmp_path / f"{i}.pt", progress={"step": i})
    averaged = average_checkpoints([tmp_path / f"{i}.pt" for i in range(3)])
    assert averaged["model"]["w"].tolist() == [3.0, 3.0]
    assert averaged["model"]["n"].tolist() == [7]
    assert averaged["progress"] == {"step": 2}
    toy_checkpoint({"w": torch.zeros(2)}, tmp_path / "x.pt", "model.d_ff=96")
    with pytest.raises(NmtError, match=r"x.pt: model.d_ff is 96, 128 in .*0.pt; cannot average"):
        average_checkpoints([tmp_path / "0.pt", tmp_path / "x.pt"])
    toy_checkpoint({"v": torch.zeros(2)}, tmp_path / "y.pt")
    with pytest.raises(NmtError, match=r"y.pt: its weights are not named as those of .*0.pt"):
        average_checkpoints([tmp_path / "0.pt", tmp_path / "y.pt"])
    # what may differ: the settings that are not the model's shape (a parent and its fine-tuned
    # child, trained with other dropout), and progress, which an imported model has none of
    toy_checkpoint({"w": torch.tensor([3.0, 0.0]), "n": torch.tensor([7])}, tmp_path / "z.pt", "model.dropout=0.3")
    averaged = average_checkpoints([tmp_path / "0.pt", tmp_path / "z.pt"])
    assert averaged["model"]["w"].tolist() == [2.0, 1.0] and averaged["progress"] == {"step": 0}
    assert "progress" not in average_checkpoints([tmp_path / "z.pt", tmp_path / "z.pt"])


def test_averaging_takes_each_file_once_and_a_runs_folder_for_its_checkpoints(tmp_path):
    """best.pt with --last 2, where best.pt is (a link to) one of those two: averaged once, not
    weighted twice; --dir may name the run's folder."""
    from nmt.checkpoint import average_into, link_checkpoint, run_checkpoints

    folder = run_checkpoints(tmp_path / "run")
    folder.mkdir(parents=True)
    for step, values in ((1, [1.0, 2.0]), (2, [3.0, 6.0]), (3, [5.0, 1.0])):
        toy_checkpoint({"w": torch.tensor(values)}, folder / f"step_{step:07d}.pt", progress={"step": step})
    link_checkpoint(folder / "step_0000003.pt", folder / "best.pt")
    averaged = average_into(tmp_path / "avg.pt", [folder / "best.pt"], last=2, folder=tmp_path / "run")
    assert averaged == [folder / "best.pt", folder / "step_0000002.pt"]
    assert load_checkpoint(tmp_path / "avg.pt")["model"]["w"].tolist() == [4.0, 3.5]
    # the run's last.pt and best.pt are nmt train's: never replaced, whether or not (a hard link
    # to) one of the checkpoints averaged
    link_checkpoint(folder / "step_0000003.pt", folder / "last.pt")
    with pytest.raises(NmtError, match=r"last.pt: would overwrite one of the checkpoints being averaged"):
        average_into(folder / "last.pt", [], last=2, folder=folder)
    for kept in ("last.pt", "best.pt"):
        with pytest.raises(NmtError, match=rf"{kept}: nmt train keeps this file .*; write the average under another name"):
            average_into(folder / kept, [folder / "step_0000001.pt"])
    assert [load_checkpoint(folder / name)["model"]["w"].tolist() for name in ("last.pt", "best.pt")] == [[5.0, 1.0]] * 2
    average_into(tmp_path / "last.pt", [folder / "step_0000001.pt"])  # outside a run's checkpoints: a name like any


def test_checkpoints_whose_tokens_are_other_pieces_do_not_average(tmp_path):
    """Two runs of one shape whose tokenizers were trained differently: the same ids are other
    pieces, so their mean would be no model of either vocabulary."""
    from nmt.data.tokenizer import train_tokenizer
    from tests.conftest import tiny_recipe

    paths = []
    for name, model_type in (("bpe", "bpe"), ("unigram", "unigram")):
        recipe = tiny_recipe(tmp_path / name, f"tokenizer.model_type={model_type}")
        train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
        proto = torch.frombuffer(bytearray((recipe.out / "spm.model").read_bytes()), dtype=torch.uint8)
        save_checkpoint({"model": {"w": torch.zeros(2)}, "recipe": recipe_to_dict(recipe),
                         "tokenizer": {"src": proto, "tgt": proto}}, tmp_path / f"{name}.pt")
        paths.append(tmp_path / f"{name}.pt")
    with pytest.raises(NmtError, match=r"unigram.pt: its src tokenizer's pieces are not those of .*bpe.pt; cannot average"):
        average_checkpoints(paths)
    assert average_checkpoints([paths[1], paths[1]])["model"]["w"].tolist() == [0.0, 0.0]


def test_average_keeps_tied_weights_tied(tmp_path):
    """Tied embeddings are one tensor under several names; the average must stay one tensor
    (else the saved file holds it twice and the parameter count doubles it)."""
    for i in range(2):
        shared = torch.full((3, 2), float(i))
        toy_checkpoint({"embed": shared, "output": shared, "other": torch.full((2,), 2.0 * i)}, tmp_path / f"{i}.pt",
                       progress={"step": i})
    averaged = average_checkpoints([tmp_path / "0.pt", tmp_path / "1.pt"])
    assert averaged["model"]["embed"] is averaged["model"]["output"]
    assert averaged["model"]["embed"].tolist() == [[0.5, 0.5]] * 3
    assert averaged["model"]["other"].tolist() == [1.0, 1.0]
    save_checkpoint(averaged, tmp_path / "avg.pt")
    reloaded = load_checkpoint(tmp_path / "avg.pt")["model"]
    assert reloaded["embed"].data_ptr() == reloaded["output"].data_ptr()
    assert count_parameters(reloaded) == 3 * 2 + 2


def test_a_read_checkpoint_owns_its_tensors_and_reads_the_optimizer_only_when_asked(tmp_path):
    """Checkpoints are mapped, not read, so that readers of the weights never read the optimizer's
    state; what a reader gets is copied out of the mapping, ties and views kept, so that the file
    can be overwritten in place afterwards without changing anything it holds."""
    path = tmp_path / "c.pt"
    shared = torch.arange(6.0).reshape(3, 2)
    moments = torch.full((3,), 0.5)
    save_checkpoint({"model": {"embed": shared, "output": shared, "row": shared[1]}, "recipe": {"model": {}},
                     "optimizer": {"state": {0: {"exp_avg": moments}}, "param_groups": []}}, path)
    everything, weights_only = load_checkpoint(path), load_checkpoint(path, optimizer=False)
    assert "optimizer" not in weights_only
    glance = load_checkpoint(path, optimizer=False, mapped=True)  # nmt info's: read where touched
    assert "optimizer" not in glance and count_parameters(glance["model"]) == count_parameters(weights_only["model"])
    assert torch.equal(glance["model"]["row"], shared[1])
    for payload in (everything, weights_only):
        model = payload["model"]
        assert model["embed"].data_ptr() == model["output"].data_ptr()
        assert model["row"].untyped_storage().data_ptr() == model["embed"].untyped_storage().data_ptr()
    with open(path, "r+b") as f:  # overwritten in place, not replaced: a mapping would now read zeros
        f.write(b"\0" * path.stat().st_size)
    for payload in (everything, weights_only):
        assert torch.equal(payload["model"]["embed"], shared) and torch.equal(payload["model"]["row"], shared[1])
    assert torch.equal(everything["optimizer"]["state"][0]["exp_avg"], moments)


def test_a_checkpoint_from_before_new_keys_keeps_its_meaning(trained_tiny, tmp_path):
    payload = load_checkpoint(trained_tiny.out / "checkpoints" / "best.pt")
    assert payload["recipe"]["decode"]["length_penalty_form"] == "power"
    del payload["recipe"]["decode"]["length_penalty_form"]
    payload["recipe"]["model"].pop("activation")
    save_checkpoint(payload, tmp_path / "old.pt")
    recipe = load_engine([tmp_path / "old.pt"]).recipe
    assert recipe.decode.length_penalty_form == "gnmt" and recipe.model.activation == "relu"


def test_tiny_recipe_learns_and_then_copies_its_training_sentences(trained_tiny):
    log = read_metrics(trained_tiny.out / "metrics.jsonl")
    losses = [r["loss"] for r in log if r["kind"] == "train"]
    assert losses[-1] < 0.2 * losses[0], losses
    translator = load_engine([trained_tiny.out / "checkpoints" / "best.pt"])
    sources = (TINY_DATA / "train.en").read_text().splitlines()[:6]
    references = (TINY_DATA / "train.de").read_text().splitlines()[:6]
    hyps = translate_lines(translator, sources, trained_tiny.decode)
    assert [output_text(translator.tgt_tokenizer, h[0].tokens) for h in hyps] == references
    valid = [r for r in log if r["kind"] == "valid"]
    assert valid[-1]["bleu"] == pytest.approx(100.0)


def test_tensorboard_events_mirror_the_json_lines(trained_tiny):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    log = read_metrics(trained_tiny.out / "metrics.jsonl")
    board = EventAccumulator(str(trained_tiny.out / "tensorboard"))
    board.Reload()
    for kind, name in [("train", "loss"), ("valid", "bleu")]:
        expected = [(r["step"], r[name]) for r in log if r["kind"] == kind]
        events = [(e.step, e.value) for e in board.Scalars(f"{kind}/{name}")]
        assert [step for step, _ in events] == [step for step, _ in expected] and expected
        assert [v for _, v in events] == pytest.approx([v for _, v in expected], rel=1e-5, abs=1e-6)  # JSON keeps 6 decimals


@pytest.mark.parametrize("augment", [(), ("data.augment.uppercase=0.2", "data.augment.typos=0.3",
                                          "data.augment.tags=0.2", "data.augment.verbatim=0.2"),
                                     ("train.pack_width=48",),  # packed epochs: a random order of the seed
                                     ("train.ema_decay=0.9",)])  # the weights' average, and the weights apart
def test_resumed_training_equals_uninterrupted_training(tmp_path, augment):
    settings = ("model.dropout=0.1", "model.attention_dropout=0.1", "train.max_tokens=128", "train.update_freq=2",
                "train.valid_every=1000", "train.valid_bleu_sentences=0", "train.log_every=1000", *augment)
    straight = prepared_tiny(tmp_path / "straight", "train.max_steps=14", *settings)
    train(straight, show_progress=False)
    stopped = prepared_tiny(tmp_path / "stopped", "train.max_steps=5", *settings)
    train(stopped, show_progress=False)
    resumed = prepared_tiny(tmp_path / "stopped", "train.max_steps=14", *settings)
    torch.manual_seed(resumed.train.seed)
    seeded = torch.get_rng_state()
    Trainer(resumed)
    assert torch.equal(torch.get_rng_state(), seeded)  # no random weight drawn: each comes from the checkpoint
    assert train(resumed, show_progress=False).step == 14
    a = load_checkpoint(straight.out / "checkpoints" / "last.pt")
    b = load_checkpoint(resumed.out / "checkpoints" / "last.pt")
    wall_time = ("elapsed_seconds",)
    assert {k: v for k, v in a["progress"].items() if k not in wall_time} == \
        {k: v for k, v in b["progress"].items() if k not in wall_time}
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), name  # bitwise
    assert a["optimizer"]["state"][0]["exp_avg_sq"].equal(b["optimizer"]["state"][0]["exp_avg_sq"])
    assert (TRAINING_WEIGHTS in a) == (TRAINING_WEIGHTS in b) == ("train.ema_decay=0.9" in augment)
    for name, tensor in a.get(TRAINING_WEIGHTS, {}).items():
        assert torch.equal(tensor, b[TRAINING_WEIGHTS][name]), name


def test_a_resumed_run_names_the_recipe_keys_changed_since_its_checkpoint():
    """Resuming with `--set train.lr=...` or other data takes effect silently unless said: the note
    names each changed key with both values (nested keys dotted), leaves the run's folder out, and
    stops after `shown` keys."""
    from nmt.train.checkpointing import changed_settings

    saved = {"output_dir": "runs/a", "train": {"lr": 0.001, "max_steps": 100, "mbr": {"n": 1}}, "data": {"train": "x"}}
    wanted = {"output_dir": "runs/b", "train": {"lr": 0.002, "max_steps": 100, "mbr": {"n": 2}}, "data": {"train": "y"}}
    assert changed_settings(saved, saved) == ""
    assert changed_settings(saved, wanted) == "data.train x -> y, train.lr 0.001 -> 0.002, train.mbr.n 1 -> 2"
    assert changed_settings(saved, wanted, shown=1) == "data.train x -> y, and 2 more"


def test_time_budget_stops_training_and_counts_across_resumes(tmp_path):
    settings = ("train.max_steps=100000", "train.valid_every=100000", "train.valid_bleu_sentences=0")
    recipe = prepared_tiny(tmp_path, "train.max_minutes=0.005", *settings)  # 0.3 s
    result = train(recipe, show_progress=False)
    assert result.stopped_because == "max_minutes" and 0 < result.step < 100000
    saved = load_checkpoint(recipe.out / "checkpoints" / "last.pt")
    assert saved["progress"]["elapsed_seconds"] >= 0.3 and saved["progress"]["step"] == result.step
    assert (recipe.out / "checkpoints" / "best.pt").is_file()  # the last model was validated
    again = train(recipe, show_progress=False)  # the budget is spent: nothing more to do
    assert (again.stopped_because, again.step) == ("max_minutes", result.step)
    longer = prepared_tiny(tmp_path, "train.max_minutes=0.01", *settings)
    assert train(longer, show_progress=False).step > result.step


def test_the_progress_bar_is_that_of_the_budget_that_ends_training_first(tmp_path):
    """A run of 100,000 steps or 12 minutes shows its minutes: a bar and a time left counted in
    steps would say hours for a run that ends in minutes."""
    import io

    from rich.console import Console

    from nmt.train.checkpointing import TrainingState
    from nmt.train.stopping import budget_fractions, budget_text

    cfg = TrainConfig(max_steps=100_000, max_minutes=12, max_epochs=10)
    state = TrainingState(step=4524, epoch=2, batch_in_epoch=50, elapsed_seconds=552.0)
    used = budget_fractions(cfg, state, state.step, batches_this_epoch=200)
    assert used == pytest.approx({"steps": 0.04524, "minutes": 552 / 720, "epochs": 0.225})
    assert budget_text(cfg, state, used) == "4,524 steps of 12 min"
    assert budget_text(cfg, state, used | {"epochs": 0.9}) == "4,524 steps, epoch 3/10"
    assert budget_text(TrainConfig(max_steps=6000), state, {"steps": 0.754}) == "4,524/6,000 steps"

    def shown(*settings: str) -> str:
        screen = io.StringIO()
        train(prepared_tiny(tmp_path / str(len(settings)), "train.valid_bleu_sentences=4", *settings),
              Console(file=screen, force_terminal=True, width=160), show_progress=True)
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())

    # stopped by time, validated only then (after the loop); the bar of the minutes, filled
    timed = shown("train.max_steps=100000", "train.max_minutes=0.005", "train.valid_every=100000")  # 0.3 s
    last_frame = timed[timed.rindex("training"):].splitlines()[0]
    assert re.search(r"training [\d,]+ steps of 0\.005 min ━+ 0:00:00 0:00:00", last_frame), last_frame
    # while validating, which can take a while with the bar standing still, it says so: at the end,
    # and between updates
    validating = "validating: loss on 8 dev pairs, bleu of 4 translations"
    assert validating in timed and validating in shown("train.max_steps=2", "train.valid_every=1")


def test_an_epoch_budget_validates_the_final_model_once_and_saves_the_epoch(tmp_path):
    """The stop rule: the last update was validated (valid_every=1), so the epoch's end that stops
    the run saves the finished epoch without a second validation (which would count as one
    without improvement)."""
    settings = ("train.max_steps=100000", "train.valid_every=1", "train.valid_bleu_sentences=0")
    recipe = prepared_tiny(tmp_path, "train.max_epochs=1", *settings)
    result = train(recipe, show_progress=False)
    assert result.stopped_because == "max_epochs"
    valid = [m for m in read_metrics(recipe.out / "metrics.jsonl") if m["kind"] == "valid"]
    assert [m["step"] for m in valid] == list(range(1, result.step + 1))
    saved = load_checkpoint(recipe.out / "checkpoints" / "last.pt")["progress"]
    assert (saved["step"], saved["epoch"], saved["batch_in_epoch"]) == (result.step, 1, 0)
    assert train(recipe, show_progress=False).step == result.step  # nothing more to do


def test_finished_run_does_nothing_and_a_changed_model_is_refused(trained_tiny, tmp_path):
    last = trained_tiny.out / "checkpoints" / "last.pt"
    before = last.stat().st_mtime_ns
    assert train(trained_tiny, show_progress=False).stopped_because == "max_steps"
    assert last.stat().st_mtime_ns == before
    changed = trained_tiny.model_copy(update={"model": trained_tiny.model.model_copy(update={"d_model": 32})})
    with pytest.raises(NmtError, match=r"last.pt: recipe's model differs from the checkpoint's \(d_model: 64 -> 32\)"):
        Trainer(changed).resume()
    assert last.stat().st_mtime_ns == before


def test_a_checkpoint_written_before_newer_model_keys_existed_resumes(tmp_path):
    """A model key added after the checkpoint was saved reads as its default, the meaning it had then."""
    recipe = prepared_tiny(tmp_path, "train.max_steps=3", "train.valid_every=100", "train.valid_bleu_sentences=0")
    train(recipe, show_progress=False)
    last = recipe.out / "checkpoints" / "last.pt"
    payload = load_checkpoint(last)
    for key in ("positions", "decoder_start", "residual_free_encoder_layer"):
        del payload["recipe"]["model"][key]
    torch.save(payload, last)
    longer = recipe.model_copy(update={"train": recipe.train.model_copy(update={"max_steps": 5})})
    assert train(longer, show_progress=False).step == 5


def test_a_runs_tokenizer_is_not_replaced_under_its_checkpoints(trained_tiny, tmp_path):
    """`nmt tokenizer` with changed settings refuses a folder with checkpoints (they could not
    resume); a tokenizer replaced by hand is refused on resuming, before any weights load."""
    import shutil

    from nmt.data.tokenizer import train_tokenizer

    run = trained_tiny.model_copy(update={"output_dir": str(tmp_path / "run")})
    shutil.copytree(trained_tiny.out, run.out, ignore=shutil.ignore_patterns("step_*.pt", "best.pt"))
    before = (run.out / "spm.model").read_bytes()
    smaller = run.tokenizer.model_copy(update={"vocab_size": 150})
    with pytest.raises(NmtError, match=r"checkpoints were trained with the tokenizer there; a new one "
                                       r"\(tokenizer.vocab_size 160 -> 150\) needs another output_dir"):
        train_tokenizer(run.data, smaller, run.out)
    assert (run.out / "spm.model").read_bytes() == before
    assert train_tokenizer(run.data, run.tokenizer, run.out)["skipped"]  # the same settings: nothing to do
    train_tokenizer(run.data, smaller, tmp_path / "other")
    shutil.copy(tmp_path / "other" / "spm.model", run.out / "spm.model")
    with pytest.raises(NmtError, match=r"last.pt: trained with another tokenizer than the one now in"):
        Trainer(run).resume()


def test_missing_prepared_data_is_a_clear_error(tmp_path, monkeypatch):
    from tests.conftest import tiny_recipe
    from nmt.data.prepare import prepare
    from nmt.data.shards import ShardWriter
    from nmt.data.tokenizer import train_tokenizer

    recipe = tiny_recipe(tmp_path)
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    with pytest.raises(NmtError, match="no prepared data"):
        Trainer(recipe)
    for side in ("en", "de"):
        (tmp_path / f"empty.{side}").write_text("")
    broken = recipe.model_copy(update={"data": recipe.data.model_copy(update={"valid": str(tmp_path / "empty")})})
    with pytest.raises(NmtError, match="empty.en: empty file"):  # the evaluation splits are read first
        prepare(broken.data, broken.tokenizer, broken.out)
    assert not (recipe.out / "data" / "train.src.idx").exists()
    written = ShardWriter.add

    def refused_for_valid(self, ids):
        if self.path_stem.name.startswith("valid"):
            raise NmtError(f"{self.path_stem}: cannot write there (No space left on device)")
        return written(self, ids)

    monkeypatch.setattr(ShardWriter, "add", refused_for_valid)
    with pytest.raises(NmtError, match="No space left"):
        prepare(recipe.data, recipe.tokenizer, recipe.out)  # the training split is written, then the dev split fails
    assert (recipe.out / "data" / "train.src.idx").is_file()
    with pytest.raises(NmtError, match=r"^.*data: `nmt prepare` did not finish \(run it again\)$"):
        Trainer(recipe)


def test_a_damaged_last_checkpoint_falls_back_to_the_newest_intact_one(tmp_path):
    from nmt.checkpoint import step_checkpoints

    settings = ("train.max_tokens=128", "train.valid_every=2", "train.valid_bleu_sentences=0", "train.log_every=1000")
    straight = prepared_tiny(tmp_path / "straight", "train.max_steps=6", *settings)
    train(straight, show_progress=False)
    crashed = prepared_tiny(tmp_path / "crashed", "train.max_steps=4", *settings)
    train(crashed, show_progress=False)
    ckpts = crashed.out / "checkpoints"
    assert [p.name for p in step_checkpoints(ckpts)] == ["step_0000002.pt", "step_0000004.pt"]
    # last.pt is a hard link to step_0000004.pt: cutting it short damages both.
    last = ckpts / "last.pt"
    last.write_bytes(last.read_bytes()[:1000])
    messages = []
    trainer = Trainer(prepared_tiny(tmp_path / "crashed", "train.max_steps=6", *settings))
    trainer.log = messages.append
    assert trainer.run(show_progress=False).step == 6
    warning = next(m for m in messages if "warning" in m)
    assert "resuming from" in warning and "step_0000002.pt" in warning and "last.pt" in warning
    a, b = load_checkpoint(straight.out / "checkpoints" / "last.pt"), load_checkpoint(last)
    for name, tensor in a["model"].items():  # resumed from step 2, it still ends where the straight run did
        assert torch.equal(tensor, b["model"][name]), name


def test_no_readable_checkpoint_to_resume_from_is_a_clear_error(tmp_path):
    recipe = prepared_tiny(tmp_path, "train.max_steps=2", "train.valid_every=2", "train.valid_bleu_sentences=0")
    train(recipe, show_progress=False)
    for path in (recipe.out / "checkpoints").glob("*.pt"):
        path.write_bytes(b"not a checkpoint")
    with pytest.raises(NmtError, match="no checkpoint can be read to resume from"):
        Trainer(recipe).resume()


def test_weights_alone_where_training_resumes_are_a_clear_error_and_kept(tmp_path):
    """An averaged checkpoint put in place of last.pt (`nmt average -o` into the run, or a copy)
    has weights but no optimizer state: a one-line error saying what to do, the file as it was."""
    from nmt.checkpoint import average_into

    recipe = prepared_tiny(tmp_path, "train.max_steps=2", "train.valid_every=2", "train.valid_bleu_sentences=0")
    train(recipe, show_progress=False)
    last = recipe.out / "checkpoints" / "last.pt"
    average_into(tmp_path / "averaged.pt", [last])
    last.unlink()
    (tmp_path / "averaged.pt").rename(last)
    before = last.read_bytes()
    with pytest.raises(NmtError, match=r"last.pt: no training state to resume from \(no optimizer, scheduler, rng: an "
                                       r"averaged, imported or exported checkpoint.*\); move it out of .*checkpoints, and"):
        Trainer(recipe).resume()
    assert last.read_bytes() == before


def test_a_second_training_on_the_same_directory_is_refused(tmp_path):
    """Two `nmt train` on one output directory would interleave their checkpoints: while one holds
    the directory's lock, another stops with a one-line error; once released, training runs."""
    from typer.testing import CliRunner

    from nmt.cli import app
    from nmt.train.run_lock import exclusive_run
    from tests.conftest import TINY, TINY_DATA, one_line_error, prepared_tiny

    recipe = prepared_tiny(tmp_path / "run", "train.max_steps=2", "train.valid_every=2")
    args = ["train", str(TINY), "--set", f"output_dir={recipe.out}", "--set", f"data.train={TINY_DATA / 'train'}",
            "--set", f"data.valid={TINY_DATA / 'valid'}", "--set", f"data.test={TINY_DATA / 'valid'}",
            "--set", "train.max_steps=2", "--set", "train.valid_every=2", "--no-progress"]
    with exclusive_run(recipe.out):
        one_line_error(CliRunner().invoke(app, args), "another `nmt train` is running", str(recipe.out))
    assert not (recipe.out / "checkpoints" / "last.pt").exists()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (recipe.out / "checkpoints" / "last.pt").is_file()


def test_valid_metric_chrf_picks_best_and_an_old_recipe_key_still_reads(tmp_path, capsys):
    """best.pt follows dev chrF (sacrebleu's, of the greedy dev translations) where
    train.valid_metric asks for it; a recipe that says best_metric gets a note and the same meaning."""
    from nmt.checkpoint import best_dev, open_checkpoint
    from nmt.config import load_recipe

    recipe = prepared_tiny(tmp_path, "train.max_steps=60", "train.valid_every=15", "train.valid_metric=chrf")
    train(recipe, show_progress=False)
    valid = [m for m in read_metrics(recipe.out / "metrics.jsonl") if m["kind"] == "valid"]
    assert len(valid) == 4 and all("chrf" in m and "bleu" in m for m in valid)
    best = max(valid, key=lambda m: (m["chrf"], -m["step"]))
    best_pt = open_checkpoint(recipe.out / "checkpoints" / "best.pt")
    dev = best_dev(best_pt.payload, recipe)
    assert (dev["metric"], dev["step"]) == ("chrf", best["step"])
    # metrics.jsonl keeps 6 decimals and best_dev 4: rounding the log's value again could land one 1e-4 off
    assert dev["score"] == pytest.approx(best["chrf"], abs=5e-5 + 1e-6)
    # best.pt holds that step's weights: its greedy dev translations score that chrF
    import sacrebleu

    engine = load_engine([recipe.out / "checkpoints" / "best.pt"])
    cfg = recipe.decode.model_copy(update={"beam_size": 1, "length_penalty": 0.0, "no_repeat_ngram_size": 0,
                                           "split_sentences": False, "normalize_case": False, "copy_verbatim": False})
    sources = (TINY_DATA / "valid.en").read_text().splitlines()
    hyps = [output_text(engine.tgt_tokenizer, h[0].tokens) for h in translate_lines(engine, sources, cfg)]
    references = (TINY_DATA / "valid.de").read_text().splitlines()
    assert sacrebleu.corpus_chrf(hyps, [references]).score == pytest.approx(best["chrf"], abs=1e-6)
    old = load_recipe(recipe.out / "recipe.yaml", ["train.best_metric=loss"])
    assert old.train.valid_metric == "loss" and old.train.selection_metric == "nll"
    with pytest.raises(NmtError, match="valid_comet_model"):
        load_recipe(recipe.out / "recipe.yaml", ["train.valid_metric=comet"])


def test_prepared_sentences_longer_than_the_models_positions_are_a_clear_error(tmp_path):
    """Before, the first batch holding such a sentence stopped training with a traceback."""
    recipe = prepared_tiny(tmp_path, "model.max_positions=12")
    with pytest.raises(NmtError, match=r"more than model.max_positions \(12\) holds; set data.max_tokens_per_sentence to at most 11"):
        Trainer(recipe)


def test_metrics_log_skips_a_record_being_written_and_names_a_bad_line(tmp_path):
    """A run still writing leaves its last record without a newline: read while it trains, the log
    gives the records before it. Any other line that is not a record names its file and line."""
    log = tmp_path / "metrics.jsonl"
    whole = '{"kind": "train", "step": 1, "loss": 2.5}\n\n{"kind": "valid", "step": 1, "nll": 2.0}\n'
    log.write_text(whole + '{"kind": "train", "st')
    assert [r["kind"] for r in read_metrics(log)] == ["train", "valid"]
    log.write_text(whole)
    assert len(read_metrics(log)) == 2
    for bad, problem in (('{"kind": "tr\n', "invalid JSON"), ('[1, 2]\n', '"kind" and "step"'),
                         ('{"kind": "train", "step": "1"}\n', '"kind" and "step"')):
        log.write_text(whole + bad + whole)
        with pytest.raises(NmtError, match=rf"metrics.jsonl:4: not a metrics record \(.*{problem}"):
            read_metrics(log)
    log.write_bytes(b"\xff\n")
    with pytest.raises(NmtError, match="not a metrics log"):
        read_metrics(log)

