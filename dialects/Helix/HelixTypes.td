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

#endif // HELIX_TYPES_TD
