"""PyTorch decoders written for helix.from_torch's tests, in several coding
styles, each with the Hugging Face config.json it implements (test data, not
helix code).

* ``HFStyleDecoder``: modules as Hugging Face's Llama / Mistral / Mixtral
  write them: an RMSNorm module, separate q/k/v projections, rotate-half
  RoPE from an ``inv_freq`` buffer, ``repeat_kv`` through ``expand``, an
  explicit softmax(QK^T)V with an additive causal (and sliding-window)
  mask, a SiLU gated MLP or a Mixtral sparse MoE block.
* ``CompactDecoder``: one fused qkv projection sliced three ways, RMSNorm
  spelled out inline, GQA through ``repeat_interleave``, attention through
  ``scaled_dot_product_attention`` with a boolean mask, a GELU or spelled-out
  SiLU (x * sigmoid(x)) gated MLP, tied embeddings.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def sdpa(q, k, v, mask):
    """scaled_dot_product_attention: the public function where this PyTorch
    has it (2.x), the private one of 1.13 otherwise."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return F._scaled_dot_product_attention(q, k, v, mask, 0.0, False,
                                           False)[0]


# ----------------------------------------------------------- HF style
class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n_rep):
    b, kvh, s, d = x.shape
    if n_rep == 1:
        return x
    x = x[:, :, None, :, :].expand(b, kvh, n_rep, s, d)
    return x.reshape(b, kvh * n_rep, s, d)


class HFAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, self.nh, self.nkv = c["hidden_size"], c["num_attention_heads"], \
            c["num_key_value_heads"]
        self.hd = c.get("head_dim", h // self.nh)
        self.window = c.get("sliding_window")
        self.causal = True  # tests switch these off to see the errors
        self.rope = True
        self.q_proj = nn.Linear(h, self.nh * self.hd, bias=False)
        self.k_proj = nn.Linear(h, self.nkv * self.hd, bias=False)
        self.v_proj = nn.Linear(h, self.nkv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.nh * self.hd, h, bias=False)
        inv = 1.0 / (c["rope_theta"] **
                     (torch.arange(0, self.hd, 2).float() / self.hd))
        self.register_buffer("inv_freq", inv, persistent=False)

    def forward(self, x, pos):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.nh, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.nkv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.nkv, self.hd).transpose(1, 2)
        freqs = torch.outer(pos.float(), self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        if self.rope:
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        k, v = repeat_kv(k, self.nh // self.nkv), repeat_kv(v, self.nh // self.nkv)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.hd)
        mask = torch.full((s, s), float("-inf")).triu(1) if self.causal \
            else torch.zeros(s, s)
        if self.window:
            mask = mask + torch.full((s, s), float("-inf")).tril(-self.window)
        w = F.softmax(scores + mask, dim=-1)
        o = torch.matmul(w, v).transpose(1, 2).reshape(b, s, -1)
        return self.o_proj(o)


class HFMLP(nn.Module):
    def __init__(self, h, i):
        super().__init__()
        self.gate_proj = nn.Linear(h, i, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def expert_sum(experts, x, chosen, weights):
    """Each token's chosen experts (one gated MLP each) weighted and summed,
    the loop Mixtral's and DeepSeek's modeling code run."""
    out = torch.zeros_like(x)
    for e, expert in enumerate(experts):
        rows, slot = torch.where(chosen == e)
        if rows.shape[0]:
            out = out.index_add(0, rows, expert(x[rows]) *
                                weights[rows, slot, None])
    return out


class MixtralMoE(nn.Module):
    """Mixtral's sparse MoE block: router, softmax, top-k, renormalised
    weights, one gated MLP per expert, a weighted sum."""

    def __init__(self, c):
        super().__init__()
        h, i = c["hidden_size"], c["intermediate_size"]
        self.top_k = c["num_experts_per_tok"]
        self.gate = nn.Linear(h, c["num_local_experts"], bias=False)
        self.experts = nn.ModuleList(HFMLP(h, i)
                                     for _ in range(c["num_local_experts"]))

    def forward(self, x):
        b, s, h = x.shape
        x = x.view(-1, h)
        probs = F.softmax(self.gate(x), dim=-1)
        weights, chosen = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return expert_sum(self.experts, x, chosen, weights).view(b, s, h)


class HFLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, eps = c["hidden_size"], c["rms_norm_eps"]
        self.input_layernorm = RMSNorm(h, eps)
        self.self_attn = HFAttention(c)
        self.post_attention_layernorm = RMSNorm(h, eps)
        self.mlp = MixtralMoE(c) if "num_local_experts" in c else \
            HFMLP(h, c["intermediate_size"])

    def forward(self, x, pos):
        x = x + self.self_attn(self.input_layernorm(x), pos)
        return x + self.mlp(self.post_attention_layernorm(x))


class HFStyleDecoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.embed_tokens = nn.Embedding(c["vocab_size"], h)
        self.layers = nn.ModuleList(HFLayer(c)
                                    for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(h, c["rms_norm_eps"])
        self.lm_head = nn.Linear(h, c["vocab_size"], bias=False)

    def forward(self, tokens):
        pos = torch.arange(tokens.shape[1])
        x = self.embed_tokens(tokens)
        for layer in self.layers:
            x = layer(x, pos)
        return self.lm_head(self.norm(x))


# ----------------------------------------------------------- DeepSeek style
class MLAAttention(nn.Module):
    """DeepSeek-V2's multi-head latent attention, as its modeling code
    writes it: queries from q_proj (or q_a_proj, q_a_layernorm, q_b_proj),
    a latent and a shared rope key from kv_a_proj_with_mqa, keys and values
    from kv_b_proj of the normed latent."""

    def __init__(self, c):
        super().__init__()
        h, self.nh = c["hidden_size"], c["num_attention_heads"]
        self.nope, self.rope_d = c["qk_nope_head_dim"], c["qk_rope_head_dim"]
        self.vd, self.r_kv = c["v_head_dim"], c["kv_lora_rank"]
        self.qd = self.nope + self.rope_d
        self.r_q = c.get("q_lora_rank")
        if self.r_q:
            self.q_a_proj = nn.Linear(h, self.r_q, bias=False)
            self.q_a_layernorm = RMSNorm(self.r_q, c["rms_norm_eps"])
            self.q_b_proj = nn.Linear(self.r_q, self.nh * self.qd, bias=False)
        else:
            self.q_proj = nn.Linear(h, self.nh * self.qd, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(h, self.r_kv + self.rope_d,
                                            bias=False)
        self.kv_a_layernorm = RMSNorm(self.r_kv, c["rms_norm_eps"])
        self.kv_b_proj = nn.Linear(self.r_kv, self.nh * (self.nope + self.vd),
                                   bias=False)
        self.o_proj = nn.Linear(self.nh * self.vd, h, bias=False)
        inv = 1.0 / (c["rope_theta"] **
                     (torch.arange(0, self.rope_d, 2).float() / self.rope_d))
        self.register_buffer("inv_freq", inv, persistent=False)

    def forward(self, x, pos):
        b, s, _ = x.shape
        q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(x))) if self.r_q \
            else self.q_proj(x)
        q = q.view(b, s, self.nh, self.qd).transpose(1, 2)
        q_nope, q_pe = torch.split(q, [self.nope, self.rope_d], dim=-1)
        latent, k_pe = torch.split(self.kv_a_proj_with_mqa(x),
                                   [self.r_kv, self.rope_d], dim=-1)
        k_pe = k_pe.view(b, s, 1, self.rope_d).transpose(1, 2)
        kv = self.kv_b_proj(self.kv_a_layernorm(latent))
        kv = kv.view(b, s, self.nh, self.nope + self.vd).transpose(1, 2)
        k_nope, v = torch.split(kv, [self.nope, self.vd], dim=-1)
        freqs = torch.outer(pos.float(), self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        q_pe = q_pe * cos + rotate_half(q_pe) * sin
        k_pe = k_pe * cos + rotate_half(k_pe) * sin
        q = torch.cat([q_nope, q_pe], dim=-1)
        k = torch.cat([k_nope, k_pe.expand(b, self.nh, s, self.rope_d)], dim=-1)
        scores = q @ k.transpose(2, 3) / math.sqrt(self.qd)
        w = F.softmax(scores + torch.full((s, s), float("-inf")).triu(1), -1)
        o = (w @ v).transpose(1, 2).reshape(b, s, self.nh * self.vd)
        return self.o_proj(o)


class DeepSeekMoE(nn.Module):
    """Routed experts (softmax, greedy top-k, optionally renormalised and
    scaled) plus shared experts as one wider MLP."""

    def __init__(self, c):
        super().__init__()
        h, i = c["hidden_size"], c["moe_intermediate_size"]
        self.top_k = c["num_experts_per_tok"]
        self.norm = c["norm_topk_prob"]
        self.scale = c["routed_scaling_factor"]
        self.gate = nn.Linear(h, c["n_routed_experts"], bias=False)
        self.experts = nn.ModuleList(HFMLP(h, i)
                                     for _ in range(c["n_routed_experts"]))
        self.shared_experts = HFMLP(h, i * c["n_shared_experts"])

    def forward(self, x):
        b, s, h = x.shape
        flat = x.view(-1, h)
        probs = self.gate(flat).softmax(dim=-1)
        weights, chosen = torch.topk(probs, self.top_k, dim=-1)
        if self.norm:
            weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-20)
        weights = weights * self.scale
        out = expert_sum(self.experts, flat, chosen, weights)
        return out.view(b, s, h) + self.shared_experts(x)


class DeepSeekLayer(nn.Module):
    def __init__(self, c, index):
        super().__init__()
        h, eps = c["hidden_size"], c["rms_norm_eps"]
        self.input_layernorm = RMSNorm(h, eps)
        self.self_attn = MLAAttention(c)
        self.post_attention_layernorm = RMSNorm(h, eps)
        self.mlp = DeepSeekMoE(c) if index >= c["first_k_dense_replace"] \
            else HFMLP(h, c["intermediate_size"])

    def forward(self, x, pos):
        x = x + self.self_attn(self.input_layernorm(x), pos)
        return x + self.mlp(self.post_attention_layernorm(x))


class DeepSeekDecoder(HFStyleDecoder):
    def __init__(self, c):
        super().__init__(dict(c, num_attention_heads=1,
                              num_key_value_heads=1, rope_theta=1.0,
                              intermediate_size=1, num_hidden_layers=0))
        self.layers = nn.ModuleList(DeepSeekLayer(c, i)
                                    for i in range(c["num_hidden_layers"]))


# ----------------------------------------------------------- compact style
class CompactBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.nh, self.nkv = c["num_attention_heads"], c["num_key_value_heads"]
        self.hd = c.get("head_dim", h // self.nh)
        self.eps = c["rms_norm_eps"]
        self.theta = c["rope_theta"]
        self.act = c["hidden_act"]
        self.ln1 = nn.Parameter(torch.ones(h))
        self.ln2 = nn.Parameter(torch.ones(h))
        self.wqkv = nn.Linear(h, (self.nh + 2 * self.nkv) * self.hd,
                              bias=False)
        self.wo = nn.Linear(self.nh * self.hd, h, bias=False)
        self.w1 = nn.Linear(h, c["intermediate_size"], bias=False)
        self.w3 = nn.Linear(h, c["intermediate_size"], bias=False)
        self.w2 = nn.Linear(c["intermediate_size"], h, bias=False)

    def norm(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * w

    def rope(self, t, pos):
        half = self.hd // 2
        inv = self.theta ** (-torch.arange(half, dtype=torch.float32) / half)
        ang = pos[:, None].float() * inv[None, :]
        cos = torch.cat([ang.cos(), ang.cos()], -1)
        sin = torch.cat([ang.sin(), ang.sin()], -1)
        rot = torch.cat([-t[..., half:], t[..., :half]], -1)
        return t * cos + rot * sin

    def forward(self, x, pos):
        b, s, _ = x.shape
        qkv = self.wqkv(self.norm(x, self.ln1))
        q, k, v = qkv.split([self.nh * self.hd, self.nkv * self.hd,
                             self.nkv * self.hd], dim=-1)
        q = q.reshape(b, s, self.nh, self.hd).permute(0, 2, 1, 3)
        k = k.reshape(b, s, self.nkv, self.hd).permute(0, 2, 1, 3)
        v = v.reshape(b, s, self.nkv, self.hd).permute(0, 2, 1, 3)
        q, k = self.rope(q, pos), self.rope(k, pos)
        rep = self.nh // self.nkv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        mask = torch.ones(s, s, dtype=torch.bool).tril()
        o = sdpa(q, k, v, mask).permute(0, 2, 1, 3).reshape(b, s, -1)
        x = x + self.wo(o)
        hdn = self.norm(x, self.ln2)
        g = self.w1(hdn)
        g = F.gelu(g, approximate="tanh") if self.act == "gelu_pytorch_tanh" \
            else g * torch.sigmoid(g)
        return x + self.w2(g * self.w3(hdn))


class CompactDecoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.emb = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.blocks = nn.ModuleList(CompactBlock(c)
                                    for _ in range(c["num_hidden_layers"]))
        self.ln_f = nn.Parameter(torch.ones(c["hidden_size"]))
        self.eps = c["rms_norm_eps"]

    def forward(self, tokens):
        pos = torch.arange(tokens.shape[1])
        x = self.emb(tokens)
        for blk in self.blocks:
            x = blk(x, pos)
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * \
            self.ln_f
        return x @ self.emb.weight.t()  # tied LM head


# ----------------------------------------------------------- configs
LLAMA = {
    "_name_or_path": "torch-llama", "model_type": "llama",
    "architectures": ["LlamaForCausalLM"], "hidden_size": 128,
    "intermediate_size": 256, "num_hidden_layers": 2,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 16,
    "vocab_size": 512, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
    "max_position_embeddings": 4096, "tie_word_embeddings": False,
    "hidden_act": "silu",
}
MISTRAL = dict(LLAMA, _name_or_path="torch-mistral", model_type="mistral",
               architectures=["MistralForCausalLM"], sliding_window=4,
               rope_theta=1000000.0, num_key_value_heads=4)
MIXTRAL = dict(LLAMA, _name_or_path="torch-mixtral", model_type="mixtral",
               architectures=["MixtralForCausalLM"], num_local_experts=4,
               num_experts_per_tok=2, intermediate_size=96)
DEEPSEEK = {
    "_name_or_path": "torch-deepseek", "model_type": "deepseek_v2",
    "architectures": ["DeepseekV2ForCausalLM"], "hidden_size": 128,
    "num_hidden_layers": 3, "num_attention_heads": 4,
    "num_key_value_heads": 4, "vocab_size": 512, "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0, "max_position_embeddings": 4096,
    "tie_word_embeddings": False, "hidden_act": "silu",
    "q_lora_rank": 48, "kv_lora_rank": 32, "qk_nope_head_dim": 16,
    "qk_rope_head_dim": 8, "v_head_dim": 16, "intermediate_size": 256,
    "first_k_dense_replace": 1, "moe_layer_freq": 1,
    "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2,
    "moe_intermediate_size": 64, "scoring_func": "softmax",
    "topk_method": "greedy", "norm_topk_prob": True,
    "routed_scaling_factor": 2.5,
}
# DeepSeek-V2-Lite's shape: no low-rank queries, two shared experts, weights
# neither renormalised nor scaled.
DEEPSEEK_LITE = {k: v for k, v in DEEPSEEK.items() if k != "q_lora_rank"}
DEEPSEEK_LITE.update(_name_or_path="torch-deepseek-lite", n_shared_experts=2,
                     norm_topk_prob=False, routed_scaling_factor=1.0,
                     first_k_dense_replace=2)
COMPACT = dict(LLAMA, _name_or_path="torch-compact", rms_norm_eps=1e-5,
               rope_theta=500000.0, tie_word_embeddings=True,
               num_key_value_heads=4, hidden_act="gelu_pytorch_tanh")
COMPACT_SILU = dict(COMPACT, _name_or_path="torch-compact-silu",
                    hidden_act="silu", num_key_value_heads=8)
