"""helix.from_torch: PyTorch decoders written in several coding styles
(torch_decoders.py) give the same model IR and the same plans as the
config.json each implements, and what the recogniser cannot read is an
error naming the graph node. Needs PyTorch (Debian's python3-torch, which
scripts/setup.sh installs)."""
import copy

import pytest
import torch

import helix
import torch_decoders as td

from test_helix import strip_times

# (decoder class, its config, example positions: more than a sliding window)
CASES = [
    ("hf-llama", td.HFStyleDecoder, td.LLAMA, 8),
    ("hf-mistral-sliding-window", td.HFStyleDecoder, td.MISTRAL, 12),
    ("hf-mixtral-moe", td.HFStyleDecoder, td.MIXTRAL, 8),
    ("deepseek-mla-lowrank-q-shared-experts", td.DeepSeekDecoder,
     td.DEEPSEEK, 8),
    ("deepseek-lite-mla-two-shared-experts", td.DeepSeekDecoder,
     td.DEEPSEEK_LITE, 8),
    ("compact-fused-qkv-sdpa-gelu-tied", td.CompactDecoder, td.COMPACT, 8),
    ("compact-spelled-silu-mha", td.CompactDecoder, td.COMPACT_SILU, 8),
]


def traced(cls, config, positions):
    torch.manual_seed(0)
    module = cls(config)
    tokens = torch.randint(0, config["vocab_size"], (2, positions))
    return helix.from_torch(module, (tokens,), name=config["_name_or_path"],
                            max_position_embeddings=config[
                                "max_position_embeddings"])


@pytest.mark.parametrize("cls,config,positions",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_same_ir_and_plan_as_the_config(cls, config, positions):
    model = traced(cls, config, positions)
    want = helix.import_config(config)
    for key, value in config.items():
        assert model.recognised.get(key) == value, key
    assert model.to_mlir() == want.to_mlir()
    options = dict(hardware="h200", dtype="fp8", context=4096, max_gpus=8)
    assert strip_times(helix.plan(model, **options)) == \
        strip_times(helix.plan(want, **options))


def test_recognises_the_window_only_from_a_long_enough_example():
    # Eight positions under a window of 4 show it; four do not, and the
    # model then reads as full causal attention (documented).
    assert traced(td.HFStyleDecoder, td.MISTRAL, 8).recognised[
        "sliding_window"] == 4
    assert "sliding_window" not in traced(td.HFStyleDecoder, td.MISTRAL,
                                          4).recognised


def expect_error(module, tokens, *fragments, **kwargs):
    kwargs.setdefault("max_position_embeddings", 4096)
    with pytest.raises(helix.Error) as e:
        helix.from_torch(module, (tokens,), **kwargs)
    message = str(e.value)
    assert message.startswith("helix.from_torch: error: "), message
    for f in fragments:
        assert f in message, message


def tokens(n=8):
    return torch.randint(0, 512, (1, n))


def test_errors_name_the_node_and_what_was_expected():
    # No max_position_embeddings: the graph does not say.
    torch.manual_seed(0)
    expect_error(td.HFStyleDecoder(td.LLAMA), tokens(),
                 "pass max_position_embeddings=",
                 max_position_embeddings=None)

    # Attention that is not causal, or has no rotary embedding.
    m = td.HFStyleDecoder(td.LLAMA)
    m.layers[1].self_attn.causal = False
    expect_error(m, tokens(), "(aten._softmax.default): expected a causal "
                 "mask", "query 0 attends to 1")
    m = td.HFStyleDecoder(td.LLAMA)
    for layer in m.layers:
        layer.self_attn.rope = False
    expect_error(m, tokens(), "expected a rotary position embedding")

    # Layers that disagree.
    m = td.HFStyleDecoder(td.LLAMA)
    m.layers[1].self_attn.window = 3
    expect_error(m, tokens(), "layer 1: window 3, layer 0 None")

    # A low-rank query projection (as DeepSeek's MLA writes it).
    m = td.HFStyleDecoder(td.LLAMA)
    for layer in m.layers:
        layer.self_attn.q_proj = torch.nn.Sequential(
            torch.nn.Linear(128, 32, bias=False),
            torch.nn.Linear(32, 128, bias=False))
    expect_error(m, tokens(), "expected the query projection "
                 "(layers.0.self_attn.q_proj.1.weight) to read the layer's "
                 "normed hidden state of width 128", "MLA")

    # A LayerNorm model: attention and MLP are found, the norms are not.
    m = td.HFStyleDecoder(td.LLAMA)
    for layer in m.layers:
        layer.input_layernorm = torch.nn.LayerNorm(128)
        layer.post_attention_layernorm = torch.nn.LayerNorm(128)
    m.norm = torch.nn.LayerNorm(128)
    expect_error(m, tokens(), "expected RMSNorm")

    # An ungated MLP.
    m = td.HFStyleDecoder(td.LLAMA)

    class Plain(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(128, 256, bias=False)
            self.fc2 = torch.nn.Linear(256, 128, bias=False)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    for layer in m.layers:
        layer.mlp = Plain()
    expect_error(m, tokens(), "expected a gated MLP",
                 "layers.0.mlp.fc1.weight")

    # Sigmoid routing: read, and refused with the reason.
    m = td.HFStyleDecoder(td.MIXTRAL)

    def sigmoid_route(self, x):
        b, s, h = x.shape
        x = x.view(-1, h)
        weights, chosen = torch.topk(torch.sigmoid(self.gate(x)),
                                     self.top_k, dim=-1)
        return td.expert_sum(self.experts, x, chosen, weights).view(b, s, h)

    for layer in m.layers:
        layer.mlp.forward = sigmoid_route.__get__(layer.mlp)
    expect_error(m, tokens(), "the MoE router scores experts with sigmoid")

    # Group-limited routing (DeepSeek-V3's n_group / topk_group): two top-k
    # selections from one router, refused.
    m = td.DeepSeekDecoder(td.DEEPSEEK)

    def grouped_route(self, x):
        b, s, h = x.shape
        flat = x.view(-1, h)
        scores = self.gate(flat).softmax(dim=-1)
        groups = scores.view(flat.shape[0], 2, -1).max(dim=-1).values
        keep = torch.zeros_like(groups).scatter(
            1, torch.topk(groups, 1, dim=-1)[1], 1.0)
        masked = scores * keep.repeat_interleave(2, dim=1)
        weights, chosen = torch.topk(masked, self.top_k, dim=-1)
        out = td.expert_sum(self.experts, flat, chosen, weights)
        return out.view(b, s, h) + self.shared_experts(x)

    for layer in m.layers[1:]:
        layer.mlp.forward = grouped_route.__get__(layer.mlp)
    expect_error(m, tokens(), "feeds 2 top-k selections",
                 "group-limited routing")

    # A module that does not trace with the inputs given.
    expect_error(td.HFStyleDecoder(td.LLAMA), torch.randn(1, 8),
                 "tracing the module with the example inputs failed")


def test_the_recognised_config_is_a_plain_dict():
    model = traced(td.HFStyleDecoder, td.LLAMA, 8)
    config = copy.deepcopy(model.recognised)
    assert helix.import_config(config).to_mlir() == model.to_mlir()
