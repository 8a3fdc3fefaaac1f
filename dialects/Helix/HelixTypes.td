//===- HelixTypes.td - helix types -------------------------*- tablegen -*-===//

#ifndef HELIX_TYPES_TD
#define HELIX_TYPES_TD

include "HelixDialect.td"
include "HelixAttributes.td"
include "mlir/IR/AttrTypeBase.td"

def Helix_KVCacheType : TypeDef<Helix_Dialect, "KVCache"> {
  let mnemonic = "kv_cache";
  let summary = "The KV cache of one attention layer";
  let description = [{
    The KV cache of one layer for the whole batch: `heads` KV heads of
    `key_dim` key values and `value_dim` value values per token. For MLA
    (`latent = true`) there is one head whose `key_dim` values per token are
    the compressed latent plus the decoupled RoPE key, and values are the
    first `value_dim` (= kv_lora_rank) of them, not stored separately.
    `window` > 0 bounds the tokens kept (sliding-window layers). The context
    length is a workload choice, not part of the type.

    ```mlir
    !helix.kv_cache<heads = 8, key_dim = 128, value_dim = 128, element = bf16>
    !helix.kv_cache<heads = 1, key_dim = 576, value_dim = 512, element = bf16, latent = true>
    ```
  }];
  let parameters = (ins
    "int64_t":$heads,
    "int64_t":$key_dim,
    "int64_t":$value_dim,
    "Type":$element,
    Helix_BoolParameter<"MLA latent cache">:$latent,
    Helix_I64Parameter<"sliding window (0: full)", "0">:$window
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Values stored per token (all heads).
    int64_t getValuesPerToken() const {
      return getLatent() ? getKeyDim() : getHeads() * (getKeyDim() + getValueDim());
    }
  }];
}

def Helix_RecurrentStateType : TypeDef<Helix_Dialect, "RecurrentState"> {
  let mnemonic = "recurrent_state";
  let summary = "The fixed-size state of one recurrent layer";
  let description = [{
    The state a linear-attention or Mamba-2 layer carries from token to
    token, per request, whatever the context: `heads` matrices of `rows` x
    `cols` values of `element` (linear attention: value heads x key dim x
    value dim; Mamba-2: heads x head dim x state size), plus the last
    `conv_kernel` - 1 inputs of its causal convolution over `conv_channels`
    channels (in the activations' type).

    ```mlir
    !helix.recurrent_state<heads = 64, rows = 128, cols = 128, conv_channels = 12288,
                           conv_kernel = 4, element = f32>
    ```
  }];
  let parameters = (ins
    "int64_t":$heads,
    "int64_t":$rows,
    "int64_t":$cols,
    "int64_t":$conv_channels,
    "int64_t":$conv_kernel,
    "Type":$element
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// State values of one request (without the convolution's inputs).
    int64_t getStateValues() const { return getHeads() * getRows() * getCols(); }
  }];
}

def Helix_IndexCacheType : TypeDef<Helix_Dialect, "IndexCache"> {
  let mnemonic = "index_cache";
  let summary = "The index keys of one DeepSeek-sparse-attention layer";
  let description = [{
    One `head_dim`-value index key per cached token (FP8 values and one FP32
    scale per key), for the whole batch; the lightning indexer scores them.
    Under KV parallelism they are sharded with the KV cache, round-robin.

    ```mlir
    !helix.index_cache<head_dim = 128>
    ```
  }];
  let parameters = (ins "int64_t":$head_dim);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // HELIX_TYPES_TD
