import math

import pytest
import torch

from nmt.config import ModelConfig
from nmt.special_tokens import PAD
from nmt.model.dropout import Dropout, dropout, dropped_levels
from tests.op_census import OperatorCensus
from nmt.model.transformer import MultiHeadAttention, PositionalEncoding, Transformer


def small(**changes) -> ModelConfig:
    cfg = dict(encoder_layers=2, decoder_layers=2, d_model=32, heads=4, d_ff=64, dropout=0.0, max_positions=64)
    return ModelConfig(**(cfg | changes))


def test_sinusoidal_positions_by_hand():
    pe = PositionalEncoding(d_model=8, max_positions=10)(10)
    assert pe[0].tolist() == [0, 1] * 4
    assert pe[3, 0].item() == pytest.approx(math.sin(3))
    assert pe[3, 1].item() == pytest.approx(math.cos(3))
    assert pe[5, 4].item() == pytest.approx(math.sin(5 / 10000 ** (4 / 8)))
    assert pe[5, 7].item() == pytest.approx(math.cos(5 / 10000 ** (6 / 8)))


def test_fairseq_positions_by_hand():
    """NLLB-200's and M2M-100's table: frequencies 10000^(-i/(D/2 - 1)), from position 2, kept
    interleaved (an imported model's dimensions are permuted to match)."""
    pe = PositionalEncoding(d_model=8, max_positions=10, style="fairseq")(10)
    assert pe[0, 0].item() == pytest.approx(math.sin(2)) and pe[0, 1].item() == pytest.approx(math.cos(2))
    assert pe[3, 2].item() == pytest.approx(math.sin(5 / 10000 ** (1 / 3)))
    assert pe[3, 7].item() == pytest.approx(math.cos(5 / 10000))  # the last frequency is 1/10000, not 10000^(-3/4)


def test_a_residual_free_encoder_layer_drops_only_its_attentions_skip_connection():
    torch.manual_seed(0)
    plain = Transformer(small(norm="pre", encoder_layers=3), 30, 30).eval()
    free = Transformer(small(norm="pre", encoder_layers=3, residual_free_encoder_layer=1), 30, 30).eval()
    free.load_state_dict(plain.state_dict())  # the same weights: the layer has no parameter more or less
    x, mask = torch.randn(1, 4, 32), torch.ones(1, 1, 1, 4, dtype=torch.bool)
    layer, sub = free.encoder_layers[1], free.encoder_layers[1].attn_sublayer
    attended = layer.self_attn(sub.norm(x), mask=mask)
    assert torch.allclose(layer(x, mask), layer.ff_sublayer(attended, layer.feed_forward), atol=1e-6)
    assert torch.equal(free.encoder_layers[0](x, mask), plain.encoder_layers[0](x, mask))
    src, tgt = torch.tensor([[5, 6, 7, 3]]), torch.tensor([[2, 8, 9]])
    assert not torch.allclose(free(src, tgt), plain(src, tgt))
    with pytest.raises(ValueError, match="layers 0 to 2"):
        small(encoder_layers=3, residual_free_encoder_layer=3)


def test_embeddings_are_scaled_by_sqrt_d_model_and_share_one_matrix():
    model = Transformer(small(), 50, 50)
    ids = torch.tensor([[4, 9, 7]])
    expected = model.src_embed.tokens.weight[ids] * math.sqrt(32) + model.src_embed.positions(3)
    assert torch.allclose(model.src_embed(ids), expected)
    assert model.src_embed.tokens is model.tgt_embed.tokens
    hidden = torch.randn(2, 32)
    assert torch.allclose(model.output_logits(hidden), hidden @ model.tgt_embed.tokens.weight.T)


def test_separate_vocabularies_get_separate_embeddings():
    model = Transformer(small(share_embeddings=False), 40, 60)
    assert model.src_embed.tokens.weight.shape == (40, 32) and model.tgt_embed.tokens.weight.shape == (60, 32)
    assert model(torch.tensor([[5, 6, 3]]), torch.tensor([[2, 7]])).shape == (1, 2, 60)


def test_attention_is_softmax_of_scaled_dot_products_by_hand():
    torch.manual_seed(0)
    attention = MultiHeadAttention(d_model=8, heads=2, attention_dropout=0.0, self_attention=True).eval()
    x = torch.randn(1, 3, 8)
    mask = torch.tensor([True, True, False])[None, None, None, :]  # third key is padding
    q, k, v = attention.qkv_proj(x).chunk(3, dim=-1)
    heads = []
    for h in range(2):
        cols = slice(4 * h, 4 * h + 4)
        scores = q[0, :, cols] @ k[0, :, cols].T / math.sqrt(4)
        scores[:, 2] = float("-inf")
        heads.append(torch.softmax(scores, dim=-1) @ v[0, :, cols])
    expected = attention.out_proj(torch.cat(heads, dim=-1))
    assert torch.allclose(attention(x, mask=mask)[0], expected, atol=1e-6)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_padding_and_future_tokens_do_not_leak(norm):
    torch.manual_seed(0)
    model = Transformer(small(norm=norm), 30, 30).eval()
    src = torch.tensor([[5, 6, 7, 3]])
    tgt = torch.tensor([[2, 8, 9, 10]])
    out = model(src, tgt)
    padded = model(torch.tensor([[5, 6, 7, 3, PAD, PAD]]), tgt)
    assert torch.allclose(out, padded, atol=1e-5)
    changed_future = model(src, torch.tensor([[2, 8, 11, 12]]))
    assert torch.allclose(out[:, :2], changed_future[:, :2], atol=1e-5)
    assert not torch.allclose(out[:, 2:], changed_future[:, 2:])


def test_post_ln_normalizes_each_sublayer_and_pre_ln_adds_final_norms():
    post, pre = Transformer(small(), 30, 30), Transformer(small(norm="pre"), 30, 30)
    x = torch.randn(2, 5, 32) * 3 + 1
    y = post.encoder_layers[0](x, torch.ones(2, 1, 1, 5, dtype=torch.bool))
    assert torch.allclose(y.mean(-1), torch.zeros(2, 5), atol=1e-5)
    assert isinstance(post.encoder_norm, torch.nn.Identity) and isinstance(pre.encoder_norm, torch.nn.LayerNorm)


def test_base_model_parameter_count():
    """Base model, shared 37k vocabulary: counted by hand from the paper's shapes."""
    d, ff, n, vocab = 512, 2048, 6, 37000
    attention = 4 * (d * d + d)
    feed_forward = d * ff + ff + ff * d + d
    norm = 2 * d
    encoder = n * (attention + feed_forward + 2 * norm)
    decoder = n * (2 * attention + feed_forward + 3 * norm)
    expected = vocab * d + encoder + decoder  # one embedding matrix, also the output projection
    model = Transformer(ModelConfig(), vocab, vocab)
    assert model.num_parameters() == expected == 63_082_496


def test_initialization_scales():
    model = Transformer(ModelConfig(d_model=512), 1000, 1000)
    emb = model.src_embed.tokens.weight
    assert emb[PAD].abs().sum() == 0
    assert emb[1:].std().item() == pytest.approx(512 ** -0.5, rel=0.05)
    w1 = model.encoder_layers[0].feed_forward.w1.weight
    assert w1.abs().max().item() <= math.sqrt(6 / (512 + 2048)) + 1e-6
    qkv = model.encoder_layers[0].self_attn.qkv_proj.weight
    assert qkv.abs().max().item() == pytest.approx(math.sqrt(6 / (512 + 512)), rel=0.01)


def test_cpu_dropout_drops_p_of_the_elements_and_rescales_the_rest():
    torch.manual_seed(0)
    x = torch.ones(1_000_000, requires_grad=True)
    for p in (0.1, 0.3):
        y = dropout(x, p, training=True)
        dropped = (y == 0).float().mean().item()
        assert abs(dropped - p) < 0.002  # binomial sd 0.0005 at p = 0.3
        p_rounded = dropped_levels(p) / 65536
        assert abs(p_rounded - p) < 1e-5
        assert torch.allclose(y[y != 0], torch.full_like(y[y != 0], 1 / (1 - p_rounded)))
        assert abs(y.mean().item() - 1.0) < 0.004  # unbiased
        x.grad = None
        (y * 3).sum().backward()
        assert torch.equal(x.grad, 3 * y.detach())  # gradient: the same mask and scale
        # The draws come four to a 64-bit word: each of the four places drops p, and neighbours
        # from one word drop independently (both: p², binomial sd 0.0003 at p = 0.3)
        lanes = (y == 0).view(-1, 4).float()
        assert all(abs(rate - p) < 0.004 for rate in lanes.mean(0).tolist())
        assert all(abs((lanes[:, i] * lanes[:, (i + 1) % 4]).mean().item() - p * p) < 0.002 for i in range(4))


def test_cpu_dropout_is_the_identity_in_eval_or_at_zero_and_follows_the_seed():
    x = torch.randn(1000)
    assert torch.equal(dropout(x, 0.1, training=False), x)
    assert torch.equal(dropout(x, 0.0, training=True), x)
    assert torch.equal(dropout(x, 1.0, training=True), torch.zeros_like(x))
    torch.manual_seed(3)
    a = dropout(x, 0.2, training=True)
    torch.manual_seed(3)
    assert torch.equal(dropout(x, 0.2, training=True), a)
    layer = Dropout(0.2).eval()
    assert torch.equal(layer(x), x)
    with torch.inference_mode(), OperatorCensus(layer) as census:  # as decoding runs: not even F.dropout's call
        assert layer(x) is x
    assert census.calls == 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_cpu_dropout_multiplies_tensors_of_one_dtype_and_never_selects(dtype):
    """The CPU's where(mask, x, 0), or a product with a boolean mask, runs 5-15 times slower than a
    product of two tensors of one dtype: the mask is ones and zeros in x's dtype, forward and
    backward. Its products equal where(mask, x · scale, 0) bit for bit, the gradient too."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Products(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops, self.mixed = [], []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func.overloadpacket.__name__)
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            if func.overloadpacket in (torch.ops.aten.mul, torch.ops.aten.mul_) and len({t.dtype for t in tensors}) > 1:
                self.mixed.append([t.dtype for t in tensors])
            return func(*args, **(kwargs or {}))

    x = torch.randn(64, 23, 32).to(dtype).requires_grad_()
    grad = torch.randn(64, 23, 32).to(dtype)
    torch.manual_seed(1)
    with Products() as census:
        y = dropout(x, 0.3, training=True)
        y.backward(grad)
    assert "where" not in census.ops and not census.mixed and census.ops.count("mul") == 2
    kept = y.detach() != 0
    scale = 1 / (1 - dropped_levels(0.3) / 65536)
    assert torch.equal(y.detach(), torch.where(kept, x.detach() * scale, 0.0))
    assert torch.equal(x.grad, torch.where(kept, grad * scale, 0.0))


def test_compiled_cpu_dropout_is_one_graph_that_drops_p_and_rescales_the_rest():
    """Under torch.compile (`train.compile: true` on a CPU) dropout is torch's: the int16 view of
    64-bit draws broke the graph and failed at run time in AOT autograd (setStorage out of bounds).
    Dynamic shapes, two sizes, one graph; the gradient keeps the forward's mask and scale."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(Dropout(0.1).train(), backend="aot_eager", dynamic=True)
    torch.manual_seed(0)
    for rows in (90, 130):
        x = torch.ones(rows, 41, 64, requires_grad=True)
        y = compiled(x)
        assert abs((y == 0).float().mean().item() - 0.1) < 0.01  # binomial sd 0.0008 at 236k elements
        assert torch.allclose(y[y != 0], torch.full_like(y[y != 0], 1 / 0.9))
        (y * 3).sum().backward()
        assert torch.equal(x.grad, 3 * y.detach())
    assert not counters["graph_break"], dict(counters["graph_break"])
    assert counters["stats"]["unique_graphs"] == 1


@pytest.mark.parametrize("activation", ["relu", "swish", "gelu"])
def test_the_feed_forward_applies_its_activation(activation):
    from nmt.model.transformer import PositionwiseFeedForward

    torch.manual_seed(0)
    ffn = PositionwiseFeedForward(8, 16, 0.0, activation)
    x = torch.randn(3, 8)
    hidden = x @ ffn.w1.weight.T + ffn.w1.bias
    act = {"relu": torch.relu(hidden), "swish": hidden * torch.sigmoid(hidden),
           "gelu": 0.5 * hidden * (1 + torch.erf(hidden / 2 ** 0.5))}[activation]
    assert torch.allclose(ffn(x), act @ ffn.w2.weight.T + ffn.w2.bias, atol=1e-6)
