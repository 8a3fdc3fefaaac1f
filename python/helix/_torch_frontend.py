"""helix.from_torch: a PyTorch decoder's traced graph as a helix model.

The module is traced with real example inputs at the aten level
(``make_fx``), so code that reads shapes (``b, s, _ = x.shape``) traces as
it runs; the traced graph is also run once node by node, so every node's
value (its shape, the attention pattern a mask leaves) is known. The
recogniser then reads, from the graph and the module's parameters alone:

* the embedding (``aten.embedding``) and, tied or not, the LM head;
* RMSNorm, as a module or spelled out (``x * rsqrt(mean(x^2) + eps) * w``),
  and its epsilon;
* the attention of each layer: ``softmax(QK^T)V`` (``scaled_dot_product
  _attention`` traces to the same aten ops), its query, key and value
  projections (separate, or one fused projection sliced three ways), the
  heads, KV heads (GQA through ``repeat_kv``, ``expand`` or
  ``repeat_interleave``: the KV projection's width says how many) and head
  dimension, RoPE (rotate-half or interleaved) and its theta (from the
  angles the graph computes), and the causal mask with its sliding window
  (from the attention pattern of the example);
* DeepSeek's multi-head latent attention: low-rank (or full) queries, a
  normed KV latent and a shared rope key, keys and values up-projected;
* the output projection, a gated MLP (SiLU or GELU) or a MoE block (a router
  linear, softmax or sigmoid, top-k, renormalised and scaled weights,
  per-expert gated MLPs, shared experts, a weighted sum), leading dense
  layers before MoE ones;
* the final norm.

What it reads becomes the Hugging Face configuration those facts make
(llama, mistral with a sliding window, mixtral with experts, deepseek_v2
with MLA), imported by
the same importer as a config.json: the torch graph and the equivalent
config give the same model IR and the same plans. Anything it cannot
recognise is an :class:`helix.Error` naming the graph node, the pattern
expected there and the nearest match (docs/embedding.md).
"""

import math

# Ops that move or reshape a tensor without changing what it holds.
_TRANSPARENT = {
    "view", "_unsafe_view", "_reshape_alias", "reshape", "clone", "contiguous",
    "expand", "t", "transpose", "permute", "unsqueeze", "squeeze", "_to_copy",
    "alias", "detach", "lift_fresh_copy", "lift_fresh", "repeat_interleave",
    "index_select",
}


def _op(node):
    """'mm' for aten.mm.default, '' for a non-call node."""
    if node.op != "call_function":
        return ""
    name = getattr(node.target, "__name__", str(node.target))
    return name.split(".")[0]


def _tensor_args(node):
    import torch.fx
    out = []
    for a in node.args:
        if isinstance(a, torch.fx.Node):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if isinstance(x, torch.fx.Node))
    return out


class _Graph:
    """The traced graph, its node values and the parameter behind each
    constant."""

    def __init__(self, module, example_inputs, error):
        import torch
        from torch.fx.experimental.proxy_tensor import make_fx
        self.error = error
        was_training = module.training
        module.eval()
        try:
            with torch.no_grad():
                self.gm = make_fx(module)(*example_inputs)
                values = {}

                class Recorder(torch.fx.Interpreter):
                    def run_node(self, n):
                        v = super().run_node(n)
                        values[n] = v
                        return v

                Recorder(self.gm).run(*example_inputs)
        except Exception as e:  # the tracer's own message, named
            raise error("tracing the module with the example inputs failed: "
                        "%s: %s" % (type(e).__name__, e)) from None
        finally:
            module.train(was_training)
        self.values = values
        self.nodes = list(self.gm.graph.nodes)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        by_ptr = {}
        for name, p in module.named_parameters():
            by_ptr.setdefault((p.data_ptr(), tuple(p.shape)), name)
        self.param = {}  # get_attr node -> parameter name
        for n in self.nodes:
            if n.op == "get_attr":
                t = getattr(self.gm, n.target)
                key = (t.data_ptr(), tuple(t.shape))
                if key in by_ptr:
                    self.param[n] = by_ptr[key]
        self.users = {n: list(n.users) for n in self.nodes}

    def shape(self, node):
        v = self.values.get(node)
        return tuple(v.shape) if hasattr(v, "shape") else None

    def describe(self, node):
        return "node '%s' (%s)" % (node.name, node.target if node.op ==
                                   "call_function" else node.op)

    def source(self, node):
        """The node a tensor comes from, through ops that only move it."""
        while _op(node) in _TRANSPARENT or (
                _op(node) == "slice" and self._full_slice(node)):
            node = node.args[0]
        return node

    def _full_slice(self, node):
        a, b = self.shape(node.args[0]), self.shape(node)
        return a is not None and a == b

    def weight(self, node):
        """The 2-D parameter an operand is (through t / transpose), or None."""
        n = node
        while _op(n) in ("t", "transpose", "permute", "_to_copy", "alias",
                         "detach"):
            n = n.args[0]
        if n in self.param and len(self.shape(n) or ()) == 2:
            return n
        return None

    def ancestors_until(self, node, stop):
        """Nodes reached backwards from `node`, not past nodes in `stop`."""
        seen, todo, hit = set(), [node], []
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if n in stop:
                hit.append(n)
                continue
            todo.extend(_tensor_args(n))
        return seen, hit


class _Linear:
    def __init__(self, g, node, weight_node, x):
        self.node = node  # the mm / addmm / matmul
        self.param = g.param[weight_node]
        self.out, self.inp = g.shape(weight_node)
        self.input = g.source(x)
        self.index = g.index[node]


def _linears(g):
    out = []
    for n in g.nodes:
        op = _op(n)
        if op in ("mm", "matmul", "bmm"):
            x, w = n.args[0], n.args[1]
        elif op == "addmm":
            x, w = n.args[1], n.args[2]
        elif op == "linear":
            x, w = n.args[0], n.args[1]
        else:
            continue
        wn = g.weight(w)
        if wn is not None:
            out.append(_Linear(g, n, wn, x))
    return out


def _outputs_of(g, lin):
    """The node a linear's result is known by downstream (through views)."""
    n = lin.node
    while True:
        users = [u for u in g.users[n] if _op(u) in ("view", "_unsafe_view",
                                                      "_reshape_alias",
                                                      "reshape")]
        if len(users) != 1 or len(g.users[n]) != 1:
            return n
        n = users[0]


class _Norm:
    def __init__(self, node, param, eps, x):
        self.node, self.param, self.eps, self.input = node, param, eps, x


def _norms(g):
    """RMSNorm: mul(w, mul(x, rsqrt(add(mean(pow(x, 2)), eps)))) in any
    operand order."""
    out = []
    for n in g.nodes:
        if _op(n) != "mul" or len(n.args) != 2:
            continue
        a, b = n.args
        for w, rest in ((a, b), (b, a)):
            if not hasattr(w, "op") or w not in g.param or \
                    len(g.shape(w) or ()) != 1 or not hasattr(rest, "op"):
                continue
            inner = g.source(rest)
            if _op(inner) != "mul":
                continue
            x, r = inner.args
            if _op(r) != "rsqrt":
                x, r = r, x
            if _op(r) != "rsqrt" or _op(r.args[0]) != "add":
                continue
            add = r.args[0]
            eps = [v for v in add.args if isinstance(v, (int, float))]
            mean = [v for v in add.args if hasattr(v, "op")]
            if len(eps) != 1 or len(mean) != 1 or _op(mean[0]) != "mean":
                continue
            out.append(_Norm(n, g.param[w], float(eps[0]), g.source(x)))
            break
    return out


def _back_to(g, node, targets, through):
    """The nearest node with an op in `targets` reached backwards from
    `node` through transparent ops and ops in `through`, or None."""
    todo, seen = [node], set()
    while todo:
        n = todo.pop(0)
        if n in seen or not hasattr(n, "op"):
            continue
        seen.add(n)
        if _op(n) in targets:
            return n
        if _op(n) in _TRANSPARENT or _op(n) in through or _op(n) == "slice":
            todo.extend(_tensor_args(n))
    return None


def _attention_pattern(g, where, allowed, error):
    """(window or None) from `allowed[i][j]`: whether query i of the example
    attends to key j. Causal is required."""
    s = allowed.shape[-1]
    if allowed.shape[0] != s:
        raise error("%s: expected a square attention over the example's "
                    "positions, found shape %s" % (g.describe(where),
                                                   list(allowed.shape)))
    for i in range(s):
        for j in range(i + 1, s):
            if allowed[i, j]:
                raise error("%s: expected a causal mask (no query attends to "
                            "a later position); query %d attends to %d"
                            % (g.describe(where), i, j))
    counts = [int(allowed[i, : i + 1].sum()) for i in range(s)]
    window = max(counts)
    for i, c in enumerate(counts):
        if c != min(i + 1, window):
            raise error("%s: expected a causal mask, with or without a "
                        "sliding window; query %d attends to %d of its %d "
                        "positions" % (g.describe(where), i, c, i + 1))
    return window if window < s else None


def _first_matrix(v):
    while v.dim() > 2:
        v = v[0]
    return v


def _attentions(g, by_node):
    """Every attention in the graph: (where, q, k, v, output, allowed)."""
    import torch
    found = []
    for sm in g.nodes:
        if _op(sm) in ("_softmax", "softmax"):
            qk = _back_to(g, sm.args[0], ("bmm", "matmul"),
                          ("add", "div", "mul", "sub", "masked_fill",
                           "where"))
            if qk is None or qk in by_node:
                continue  # a router's softmax (MoE), not attention
            pv = [u for u in g.nodes if _op(u) in ("bmm", "matmul")
                  and g.source(u.args[0]) is sm]
            if len(pv) != 1:
                continue
            allowed = _first_matrix(g.values[sm]) != 0
            found.append((sm, qk.args[0], qk.args[1], pv[0].args[1], pv[0],
                          allowed))
        elif _op(sm).startswith("_scaled_dot_product_attention"):
            q, k, v = sm.args[0], sm.args[1], sm.args[2]
            mask = sm.args[3] if len(sm.args) > 3 else None
            causal = bool(sm.args[6]) if len(sm.args) > 6 else \
                bool(sm.kwargs.get("is_causal", False))
            n = g.shape(q)[-2]
            allowed = torch.ones(n, n, dtype=torch.bool)
            if causal:
                allowed = torch.tril(allowed)
            if hasattr(mask, "op"):
                m = _first_matrix(g.values[mask])
                allowed = allowed & (m if m.dtype == torch.bool else
                                     m != float("-inf"))
            out = [u for u in g.users[sm] if u.args[1:] == (0,)]
            found.append((sm, q, k, v, out[0] if out else sm, allowed))
    return found


def _rope(g, q_linear_out, q_side, head_dim, error):
    """(style, theta) of the rotary embedding between a projection's output
    and the attention, or None."""
    region, _ = g.ancestors_until(q_side, {q_linear_out})
    style = None
    for n in region:
        if _op(n) == "cat":
            parts = [g.source(p) if hasattr(p, "op") else p for p in n.args[0]]
            if any(_op(p) == "neg" for p in parts):
                style = "rotate_half"
        if _op(n) == "slice" and len(n.args) > 4 and n.args[4] == 2:
            style = style or "interleaved"
        if _op(n) in ("view_as_complex", "view_as_real"):
            style = style or "interleaved"
    if style is None:
        return None
    # The angles: what a cos on the path takes, at position 1 (the example
    # positions are 0, 1, ...): column 1 holds theta^(-2/d) (column 2 when
    # interleaved pairs repeat each angle).
    everything, _ = g.ancestors_until(q_side, set())
    for n in sorted(everything, key=lambda x: g.index[x]):
        if _op(n) != "cos" or n.args[0] is q_linear_out:
            continue
        ang = g.values.get(n.args[0])
        if ang is None or ang.dim() < 2:
            continue
        ang = ang.reshape(-1, ang.shape[-1])
        if ang.shape[0] < 2 or ang.shape[-1] not in (head_dim, head_dim // 2):
            continue
        col = 2 if style == "interleaved" and ang.shape[-1] == head_dim \
            else 1
        freq = float(ang[1, col] - ang[0, col])
        if not 0 < freq < 1:
            continue
        theta = math.exp(-head_dim / 2.0 * math.log(freq))
        return style, float("%.4g" % theta)
    raise error("%s: rotary embedding found (%s) but no cos/sin of the "
                "positions to read its theta from" % (
                    g.describe(q_side), style))


def from_torch(module, example_inputs, name="", max_position_embeddings=None,
               error_class=None):
    """See helix.from_torch."""
    from . import Error, import_config
    err_cls = error_class or Error

    def error(msg):
        return err_cls("helix.from_torch: error: " + msg)

    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    g = _Graph(module, tuple(example_inputs), error)
    linears = _linears(g)
    norms = _norms(g)
    by_node = {l.node: l for l in linears}
    out_of = {_outputs_of(g, l): l for l in linears}
    g.linear_outputs = set(out_of)

    emb = [n for n in g.nodes if _op(n) == "embedding"]
    if len(emb) != 1 or emb[0].args[0] not in g.param:
        raise error("expected one aten.embedding of a parameter (the token "
                    "embedding), found %d" % len(emb))
    emb_param = g.param[emb[0].args[0]]
    vocab, hidden = g.shape(emb[0].args[0])
    tokens = g.shape(emb[0].args[1])
    batch = tokens[0] if tokens and len(tokens) == 2 else 1

    layers = []
    for sm, q_side, k_side, v_side, pv, allowed in _attentions(g, by_node):
        qk = sm
        qs = g.shape(q_side)
        heads = qs[0] // batch if len(qs) == 3 else qs[1]
        head_dim = qs[-1]
        stop = set(out_of)

        def projs(side, what):
            _, hit = g.ancestors_until(side, stop)
            hit = sorted(set(hit), key=lambda x: g.index[x])
            if not hit:
                raise error("%s: expected the %s to come from a linear "
                            "projection; nearest node: %s" % (
                                g.describe(qk if what != "values" else pv),
                                what, g.describe(g.source(side))))
            return [out_of[h] for h in hit]

        qls, kls, vls = projs(q_side, "queries"), projs(k_side, "keys"), \
            projs(v_side, "values")
        ql, kl, vl = qls[-1], kls[-1], vls[-1]
        window = _attention_pattern(g, sm, allowed, error)
        mla = _mla(g, linears, norms, hidden, qls, kls, vls, g.shape(q_side),
                   g.shape(v_side), batch)
        if mla is not None:
            rope = _rope(g, _outputs_of(g, ql), q_side, mla["rope_dim"],
                         error)
            if rope is None:
                raise error("%s: MLA recognised, but no rotary embedding on "
                            "its rope part" % g.describe(qk))
            layers.append(dict(mla, heads=mla["heads"], rope=rope,
                               window=window, o=_o_proj(g, linears, pv,
                                                        error),
                               softmax=sm, q=ql, k=kl, v=vl,
                               kv_heads=mla["heads"], head_dim=None))
            continue
        for lin, what in ((ql, "query"), (kl, "key"), (vl, "value")):
            if lin.inp != hidden or lin.input is not ql.input:
                raise error(
                    "%s: expected the %s projection (%s) to read the layer's "
                    "normed hidden state of width %d, as the query projection "
                    "does; it reads %s of width %d (low-rank projections are "
                    "recognised in DeepSeek's MLA form only: keys and values "
                    "from a normed latent, a shared rope key)" % (
                        g.describe(lin.node), what, lin.param, hidden,
                        g.describe(lin.input), lin.inp))
        fused = ql is kl or kl is vl
        if fused:
            if not (ql is kl is vl):
                raise error("%s: expected q, k and v from one fused "
                            "projection or three separate ones" %
                            g.describe(qk))
            kv_width = (ql.out - heads * head_dim) // 2
        else:
            kv_width = kl.out
            if vl.out != kv_width:
                raise error("%s: the value projection %s has %d outputs, the "
                            "key projection %s %d" % (
                                g.describe(pv), vl.param, vl.out, kl.param,
                                kv_width))
        if kv_width <= 0 or kv_width % head_dim:
            raise error("%s: the key/value width %d is not a multiple of "
                        "the head dimension %d" % (g.describe(qk), kv_width,
                                                   head_dim))
        kv_heads = kv_width // head_dim
        rope = _rope(g, _outputs_of(g, ql), q_side, head_dim, error)
        if rope is None:
            raise error("%s: expected a rotary position embedding on the "
                        "queries (rotate-half or interleaved); none found"
                        % g.describe(qk))
        o = _o_proj(g, linears, pv, error)
        layers.append(dict(input=ql.input, q=ql, k=kl, v=vl, fused=fused,
                           heads=heads,
                           kv_heads=kv_heads, head_dim=head_dim, rope=rope,
                           window=window, o=o, softmax=sm))
    if not layers:
        raise error("expected attention: softmax(Q K^T) V over linear "
                    "projections (or scaled_dot_product_attention); none "
                    "found among %d graph nodes" % len(g.nodes))

    # The FFN of each layer: the linears between its output projection and
    # the next layer's first projection.
    # (its attention's input: the normed hidden state its projections read)
    bounds = [g.index[l["input"]] for l in layers]
    lm = [l for l in linears if l.index > layers[-1]["o"].index
          and l.out == vocab and l.inp == hidden]
    for i, layer in enumerate(layers):
        end = bounds[i + 1] if i + 1 < len(layers) else (
            lm[-1].index if lm else len(g.nodes))
        seg = [l for l in linears if layer["o"].index < l.index < end]
        layer["ffn"] = _ffn(g, seg, hidden, layer["o"], error)
    if not lm:
        raise error("expected an LM head (a linear of %d outputs) after the "
                    "last layer; none found" % vocab)
    head = lm[-1]
    tied = head.param == emb_param
    eps = sorted({n.eps for n in norms})
    if not norms:
        raise error("expected RMSNorm (x * rsqrt(mean(x^2) + eps) * weight); "
                    "none found")
    if len(eps) != 1:
        raise error("the norms use different epsilons %s" % eps)

    first = layers[0]
    attn_keys = ("kind", "heads", "kv_heads", "head_dim", "rope", "window",
                 "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                 "qk_rope_head_dim", "v_head_dim")
    # Leading dense layers, then MoE layers (DeepSeek's first_k_dense_replace)
    dense = [l["ffn"]["kind"] == "dense" for l in layers]
    first_moe = dense.index(False) if False in dense else len(layers)
    for i, l in enumerate(layers):
        for key in attn_keys:
            if l.get(key) != first.get(key):
                raise error("layer %d: %s %s, layer 0 %s: helix plans "
                            "decoders whose layers agree" % (
                                i, key, l.get(key), first.get(key)))
        ref = layers[0 if i < first_moe else first_moe]["ffn"]
        if l["ffn"] != ref:
            raise error("layer %d: its feed-forward block %s differs from "
                        "layer %d's %s" % (i, l["ffn"],
                                           0 if i < first_moe else first_moe,
                                           ref))
    if first.get("kind") != "mla" and first["rope"][0] != "rotate_half":
        raise error("%s: interleaved RoPE recognised; helix's importers "
                    "take rotate-half RoPE for these families, so the plan "
                    "would be the same but the program would not" %
                    g.describe(first["softmax"]))
    if max_position_embeddings is None:
        raise error("the graph does not state the longest context the "
                    "model supports; pass max_position_embeddings=")
    moe = layers[first_moe]["ffn"] if first_moe < len(layers) else None
    dense_ffn = first["ffn"] if first_moe > 0 else None
    act = (dense_ffn or moe)["act"]
    config = {
        "_name_or_path": name or "",
        "hidden_size": hidden,
        "num_hidden_layers": len(layers),
        "num_attention_heads": first["heads"],
        "num_key_value_heads": first["kv_heads"],
        "vocab_size": vocab,
        "rms_norm_eps": eps[0],
        "rope_theta": first["rope"][1],
        "max_position_embeddings": int(max_position_embeddings),
        "tie_word_embeddings": tied,
        "hidden_act": act,
    }
    if first.get("kind") == "mla":
        # DeepSeek-V2's family: MLA, leading dense layers, routed and
        # shared experts.
        config.update(model_type="deepseek_v2",
                      architectures=["DeepseekV2ForCausalLM"])
        for key in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                    "v_head_dim"):
            config[key] = first[key]
        if first["q_lora_rank"]:
            config["q_lora_rank"] = first["q_lora_rank"]
        if first["window"]:
            raise error("%s: MLA with a sliding window: no configuration "
                        "family spells it" % g.describe(first["softmax"]))
        if moe is None:
            raise error("%s: MLA without MoE layers: DeepSeek's family, the "
                        "one that spells MLA, routes experts" %
                        g.describe(first["softmax"]))
        if dense_ffn is not None:
            config["intermediate_size"] = dense_ffn["intermediate"]
        if moe["shared_intermediate"] % moe["intermediate"]:
            raise error("%s: shared experts of width %d are not a whole "
                        "number of experts of width %d" % (
                            g.describe(layers[first_moe]["o"].node),
                            moe["shared_intermediate"], moe["intermediate"]))
        config.update(
            first_k_dense_replace=first_moe, moe_layer_freq=1,
            n_routed_experts=moe["experts"],
            n_shared_experts=moe["shared_intermediate"] // moe["intermediate"],
            num_experts_per_tok=moe["top_k"],
            moe_intermediate_size=moe["intermediate"],
            scoring_func=moe["scoring"], topk_method="greedy",
            norm_topk_prob=moe["norm_topk_prob"],
            routed_scaling_factor=moe["routed_scaling_factor"])
        model = import_config(config)
        model.recognised = config
        return model
    config["head_dim"] = first["head_dim"]
    where = g.describe(layers[first_moe]["o"].node) if moe else ""
    if moe and (first_moe or moe["shared_intermediate"]):
        raise error("%s: a MoE decoder with %s: the family from_torch writes "
                    "for GQA MoE (mixtral) has neither" % (
                        where, "leading dense layers" if first_moe else
                        "shared experts"))
    if moe and moe["scoring"] != "softmax":
        raise error("%s: the MoE router scores experts with %s; the "
                    "configuration families from_torch writes for GQA MoE "
                    "(mixtral) route with softmax" % (where, moe["scoring"]))
    if moe and not moe["norm_topk_prob"]:
        raise error("%s: the top-k routing weights are not renormalised "
                    "(w / sum(w)), as mixtral's family does" % where)
    if moe:
        config.update(model_type="mixtral",
                      architectures=["MixtralForCausalLM"],
                      intermediate_size=moe["intermediate"],
                      num_local_experts=moe["experts"],
                      num_experts_per_tok=moe["top_k"])
        if first["window"]:
            config["sliding_window"] = first["window"]
    elif first["window"]:
        config.update(model_type="mistral",
                      architectures=["MistralForCausalLM"],
                      intermediate_size=dense_ffn["intermediate"],
                      sliding_window=first["window"])
    else:
        config.update(model_type="llama", architectures=["LlamaForCausalLM"],
                      intermediate_size=dense_ffn["intermediate"])
    model = import_config(config)
    model.recognised = config
    return model


def _o_proj(g, linears, pv, error):
    """The output projection: the first linear fed by the attention
    output."""
    for l in linears:
        if l.index > g.index[pv]:
            _, hit = g.ancestors_until(l.input, {pv})
            if hit:
                return l
    raise error("%s: expected an output projection of the attention output; "
                "none found" % g.describe(pv))


def _norm_of(norms, node):
    """The RMSNorm whose output `node` is, or None."""
    for n in norms:
        if n.node is node:
            return n
    return None


def _mla(g, linears, norms, hidden, qls, kls, vls, q_shape, v_shape, batch):
    """DeepSeek's multi-head latent attention, or None when the projections
    are not its shape: keys from an up-projection of a normed latent (kv_b)
    and a rope part sliced off the latent's projection (kv_a), values from
    the same up-projection, queries from a projection of the hidden state or
    of a normed low-rank one (q_a, q_b)."""
    if len(kls) != 2 or len(vls) != 1 or vls[0] is not kls[-1]:
        return None
    kv_a, kv_b = kls
    if kv_a.inp != hidden:
        kv_a, kv_b = kv_b, kv_a
    if kv_a.inp != hidden or vls[0] is not kv_b:
        return None
    kv_norm = _norm_of(norms, kv_b.input)
    if kv_norm is None or g.source(kv_norm.input) is None:
        return None
    kv_lora = kv_b.inp
    rope_dim = kv_a.out - kv_lora
    if rope_dim <= 0:
        return None
    q = qls[-1]
    q_lora = 0
    if q.inp != hidden:
        q_norm = _norm_of(norms, q.input)
        if q_norm is None:
            return None
        q_a = [l for l in linears if l.inp == hidden and l.out == q.inp and
               (l.node is q_norm.input or _outputs_of(g, l) is q_norm.input)]
        if not q_a:
            return None
        q_lora = q.inp
    heads = q_shape[0] // batch if len(q_shape) == 3 else q_shape[1]
    qk_dim, v_dim = q_shape[-1], v_shape[-1]
    nope = qk_dim - rope_dim
    if nope <= 0 or kv_b.out != heads * (nope + v_dim) or \
            q.out != heads * qk_dim:
        return None
    return dict(kind="mla", input=kv_a.input, heads=heads, q_lora_rank=q_lora,
                kv_lora_rank=kv_lora, qk_nope_head_dim=nope,
                qk_rope_head_dim=rope_dim, v_head_dim=v_dim, rope_dim=rope_dim)


def _act(g, node):
    """'silu' / 'gelu' when `node` applies that activation (as an op or
    spelled out: x * sigmoid(x)), else None."""
    for u in g.users[node]:
        if _op(u) == "silu":
            return "silu", u
        if _op(u) == "gelu":
            tanh = u.kwargs.get("approximate", u.args[1] if len(u.args) > 1
                                else "none") == "tanh"
            return ("gelu_pytorch_tanh" if tanh else "gelu"), u
        if _op(u) == "sigmoid":
            for m in g.users[u]:
                if _op(m) == "mul" and node in m.args:
                    return "silu", m
    return None, None


def _gated(g, seg, hidden, error, where):
    """A gated MLP among `seg`'s linears: (gate, up, down, act)."""
    for a in seg:
        act, act_node = _act(g, _outputs_of(g, a))
        if act is None:
            continue
        ups = [b for b in seg if b is not a and b.input is a.input and
               b.out == a.out]
        downs = [d for d in seg if d.inp == a.out and d.out == hidden]
        if ups and downs:
            return a, ups[0], downs[0], act
    raise error("%s: expected a gated MLP (down(act(gate(x)) * up(x)), act "
                "SiLU or GELU); found linears %s" % (
                    where, [(l.param, l.out, l.inp) for l in seg] or "none"))


def _ffn(g, seg, hidden, o, error):
    where = "after %s" % g.describe(o.node)
    routers = []
    for l in seg:
        if l.inp != hidden:
            continue
        out = _outputs_of(g, l)
        region = [u for u in g.nodes if g.index[u] > g.index[out] and
                  _op(u) == "topk"]
        # the router's own top-k: reached from its output through no other
        # linear (a later layer's router is reached through all)
        own = [t for t in region
               if set(g.ancestors_until(t, g.linear_outputs)[1]) == {out}]
        if len(own) > 1:
            raise error("%s: the router %s feeds %d top-k selections (%s): "
                        "group-limited routing (DeepSeek-V3's n_group / "
                        "topk_group) is not recognised yet" % (
                            where, l.param, len(own),
                            ", ".join(g.describe(t) for t in own)))
        if own:
            t = own[0]
            scoring = None
            seen, _ = g.ancestors_until(t, {out})
            for n in seen:
                if _op(n) in ("_softmax", "softmax"):
                    scoring = "softmax"
                if _op(n) == "sigmoid":
                    scoring = "sigmoid"
            routers.append((l, int(t.args[1]), scoring or "softmax", t))
    if not routers:
        gate, up, down, act = _gated(g, seg, hidden, error, where)
        extra = [l for l in seg if l not in (gate, up, down)]
        if extra:
            raise error("%s: a gated MLP and %d more linears (%s): expected "
                        "one MLP per layer" % (where, len(extra),
                                               extra[0].param))
        return {"kind": "dense", "intermediate": gate.out, "act": act}
    router, top_k, scoring, topk = routers[0]
    experts = router.out
    rest = [l for l in seg if l is not router]
    # shared experts read what the router reads; routed ones their tokens
    shared = [l for l in rest if l.input is router.input]
    outs = {_outputs_of(g, l) for l in shared}
    shared += [l for l in rest if l not in shared and l.out == hidden and
               outs and g.ancestors_until(l.input, outs)[1]]
    routed = [l for l in rest if l not in shared]
    gate, up, down, act = _gated(g, routed, hidden, error, where)
    names = {l.param for l in routed}
    odd = [l for l in routed if (l.out, l.inp) not in
           ((gate.out, hidden), (hidden, gate.out))]
    if odd:
        raise error("%s: MoE with %d experts; linear %s (%d x %d) is not an "
                    "expert's gate, up or down projection" % (
                        where, experts, odd[0].param, odd[0].out,
                        odd[0].inp))
    if len(names) > 3 * experts:
        raise error("%s: %d expert projections for a router of %d experts"
                    % (where, len(names), experts))
    shared_i = 0
    if shared:
        s_gate, _, _, s_act = _gated(g, shared, hidden, error,
                                     where + " (shared experts)")
        extra = [l for l in shared if l.out not in (s_gate.out, hidden)]
        if len(shared) != 3 or extra or s_act != act:
            raise error("%s: expected one gated MLP of shared experts beside "
                        "the router; found linears %s" % (
                            where, [(l.param, l.out, l.inp) for l in shared]))
        shared_i = s_gate.out
    # top-k weights renormalised (w / sum(w)) and scaled by a constant
    weights = [u for u in g.users[topk] if _op(u) == "getitem" or
               "getitem" in str(u.target)]
    weights = [u for u in weights if u.args[1:] == (0,)]
    norm_topk, scale = False, 1.0
    if weights:
        seen = set()
        todo = list(g.users[weights[0]])
        while todo:
            u = todo.pop()
            if u in seen:
                continue
            seen.add(u)
            if _op(u) == "div" and hasattr(u.args[1], "op") and \
                    _back_to(g, u.args[1], ("sum",), ("add",)) is not None:
                norm_topk = True
            if _op(u) == "mul" and any(isinstance(a, float) for a in u.args):
                scale = [a for a in u.args if isinstance(a, float)][0]
            if _op(u) in ("div", "mul", "sum", "_to_copy") or \
                    _op(u) in _TRANSPARENT:
                todo.extend(u.users)
    return {"kind": "moe", "intermediate": gate.out, "act": act,
            "experts": experts, "top_k": top_k, "scoring": scoring,
            "shared_intermediate": shared_i, "norm_topk_prob": norm_topk,
            "routed_scaling_factor": scale}
