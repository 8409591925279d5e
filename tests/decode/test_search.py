import itertools

import contextlib

import pytest
import torch
import torch.nn.functional as F

from nmt.config import ModelConfig
from nmt.special_tokens import BOS, EOS, PAD
from nmt.decode.search import beam_search, greedy_search, max_output_lengths, normalized_score
from nmt.model.matmul_attention import STEP_MATMUL_MIN_KEYS, step_attention
from nmt.model.transformer import Transformer


def toy_model(vocab: int = 40, seed: int = 0, **changes) -> Transformer:
    torch.manual_seed(seed)
    cfg = dict(encoder_layers=2, decoder_layers=2, d_model=32, heads=4, d_ff=64, dropout=0.0, max_positions=64)
    model = Transformer(ModelConfig(**(cfg | changes)), vocab, vocab).eval()
    with torch.no_grad():  # sharper distributions make search decisions meaningful
        model.tgt_embed.tokens.weight.mul_(4)
    return model


def sources() -> torch.Tensor:
    rows = [[5, 9, 12, 7, EOS], [8, 6, EOS], [30, 31, 32, 33, 34, 35, EOS], [11, EOS]]
    out = torch.full((len(rows), 7), PAD)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r)
    return out


def sequence_log_prob(model, src_row: torch.Tensor, tokens: list[int], ended: bool = True, min_len: int = 0) -> float:
    """Full recomputation: teacher-forced log-probability of tokens (+ EOS when `ended`: an output
    cut at its length limit has none), PAD and BOS taken out before the softmax, and EOS too below
    min_len."""
    src = src_row[src_row != PAD].unsqueeze(0)
    logits = model(src, torch.tensor([[BOS] + tokens]))[0].float()
    logits[:, [PAD, BOS]] = float("-inf")
    logits[:min_len, EOS] = float("-inf")
    logp = F.log_softmax(logits, dim=-1)
    return sum(logp[t, tok].item() for t, tok in enumerate(tokens + [EOS] if ended else tokens))


# T5's layout (an imported MADLAD-400's): relative position biases, RMSNorm, gated GELU, no biases,
# heads of their own size, unscaled embeddings.
T5_LAYOUT = dict(norm="pre", positions="relative", relative_buckets=8, relative_max_distance=16, norm_type="rms",
                 gated_ffn=True, activation="gelu_tanh", bias=False, head_dim=12, scale_embeddings=False)
LAYOUTS = {"post": dict(norm="post"), "pre": dict(norm="pre"), "t5": T5_LAYOUT}


@pytest.mark.parametrize("norm", ["post", "pre", "t5"])
def test_incremental_decoding_equals_full_recomputation(norm, monkeypatch):
    import nmt.model.transformer as transformer

    by_matmul = []  # the steps' self-attentions taken by matmuls (nmt.model.matmul_attention.step_attention)
    monkeypatch.setattr(transformer, "step_attention", lambda *a: by_matmul.append(a[1].size(2)) or step_attention(*a))
    model = toy_model(**LAYOUTS[norm])
    src = sources()
    tgt = torch.randint(4, 40, (4, 12))  # past STEP_MATMUL_MIN_KEYS: the CPU's steps then attend by matmuls
    tgt[:, 0] = BOS
    logits = model(src, tgt).float()  # (B, T, V)
    logits[:, :, [PAD, BOS]] = float("-inf")  # never predicted: decode_step takes them out before the softmax
    full = F.log_softmax(logits, dim=-1)
    memory, src_mask = model.encode(src)
    state = model.start_decoding(memory, src_mask)
    for t in range(tgt.size(1)):
        step = model.decode_step(tgt[:, t], state)
        assert torch.allclose(step, full[:, t], atol=1e-4), f"position {t}"
    assert by_matmul == [keys for keys in range(STEP_MATMUL_MIN_KEYS, 13) for _ in model.decoder_layers]


def test_bf16_decoding_on_a_cpu_attends_in_fp32_and_errs_no_more_than_autocast(monkeypatch):
    """decode.precision bf16 on a CPU: the linear layers' products in bf16 (every one here, through
    oneDNN's bf16 packed weights), each step's attention in fp32 over fp32 keys and values, by
    matmuls from STEP_MATMUL_MIN_KEYS keys on as in fp32. The steps' log-probabilities are as far
    from fp32's teacher-forced ones as plain bf16 autocast's teacher-forced ones are, or less."""
    import copy

    from nmt.model import onednn_linear, transformer

    monkeypatch.setattr(onednn_linear, "worth_bf16_product", lambda rows, weight_elements: True)
    by_matmul = []
    monkeypatch.setattr(transformer, "step_attention", lambda *a: by_matmul.append(a[0].dtype) or step_attention(*a))
    model = toy_model()
    plain = copy.deepcopy(model)
    model.pack_for_cpu_inference()
    src = sources()
    tgt = torch.randint(4, 40, (4, 12))
    tgt[:, 0] = BOS
    scored = [token for token in range(40) if token not in (PAD, BOS)]  # (decode_step takes PAD and BOS out)
    with torch.inference_mode():
        fp32 = F.log_softmax(model(src, tgt)[..., scored], dim=-1)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            autocast = F.log_softmax(plain(src, tgt).float()[..., scored], dim=-1)
            memory, src_mask = model.encode(src)
            state = model.start_decoding(memory, src_mask)
            steps = torch.stack([model.decode_step(tgt[:, t], state) for t in range(tgt.size(1))], dim=1)[..., scored]
    assert all(k.dtype == v.dtype == torch.float32 for k, v in state.memory_kv)
    assert all(cache.keys.dtype == cache.values.dtype == torch.float32 for cache in state.self_cache)
    assert by_matmul == [torch.float32] * (len(model.decoder_layers) * (tgt.size(1) - STEP_MATMUL_MIN_KEYS + 1))
    assert model.packed_output._bf16 is not None  # the output layer's products in bf16 too
    ours, autocasts = (steps - fp32).abs(), (autocast - fp32).abs()
    assert ours.max() > 1e-2  # bf16 products, not fp32's
    assert ours.max() <= 1.25 * autocasts.max() and ours.mean() <= 1.1 * autocasts.mean(), (ours.max(), autocasts.max())


@pytest.mark.parametrize("norm", ["post", "pre", "t5"])
@pytest.mark.parametrize("mode", [torch.inference_mode, torch.enable_grad])  # the searches' mode, and autograd's
def test_incremental_decoding_through_reordered_rows_equals_full_recomputation(norm, mode):
    """Rows reordered, repeated and dropped between steps, as beam search and finished sentences
    do it, and twice before one step (the cache gathers its rows only when the next step comes):
    each step still scores its own row's history, as teacher forcing does."""
    with mode():
        decode_through_reordered_rows(toy_model(**LAYOUTS[norm]))


def decode_through_reordered_rows(model: Transformer) -> None:
    src = sources()
    tgt = torch.randint(4, 40, (4, 12))
    tgt[:, 0] = BOS
    memory, src_mask = model.encode(src)
    state = model.start_decoding(memory, src_mask)
    origin = torch.arange(4)  # the row of src and tgt each current row continues
    selections = {2: [[3, 0, 0, 1]], 4: [[1, 2, 3], [2, 0]], 5: [[1, 1, 0]], 9: [[1, 0, 0]]}
    for t in range(tgt.size(1)):
        for rows in map(torch.tensor, selections.get(t, [])):
            state, origin = state.select(rows), origin[rows]
        step = model.decode_step(tgt[origin, t], state)
        logits = model(src[origin], tgt[origin, : t + 1])[:, t].float()
        logits[:, [PAD, BOS]] = float("-inf")
        assert torch.allclose(step, F.log_softmax(logits, dim=-1), atol=1e-4), f"position {t}"


def test_beam_size_one_equals_greedy():
    model = toy_model()
    greedy = greedy_search(model, sources(), max_len_a=1.0, max_len_b=6, length_penalty=0.6)
    beam = beam_search(model, sources(), beam_size=1, length_penalty=0.6, max_len_a=1.0, max_len_b=6)
    assert [g.tokens for g in greedy] == [b[0].tokens for b in beam]
    for g, b in zip(greedy, beam):
        assert g.log_prob == pytest.approx(b[0].log_prob, abs=1e-4)
        assert g.score == pytest.approx(b[0].score, abs=1e-4)


@pytest.mark.parametrize("alpha, form", [(0.0, "power"), (0.6, "power"), (1.0, "power"), (1.0, "gnmt")])
def test_large_beam_finds_the_exhaustive_best(alpha, form):
    vocab, limit = 7, 3  # real tokens 1 (UNK), 4, 5, 6 and EOS; outputs of at most 3 tokens
    model = toy_model(vocab=vocab, seed=1)
    src = torch.tensor([[4, 5, 6, EOS]])
    choices = [1, 4, 5, 6]
    candidates = [list(seq) for n in range(limit + 1) for seq in itertools.product(choices, repeat=n)]
    scored = [(normalized_score(sequence_log_prob(model, src[0], c, ended=len(c) < limit), len(c) + (len(c) < limit), alpha, form), c)
              for c in candidates]
    best_score, best = max(scored)
    found = beam_search(model, src, beam_size=len(candidates), length_penalty=alpha,
                        max_len_a=0.0, max_len_b=limit, length_penalty_form=form)[0][0]
    assert found.tokens == best
    assert found.score == pytest.approx(best_score, abs=1e-4)


def test_length_penalties_by_hand():
    assert normalized_score(-6.0, 4, 0.5) == pytest.approx(-3.0)  # / 4^0.5
    assert normalized_score(-6.0, 7, 1.0, "gnmt") == pytest.approx(-3.0)  # / ((5 + 7) / 6)^1
    assert normalized_score(-6.0, 4, 0.0) == -6.0


def test_beam_scores_are_the_models_sequence_probabilities():
    model = toy_model()
    src = sources()
    limits = max_output_lengths(src, model, 0.5, 2).tolist()  # short: some outputs are cut at their limit
    cut = 0
    for form in ("power", "gnmt"):
        for i, hyps in enumerate(beam_search(model, src, beam_size=4, length_penalty=0.6, nbest=4, max_len_a=0.5,
                                             max_len_b=2, min_len=1, length_penalty_form=form)):
            assert len(hyps) == 4 and [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
            for h in hyps:
                ended = len(h.tokens) < limits[i]
                cut += not ended
                assert h.log_prob == pytest.approx(sequence_log_prob(model, src[i], h.tokens, ended, min_len=1), abs=1e-3)
                assert h.score == pytest.approx(normalized_score(h.log_prob, len(h.tokens) + ended, 0.6, form), abs=1e-6)
    assert cut > 0


def test_batched_search_equals_one_sentence_at_a_time():
    model = toy_model()
    src = sources()
    batched = beam_search(model, src, beam_size=4, nbest=2)
    greedy = greedy_search(model, src)
    for i in range(src.size(0)):
        alone = src[i : i + 1, : int((src[i] != PAD).sum())]
        single = beam_search(model, alone, beam_size=4, nbest=2)[0]
        assert [h.tokens for h in single] == [h.tokens for h in batched[i]]
        assert [h.score for h in single] == pytest.approx([h.score for h in batched[i]], abs=1e-4)
        assert greedy_search(model, alone)[0].tokens == greedy[i].tokens


def test_output_length_limit_is_respected():
    model = toy_model()
    for hyps in beam_search(model, sources(), beam_size=3, max_len_a=0.0, max_len_b=2, nbest=3):
        assert all(len(h.tokens) <= 2 for h in hyps)
    assert all(len(h.tokens) <= 2 for h in greedy_search(model, sources(), max_len_a=0.0, max_len_b=2))


def test_min_length_forces_exact_lengths_when_it_equals_the_limit():
    model = toy_model()
    for hyps in beam_search(model, sources(), beam_size=3, max_len_a=0.0, max_len_b=5, min_len=5, nbest=2):
        assert [len(h.tokens) for h in hyps] == [5, 5]
    assert all(len(h.tokens) == 5 for h in greedy_search(model, sources(), max_len_a=0.0, max_len_b=5, min_len=5))


def test_sampling_follows_top_k_top_p_and_is_reproducible():
    model = toy_model()
    src = sources()
    gen = lambda: torch.Generator().manual_seed(5)  # noqa: E731
    one = greedy_search(model, src, sample=dict(temperature=1.0, top_k=0, top_p=1.0, generator=gen()))
    two = greedy_search(model, src, sample=dict(temperature=1.0, top_k=0, top_p=1.0, generator=gen()))
    assert [h.tokens for h in one] == [h.tokens for h in two]
    top1 = greedy_search(model, src, sample=dict(temperature=1.0, top_k=1, top_p=1.0, generator=gen()))
    assert [h.tokens for h in top1] == [h.tokens for h in greedy_search(model, src)]
    nucleus = greedy_search(model, src, sample=dict(temperature=1.0, top_k=0, top_p=1e-6, generator=gen()))
    assert [h.tokens for h in nucleus] == [h.tokens for h in greedy_search(model, src)]
    limits = max_output_lengths(src, model, 1.5, 10).tolist()
    for i, h in enumerate(one):
        ended = len(h.tokens) < limits[i]
        assert h.log_prob == pytest.approx(sequence_log_prob(model, src[i], h.tokens, ended), abs=1e-3)


def test_forbid_repeated_ngrams_by_hand():
    from nmt.decode.search import forbid_repeated_ngrams

    history = torch.tensor([[5, 6, 7, 5, 6], [8, 9, 8, 9, 8]])
    expected = {3: [{7}, {9}], 2: [{7}, {9}], 1: [{5, 6, 7}, {8, 9}], 6: [set(), set()]}
    for n, banned in expected.items():
        log_probs = torch.zeros(2, 12)
        forbid_repeated_ngrams(log_probs, history, n)
        assert [set((row == float("-inf")).nonzero().flatten().tolist()) for row in log_probs] == banned, n


def constrained_greedy_by_recomputation(model, src_row, n: int, limit: int) -> list[int]:
    """Greedy search spelled out: full recomputation at every step, n-grams kept in a Python set."""
    src = src_row[src_row != PAD].unsqueeze(0)
    tokens: list[int] = []
    while True:
        logp = F.log_softmax(model(src, torch.tensor([[BOS] + tokens]))[0, -1].float(), dim=-1)
        logp[PAD] = logp[BOS] = float("-inf")
        seen = {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}
        for w in range(logp.numel()):
            if len(tokens) >= n - 1 and tuple(tokens[len(tokens) - n + 1:] + [w]) in seen:
                logp[w] = float("-inf")
        if len(tokens) >= limit:
            return tokens
        best = int(logp.argmax())
        if best == EOS:
            return tokens
        tokens.append(best)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_no_repeat_ngram_size_in_greedy_and_beam_search(n):
    model = toy_model(vocab=12, seed=3)  # a small vocabulary repeats itself without the constraint
    src = torch.tensor([[5, 9, 10, 7, EOS], [8, 6, EOS, PAD, PAD], [11, 4, 5, 6, EOS], [10, EOS, PAD, PAD, PAD]])
    limits = (src != PAD).sum(1) * 2 + 2
    greedy = greedy_search(model, src, max_len_a=2.0, max_len_b=2, no_repeat_ngram_size=n)
    for row, hyp, limit in zip(src, greedy, limits.tolist()):
        assert hyp.tokens == constrained_greedy_by_recomputation(model, row, n, limit)
    plain = greedy_search(model, src, max_len_a=2.0, max_len_b=2)
    assert any(h.tokens != p.tokens for h, p in zip(greedy, plain))  # the constraint changed something
    beams = beam_search(model, src, beam_size=4, max_len_a=2.0, max_len_b=2, nbest=4, no_repeat_ngram_size=n)
    for hyps in beams:
        for hyp in hyps:
            grams = [tuple(hyp.tokens[i:i + n]) for i in range(len(hyp.tokens) - n + 1)]
            assert len(grams) == len(set(grams)), hyp.tokens


@pytest.mark.parametrize("no_repeat", [0, 3])
def test_beam_search_reads_the_device_once_per_step(no_repeat):
    """On a GPU each read of a device value makes the host wait: the search reads the length
    limits once, then one packed tensor per step (counted here on the CPU, as a GPU would have them)."""
    from tests.host_syncs import HostSyncCounter

    model, steps = toy_model(), 7
    with HostSyncCounter() as syncs:  # every output exactly `steps` tokens: the search runs `steps` steps
        beam_search(model, sources(), 4, 0.6, 0.0, steps, min_len=steps, no_repeat_ngram_size=no_repeat)
    assert syncs.ops == ["tolist"] * (1 + steps)


def test_decode_precision_bf16_autocast_runs_on_the_cpu_and_auto_is_fp32_there(trained_tiny, monkeypatch):
    from nmt.decode.engines import torch_engine
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.translate import translate_lines

    asked = []
    monkeypatch.setattr(torch_engine, "autocast", lambda device, precision: asked.append((device.type, precision))
                        or contextlib.nullcontext())
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {"avx512_bf16": True})
    with torch_engine.decode_autocast(torch.device("cpu"), "auto"):
        assert torch.backends.cuda.cudnn_sdp_enabled()  # a CPU changes nothing, and keeps fp32 even with bf16 arithmetic
    for native_bf16 in (True, False):  # an Ampere or later GPU, and an older one
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: native_bf16)
        with torch_engine.decode_autocast(torch.device("cuda"), "auto"):
            assert not torch.backends.cuda.cudnn_sdp_enabled()  # new lengths every step (attention_kernels)
    assert asked == [("cuda", "bf16")] and torch.backends.cuda.cudnn_sdp_enabled()
    monkeypatch.undo()
    translator = load_engine([trained_tiny.out / "checkpoints" / "last.pt"])
    lines = (trained_tiny.data.train + ".en").strip()
    source = [line.strip() for line in open(lines, encoding="utf-8")][:8]
    fp32 = translate_lines(translator, source, trained_tiny.decode)
    bf16 = translate_lines(translator, source, trained_tiny.decode.model_copy(update={"precision": "bf16"}))
    assert len(bf16) == len(source)
    same = sum(a[0].tokens == b[0].tokens for a, b in zip(fp32, bf16))
    assert same >= 6, same  # bf16 rounding may change a close call, not the model's translations
    assert any(abs(a[0].log_prob - b[0].log_prob) > 1e-6 for a, b in zip(fp32, bf16))  # autocast did run


@pytest.mark.parametrize("beam_size", [1, 4])
def test_a_prefix_is_forced_and_its_probability_not_counted(beam_size):
    model = toy_model()
    src = sources()
    prefixes = [[7, 8], [], [30], [12, 12, 12]]
    def search(prefixes):
        if beam_size == 1:
            return greedy_search(model, src, prefixes=prefixes)
        return [h[0] for h in beam_search(model, src, beam_size=beam_size, length_penalty=0.0, prefixes=prefixes)]

    hyps = search(prefixes)
    limits = max_output_lengths(src, model, 1.5, 10).tolist()
    for i, (h, prefix) in enumerate(zip(hyps, prefixes)):
        assert h.tokens[: len(prefix)] == prefix and len(h.tokens) > len(prefix)
        ended = len(h.tokens) < limits[i]
        given = sequence_log_prob(model, src[i], prefix, ended=False)
        assert h.log_prob == pytest.approx(sequence_log_prob(model, src[i], h.tokens, ended) - given, abs=1e-3)
    assert hyps[1].tokens == search(None)[1].tokens  # no prefix: the same search
    if beam_size == 1:  # greedy with a prefix is beam search of one beam with it
        beam = beam_search(model, src, beam_size=1, length_penalty=0.0, prefixes=prefixes)
        assert [h.tokens for h in hyps] == [b[0].tokens for b in beam]


def test_a_prefix_longer_than_the_limit_still_gets_a_token_after_it():
    model = toy_model()
    src = sources()[:1]
    prefix = [9] * 8
    for hyp in (greedy_search(model, src, max_len_a=0.0, max_len_b=3, prefixes=[prefix])[0],
                beam_search(model, src, beam_size=3, max_len_a=0.0, max_len_b=3, prefixes=[prefix])[0][0]):
        assert hyp.tokens[:8] == prefix and len(hyp.tokens) <= 9
