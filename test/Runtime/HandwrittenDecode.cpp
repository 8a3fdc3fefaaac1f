//===- HandwrittenDecode.cpp - A Helix-sharded decode program by hand -----===//
//
// What the code generator will emit, written by hand against the runtime
// API so the runtime can be proven before codegen exists. It reads a
// Hugging Face config.json (generated code has the model baked in) and
// runs one decode step with Helix sharding on N = KVP x TPA ranks:
//
//   attention  KVP x TPA: every rank projects the full batch to its TPA
//              share of the query / KV heads, appends KV round-robin over
//              the KVP ranks in --kv-block token blocks, attends over its
//              local shard (partial output + log-sum-exp), exchanges the
//              partials in one all-to-all over its KVP group (in
//              --hopb-chunks batch chunks, each chunk's exchange overlapping
//              the next chunk's attention: HOP-B), and recombines exactly.
//              MLA (TPA = 1) attends in the absorbed latent form.
//   o_proj     TP = N (columns of this rank's heads) + all-reduce
//   dense FFN  TP = N + all-reduce
//   MoE        TPF x EP: local experts, intermediate sliced by TPF, shared
//              experts TP = N; all-reduce over TPF, all-gather over EP,
//              local sum
//   embedding / LM head: vocab-parallel (all-reduce / all-gather).
//
//   mpirun -np N helix-handwritten-decode --config C --kvp K --tpa T
//          [--tpf F --ep E] [--kv-block 16] [--hopb-chunks 2]
//          [--context C] + the helix-decode options
//
//===----------------------------------------------------------------------===//

#include "helix/Import/HFConfig.h"
#include "helix/Runtime/Runtime.h"
#ifdef HELIX_HAVE_CUDA
#include "helix/Runtime/CudaBackend.h"
#endif

#include <nlohmann/json.hpp>

#include <cmath>

using namespace helix;
using namespace helix::rt;

namespace {

struct Layout {
  int kvp = 1, tpa = 1, tpf = 0, ep = 1; // tpf 0: N / ep
  int64_t kvBlock = 16;
  int64_t hopbChunks = 2;
  int64_t context = 0; // 0: max_position_embeddings
};

HostTensor transposeLast2(const HostTensor &t) {
  // [..., a, b] -> [..., b, a]
  size_t r = t.shape.size();
  int64_t a = t.shape[r - 2], b = t.shape[r - 1], outer = t.numel() / (a * b);
  HostTensor o;
  o.shape = t.shape;
  std::swap(o.shape[r - 2], o.shape[r - 1]);
  o.data.resize(t.data.size());
  for (int64_t n = 0; n < outer; ++n)
    for (int64_t i = 0; i < a; ++i)
      for (int64_t j = 0; j < b; ++j)
        o.data[(n * b + j) * a + i] = t.data[(n * a + i) * b + j];
  return o;
}

struct Layer {
  const LayerSpec *spec = nullptr;
  Tensor inNorm, postNorm;
  // Standard attention (this rank's TPA share of heads).
  Tensor wq, wk, wv, bq, bk, bv, qNorm, kNorm;
  // MLA (all heads: KVP only).
  Tensor qa, qaBias, qaNorm, qb, kva, kvaBias, kvaNorm, wUK, wUV;
  // After the exchange: this rank's heads.
  Tensor sinks, wo, bo;
  KVCache cache;
  Rope *rope = nullptr;
  // FFN (TP = N) or MoE.
  Tensor gate, up, down, gateB, upB, downB;
  Tensor router, routerBias, correction;
  ExpertWeights experts;
  int64_t firstExpert = 0;
  Tensor sGate, sUp, sDown;
};

class Program {
public:
  Layout L;
  std::string configPath;
  ModelSpec spec;
  nlohmann::json raw;
  int N = 1, rank = 0;
  int kvpIdx = 0, tpaIdx = 0, epIdx = 0, tpfIdx = 0;
  std::vector<int> kvpGroup, tpfGroup, epGroup;
  std::vector<std::unique_ptr<Rope>> ropes;
  std::vector<Layer> layers;
  Tensor embed, finalNorm, lmHead;
  KVPlacement placement;
  Activation ffnAct, moeAct;
  RouterConfig router;

  bool option(const std::string &flag, const std::string &v) {
    auto toInt = [&](const std::string &f) {
      size_t used = 0;
      long long x = 0;
      try {
        x = std::stoll(v, &used);
      } catch (const std::exception &) {
        used = 0;
      }
      if (used != v.size())
        throw Error(f + ": expected an integer, got \"" + v + "\"");
      return x;
    };
    if (flag == "--config")
      configPath = v;
    else if (flag == "--kvp")
      L.kvp = static_cast<int>(toInt(flag));
    else if (flag == "--tpa")
      L.tpa = static_cast<int>(toInt(flag));
    else if (flag == "--tpf")
      L.tpf = static_cast<int>(toInt(flag));
    else if (flag == "--ep")
      L.ep = static_cast<int>(toInt(flag));
    else if (flag == "--kv-block")
      L.kvBlock = toInt(flag);
    else if (flag == "--hopb-chunks")
      L.hopbChunks = toInt(flag);
    else if (flag == "--context")
      L.context = toInt(flag);
    else
      return false;
    return true;
  }

  /// Reads the config and checks that the layout fits the model.
  void validate(DecodeProgram &prog) {
    if (configPath.empty())
      throw Error("--config CONFIG is required");
    std::string err;
    if (!importHFConfigFile(configPath, ImportOptions(), spec, err))
      throw Error(err);
    raw = nlohmann::json::parse(readTextFile(configPath));
    N = L.kvp * L.tpa;
    if (L.tpf == 0)
      L.tpf = N / std::max(1, L.ep);
    auto need = [](bool c, const std::string &m) {
      if (!c)
        throw Error("layout: " + m);
    };
    need(L.kvp >= 1 && L.tpa >= 1 && L.ep >= 1 && L.tpf >= 1,
         "kvp, tpa, tpf and ep must be positive");
    need(L.kvBlock >= 1 && L.hopbChunks >= 1,
         "--kv-block and --hopb-chunks must be positive");
    need(spec.vocabSize % N == 0,
         "vocab " + std::to_string(spec.vocabSize) + " not divisible by N");
    for (const LayerSpec &l : spec.layers) {
      const AttentionSpec &a = l.attention;
      need(a.numHeads % N == 0,
           "query heads not divisible by N = " + std::to_string(N));
      if (a.kind == AttentionKind::MLA)
        need(L.tpa == 1, "MLA has one latent KV head: use tpa = 1");
      else
        need(a.numKVHeads % L.tpa == 0, "KV heads " +
                                            std::to_string(a.numKVHeads) +
                                            " not divisible by tpa");
      if (!l.isMoE) {
        need(l.ffn.intermediate % N == 0,
             "FFN intermediate not divisible by N");
      } else {
        need(L.tpf * L.ep == N, "tpf x ep must equal N = kvp x tpa");
        need(l.moe.numExperts % L.ep == 0, "experts not divisible by ep");
        need(l.moe.expertIntermediate % L.tpf == 0,
             "expert intermediate not divisible by tpf");
        need(l.moe.sharedIntermediate * l.moe.numSharedExperts % N == 0,
             "shared expert intermediate not divisible by N");
      }
    }
    prog.worldSize = N;
    prog.vocabSize = spec.vocabSize;
    prog.maxContext = L.context > 0 ? L.context : spec.maxPositionEmbeddings;
  }

  void load(Context &ctx, const SafetensorsCheckpoint &ck, int64_t batch,
            int64_t maxContext) {
    rank = ctx.rank();
    kvpIdx = rank / L.tpa;
    tpaIdx = rank % L.tpa;
    epIdx = rank / L.tpf;
    tpfIdx = rank % L.tpf;
    for (int j = 0; j < L.kvp; ++j)
      kvpGroup.push_back(tpaIdx + j * L.tpa);
    for (int j = 0; j < L.tpf; ++j)
      tpfGroup.push_back(epIdx * L.tpf + j);
    for (int j = 0; j < L.ep; ++j)
      epGroup.push_back(tpfIdx + j * L.tpf);
    placement = KVPlacement(L.kvp, kvpIdx, L.kvBlock);
    int64_t H = spec.hiddenSize, V = spec.vocabSize, Vl = V / N;
    const std::string &type = spec.modelType;
    auto up = [&](const HostTensor &t) { return ctx.upload(t.data, t.shape); };
    auto whole = [&](const std::string &n, std::vector<int64_t> s) {
      return up(ck.load(n, s));
    };
    auto rows = [&](const std::string &n, std::vector<int64_t> s, int64_t b,
                    int64_t c) { return up(ck.loadRows(n, s, b, c)); };
    auto cols = [&](const std::string &n, std::vector<int64_t> s, int64_t b,
                    int64_t c) { return up(ck.loadColumns(n, s, b, c)); };

    embed = rows("model.embed_tokens.weight", {V, H}, rank * Vl, Vl);
    finalNorm = whole("model.norm.weight", {H});
    lmHead = spec.tieWordEmbeddings
                 ? embed
                 : rows("lm_head.weight", {V, H}, rank * Vl, Vl);

    std::string topkMethod =
        raw.value("topk_method", type == "deepseek_v2" ? "greedy" : "noaux_tc");
    bool deepseek =
        type == "deepseek_v2" || type == "deepseek_v3" || type == "kimi_k2";
    layers.resize(spec.layers.size());
    for (size_t li = 0; li < spec.layers.size(); ++li) {
      const LayerSpec &ls = spec.layers[li];
      const AttentionSpec &a = ls.attention;
      Layer &l = layers[li];
      l.spec = &ls;
      std::string p = "model.layers." + std::to_string(ls.index) + ".";
      std::string s = p + "self_attn.";
      l.inNorm = whole(p + "input_layernorm.weight", {H});
      l.postNorm = whole(p + "post_attention_layernorm.weight", {H});
      int64_t nH = a.numHeads, hN = nH / N;
      // This rank's heads after the exchange.
      int64_t headBase = tpaIdx * (nH / L.tpa) + kvpIdx * hN;

      RopeConfig rc;
      static_cast<RopeParams &>(rc) = a.rope;
      rc.maxPosition = spec.maxPositionEmbeddings;
      rc.rotaryDim = a.kind == AttentionKind::MLA ? a.qkRopeHeadDim : a.headDim;
      rc.interleaved = a.kind == AttentionKind::MLA;
      ropes.push_back(std::make_unique<Rope>(rc));
      l.rope = ropes.back().get();

      KVCacheConfig cc;
      cc.batch = batch;
      cc.capacity = placement.capacity(maxContext);
      if (a.kind == AttentionKind::MLA) {
        int64_t nope = a.qkNopeHeadDim, rd = a.qkRopeHeadDim, R = a.kvLoraRank,
                vd = a.vHeadDim, qk = nope + rd;
        if (a.qLoraRank > 0) {
          l.qa = whole(s + "q_a_proj.weight", {a.qLoraRank, H});
          if (a.qkvBias)
            l.qaBias = whole(s + "q_a_proj.bias", {a.qLoraRank});
          l.qaNorm = whole(s + "q_a_layernorm.weight", {a.qLoraRank});
          l.qb = whole(s + "q_b_proj.weight", {nH * qk, a.qLoraRank});
        } else {
          l.wq = whole(s + "q_proj.weight", {nH * qk, H});
        }
        l.kva = whole(s + "kv_a_proj_with_mqa.weight", {R + rd, H});
        if (a.qkvBias)
          l.kvaBias = whole(s + "kv_a_proj_with_mqa.bias", {R + rd});
        l.kvaNorm = whole(s + "kv_a_layernorm.weight", {R});
        std::string kvb = s + "kv_b_proj.weight";
        std::vector<int64_t> kvbShape = {nH * (nope + vd), R},
                             view = {nH, nope + vd, R};
        // W_UK for every head (the query is absorbed on every KVP rank),
        // W_UV for this rank's heads only.
        l.wUK = up(ck.loadSlice(kvb, kvbShape, {{0, nH}, {0, nope}}, view));
        l.wUV =
            up(ck.loadSlice(kvb, kvbShape, {{headBase, hN}, {nope, vd}}, view));
        l.wo = cols(s + "o_proj.weight", {H, nH * vd}, headBase * vd, hN * vd);
        cc.heads = 1;
        cc.keyDim = R + rd;
        cc.valueDim = R;
        cc.valueInKey = true;
      } else {
        int64_t hd = a.headDim, hq = nH / L.tpa, hk = a.numKVHeads / L.tpa;
        l.wq =
            rows(s + "q_proj.weight", {nH * hd, H}, tpaIdx * hq * hd, hq * hd);
        l.wk = rows(s + "k_proj.weight", {a.numKVHeads * hd, H},
                    tpaIdx * hk * hd, hk * hd);
        l.wv = rows(s + "v_proj.weight", {a.numKVHeads * hd, H},
                    tpaIdx * hk * hd, hk * hd);
        if (a.qkvBias) {
          l.bq = rows(s + "q_proj.bias", {nH * hd}, tpaIdx * hq * hd, hq * hd);
          l.bk = rows(s + "k_proj.bias", {a.numKVHeads * hd}, tpaIdx * hk * hd,
                      hk * hd);
          l.bv = rows(s + "v_proj.bias", {a.numKVHeads * hd}, tpaIdx * hk * hd,
                      hk * hd);
        }
        if (a.qkNorm) {
          l.qNorm = whole(s + "q_norm.weight", {hd});
          l.kNorm = whole(s + "k_norm.weight", {hd});
        }
        if (a.sinks)
          l.sinks = rows(s + "sinks", {nH}, headBase, hN);
        l.wo = cols(s + "o_proj.weight", {H, nH * a.vHeadDim},
                    headBase * a.vHeadDim, hN * a.vHeadDim);
        cc.heads = hk;
        cc.keyDim = hd;
        cc.valueDim = a.vHeadDim;
      }
      if (a.outBias && rank == 0)
        l.bo = whole(s + "o_proj.bias", {H});
      l.cache = makeKVCache(ctx, cc);

      if (!ls.isMoE) {
        int64_t I = ls.ffn.intermediate, Il = I / N;
        l.gate = rows(p + "mlp.gate_proj.weight", {I, H}, rank * Il, Il);
        l.up = rows(p + "mlp.up_proj.weight", {I, H}, rank * Il, Il);
        l.down = cols(p + "mlp.down_proj.weight", {H, I}, rank * Il, Il);
        if (ls.ffn.bias) {
          l.gateB = rows(p + "mlp.gate_proj.bias", {I}, rank * Il, Il);
          l.upB = rows(p + "mlp.up_proj.bias", {I}, rank * Il, Il);
          if (rank == 0)
            l.downB = whole(p + "mlp.down_proj.bias", {H});
        }
        ffnAct = Activation::fromName(ls.ffn.activation);
        continue;
      }
      const MoESpec &m = ls.moe;
      int64_t E = m.numExperts, El = E / L.ep, I = m.expertIntermediate,
              Il = I / L.tpf, e0 = epIdx * El, i0 = tpfIdx * Il;
      l.firstExpert = e0;
      router.topK = m.topK;
      router.normTopkProb = m.normTopkProb;
      router.routedScalingFactor = m.routedScalingFactor;
      router.scoring = m.scoringFunc == "sigmoid" ? RouterConfig::Sigmoid
                                                  : RouterConfig::Softmax;
      if (deepseek && topkMethod != "greedy") {
        router.numGroups = m.nGroup;
        router.topkGroups = m.topkGroup;
        router.groupScore = topkMethod == "group_limited_greedy"
                                ? RouterConfig::GroupMax
                                : RouterConfig::GroupSumTop2;
      }
      if (type == "gpt_oss") {
        std::string x = p + "mlp.experts.";
        moeAct = Activation::gptOss(raw.value("swiglu_limit", 7.0f));
        l.router = whole(p + "mlp.router.weight", {E, H});
        l.routerBias = whole(p + "mlp.router.bias", {E});
        // gate_up_proj [E, H, 2I] interleaves gate (even) and up (odd).
        std::vector<int64_t> gu = {E, H, 2 * I}, guView = {E, H, I, 2};
        HostTensor g =
            ck.loadSlice(x + "gate_up_proj", gu,
                         {{e0, El}, {0, H}, {i0, Il}, {0, 1}}, guView);
        HostTensor u =
            ck.loadSlice(x + "gate_up_proj", gu,
                         {{e0, El}, {0, H}, {i0, Il}, {1, 1}}, guView);
        g.shape = {El, H, Il};
        u.shape = {El, H, Il};
        l.experts.gate = up(transposeLast2(g));
        l.experts.up = up(transposeLast2(u));
        HostTensor d =
            ck.loadSlice(x + "down_proj", {E, I, H}, {{e0, El}, {i0, Il}});
        l.experts.down = up(transposeLast2(d)); // [El, H, Il]
        std::vector<int64_t> gb = {E, 2 * I}, gbView = {E, I, 2};
        HostTensor bg = ck.loadSlice(x + "gate_up_proj_bias", gb,
                                     {{e0, El}, {i0, Il}, {0, 1}}, gbView);
        HostTensor bu = ck.loadSlice(x + "gate_up_proj_bias", gb,
                                     {{e0, El}, {i0, Il}, {1, 1}}, gbView);
        bg.shape = bu.shape = {El, Il};
        l.experts.gateBias = up(bg);
        l.experts.upBias = up(bu);
        l.experts.downBias = rows(x + "down_proj_bias", {E, H}, e0, El);
        continue;
      }
      moeAct = Activation::fromName(m.activation);
      bool mixtral = type == "mixtral";
      std::string x = p + (mixtral ? "block_sparse_moe." : "mlp.");
      l.router = whole(x + "gate.weight", {E, H});
      if (ck.has(x + "gate.e_score_correction_bias"))
        l.correction = whole(x + "gate.e_score_correction_bias", {E});
      HostTensor g, u, d;
      g.shape = u.shape = {El, Il, H};
      d.shape = {El, H, Il};
      for (int64_t j = 0; j < El; ++j) {
        std::string e = x + "experts." + std::to_string(e0 + j) + ".";
        HostTensor gj = ck.loadRows(
            e + (mixtral ? "w1" : "gate_proj") + ".weight", {I, H}, i0, Il);
        HostTensor uj = ck.loadRows(
            e + (mixtral ? "w3" : "up_proj") + ".weight", {I, H}, i0, Il);
        HostTensor dj = ck.loadColumns(
            e + (mixtral ? "w2" : "down_proj") + ".weight", {H, I}, i0, Il);
        g.data.insert(g.data.end(), gj.data.begin(), gj.data.end());
        u.data.insert(u.data.end(), uj.data.begin(), uj.data.end());
        d.data.insert(d.data.end(), dj.data.begin(), dj.data.end());
      }
      l.experts.gate = up(g);
      l.experts.up = up(u);
      l.experts.down = up(d);
      if (m.numSharedExperts > 0) {
        int64_t S = m.sharedIntermediate * m.numSharedExperts, Sl = S / N;
        l.sGate =
            rows(x + "shared_experts.gate_proj.weight", {S, H}, rank * Sl, Sl);
        l.sUp =
            rows(x + "shared_experts.up_proj.weight", {S, H}, rank * Sl, Sl);
        l.sDown =
            cols(x + "shared_experts.down_proj.weight", {H, S}, rank * Sl, Sl);
      }
    }
  }

  /// Partial attention per batch chunk with its exchange started at once
  /// (HOP-B), then the exact recombination: -> [B, hN, valueDim].
  Tensor attendAndExchange(Context &ctx, Layer &l, const Tensor &q, float scale,
                           const std::vector<int64_t> &begin,
                           const std::vector<int64_t> &end,
                           const Tensor *sinks) {
    Communicator &kvp = ctx.group(kvpGroup);
    int64_t B = q.dim(0), hq = q.dim(1), hN = hq / L.kvp;
    int64_t vd = l.cache.config.valueDim;
    int64_t chunks = std::min<int64_t>(L.hopbChunks, B);
    struct Chunk {
      int64_t b0, b1;
      CommRequest out, lse;
    };
    std::vector<Chunk> inFlight;
    for (int64_t c = 0; c < chunks; ++c) {
      int64_t b0 = B * c / chunks, b1 = B * (c + 1) / chunks;
      std::vector<int64_t> cb(begin.begin() + b0, begin.begin() + b1),
          ce(end.begin() + b0, end.begin() + b1);
      AttentionPartial part = attentionPartial(
          ctx, q.rows(b0, b1), l.cache.rows(b0, b1), scale, cb, ce);
      Chunk ch{b0, b1, kvp.allToAllStart(part.out, 1),
               kvp.allToAllStart(part.lse, 1)};
      inFlight.push_back(std::move(ch));
    }
    Tensor o = ctx.empty({B, hN, vd});
    for (Chunk &ch : inFlight) {
      ch.out.wait();
      ch.lse.wait();
      int64_t n = ch.b1 - ch.b0;
      Tensor combined =
          lseCombine(ctx, ch.out.result().view({n, L.kvp, hN, vd}),
                     ch.lse.result().view({n, L.kvp, hN}), sinks);
      Tensor dst = o.rows(ch.b0, ch.b1);
      copyInto(ctx, dst, combined);
    }
    return o;
  }

  Tensor attention(Context &ctx, Layer &l, const Tensor &x,
                   const StepInputs &in) {
    const AttentionSpec &a = l.spec->attention;
    int64_t B = x.dim(0);
    std::vector<int64_t> slots = placement.appendSlots(in.positions), begin,
                         end;
    placement.attendRange(in.contextLengths, a.slidingWindow, begin, end);
    Tensor o;
    int64_t hN = a.numHeads / N;
    if (a.kind == AttentionKind::MLA) {
      int64_t nH = a.numHeads, nope = a.qkNopeHeadDim, rd = a.qkRopeHeadDim,
              R = a.kvLoraRank, qk = nope + rd;
      Tensor q = a.qLoraRank > 0
                     ? linear(ctx,
                              rmsNorm(ctx, linear(ctx, x, l.qa, &l.qaBias),
                                      l.qaNorm, 1e-6f),
                              l.qb)
                     : linear(ctx, x, l.wq);
      q = q.view({B, nH, qk});
      Tensor qLat = headMatmul(ctx, sliceLast(ctx, q, 0, nope), l.wUK,
                               /*transposeW=*/true);
      Tensor qFull = concatLast(ctx, qLat, sliceLast(ctx, q, nope, rd));
      Tensor kva = linear(ctx, x, l.kva, &l.kvaBias);
      Tensor latent = rmsNorm(ctx, sliceLast(ctx, kva, 0, R), l.kvaNorm, 1e-6f);
      Tensor kPe = sliceLast(ctx, kva, R, rd).view({B, 1, rd});
      Tensor key = concatLast(ctx, latent.view({B, 1, R}), kPe);
      // RoPE on the rope dims of q and the key, and the key appended: one
      // launch on the CUDA backend.
      ropeKvAppend(ctx, qFull, key, nullptr, &l.cache, slots, in.positions,
                   *l.rope, /*offset=*/R);
      float scale = static_cast<float>(l.rope->softmaxScaleMultiplier() /
                                       std::sqrt(static_cast<double>(qk)));
      Tensor oLat =
          attendAndExchange(ctx, l, qFull, scale, begin, end, nullptr);
      o = headMatmul(ctx, oLat, l.wUV).view({B, hN * a.vHeadDim});
    } else {
      int64_t hd = a.headDim, hq = a.numHeads / L.tpa,
              hk = a.numKVHeads / L.tpa;
      Tensor q = linear(ctx, x, l.wq, &l.bq).view({B, hq, hd});
      Tensor k = linear(ctx, x, l.wk, &l.bk).view({B, hk, hd});
      Tensor v = linear(ctx, x, l.wv, &l.bv).view({B, hk, hd});
      if (a.qkNorm) {
        q = rmsNorm(ctx, q, l.qNorm, static_cast<float>(spec.rmsNormEps));
        k = rmsNorm(ctx, k, l.kNorm, static_cast<float>(spec.rmsNormEps));
      }
      ropeKvAppend(ctx, q, k, &v, &l.cache, slots, in.positions, *l.rope);
      float scale =
          static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
      o = attendAndExchange(ctx, l, q, scale, begin, end, &l.sinks)
              .view({B, hN * a.vHeadDim});
    }
    Tensor out = linear(ctx, o, l.wo, &l.bo);
    ctx.world().allReduceSum(out);
    return out;
  }

  Tensor ffn(Context &ctx, Layer &l, const Tensor &x) {
    if (!l.spec->isMoE) {
      Tensor h = gatedActivation(ctx, linear(ctx, x, l.gate, &l.gateB),
                                 linear(ctx, x, l.up, &l.upB), ffnAct);
      Tensor y = linear(ctx, h, l.down, &l.downB);
      ctx.world().allReduceSum(y);
      return y;
    }
    Tensor logits = linear(ctx, x, l.router, &l.routerBias);
    Routing r = moeRoute(ctx, logits, router, &l.correction);
    Tensor y = moeExperts(ctx, x, r, l.experts, l.firstExpert, moeAct,
                          /*addDownBias=*/tpfIdx == 0);
    if (l.sGate.defined()) {
      Tensor h = gatedActivation(ctx, linear(ctx, x, l.sGate),
                                 linear(ctx, x, l.sUp), moeAct);
      addInPlace(ctx, y, linear(ctx, h, l.sDown));
    }
    ctx.group(tpfGroup).allReduceSum(y);                     // intra-expert
    return sumLeading(ctx, ctx.group(epGroup).allGather(y)); // inter-expert
  }

  Tensor step(Context &ctx, const StepInputs &in) {
    int64_t B = static_cast<int64_t>(in.tokens.size());
    int64_t Vl = spec.vocabSize / N;
    float eps = static_cast<float>(spec.rmsNormEps);
    Tensor h = embedding(ctx, embed, in.tokens, rank * Vl);
    ctx.world().allReduceSum(h);
    // The residual adds fused with the norm that follows them.
    Tensor x = rmsNorm(ctx, h, layers.front().inNorm, eps);
    for (size_t i = 0; i < layers.size(); ++i) {
      Layer &l = layers[i];
      AddNorm a = addRmsNorm(ctx, h, attention(ctx, l, x, in), l.postNorm, eps);
      const Tensor &next =
          i + 1 < layers.size() ? layers[i + 1].inNorm : finalNorm;
      AddNorm f = addRmsNorm(ctx, a.sum, ffn(ctx, l, a.normed), next, eps);
      h = f.sum;
      x = f.normed;
    }
    Tensor local = linear(ctx, x, lmHead);
    Tensor all = ctx.world().allGather(local); // [N, B, V/N]
    return swapAxes01(ctx, all).view({B, spec.vocabSize});
  }
};

} // namespace

int main(int argc, char **argv) {
#ifdef HELIX_HAVE_CUDA
  registerCudaBackend();
#endif
  Program p;
  DecodeProgram prog;
  prog.name = "helix-handwritten-decode";
  prog.optionsHelp =
      "         --config CONFIG --kvp K --tpa T [--tpf F] [--ep E]\n"
      "         [--kv-block 16] [--hopb-chunks 2] [--context C]\n";
  prog.option = [&](const std::string &f, const std::string &v) {
    return p.option(f, v);
  };
  prog.validate = [&](int) { p.validate(prog); };
  prog.load = [&](Context &ctx, const SafetensorsCheckpoint &ck,
                  int64_t batch) { p.load(ctx, ck, batch, prog.maxContext); };
  // Communicators are created collectively once every rank has loaded.
  prog.prepare = [&](Context &ctx) {
    ctx.world();
    ctx.group(p.kvpGroup);
    ctx.group(p.tpfGroup);
    ctx.group(p.epGroup);
  };
  prog.step = [&](Context &ctx, const StepInputs &in) {
    return p.step(ctx, in);
  };
  return runDecode(argc, argv, prog);
}
