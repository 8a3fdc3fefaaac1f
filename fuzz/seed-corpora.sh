#!/usr/bin/env bash
# Regenerates the committed seed corpora fuzz/corpus/TARGET from the test
# inputs, minimized with libFuzzer's -merge=1 (keeps the inputs that add
# coverage). Maintainers run it when the test inputs change; scripts/fuzz.sh
# --merge folds what fuzzing found into the same directories.
#
#   fuzz/seed-corpora.sh [TARGET...]
#
# Needs the fuzz build (scripts/fuzz.sh --build-only) and helix-opt and
# helix-make-checkpoint of a normal build (${HELIX_BUILD_DIR:-build}).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fuzzbin=${HELIX_FUZZ_BUILD_DIR:-$root/build-fuzz}/fuzz/bin
tools=${HELIX_BUILD_DIR:-$root/build}/bin
targets=("$@")
[ ${#targets[@]} -gt 0 ] ||
  targets=(import hardware cost pass-options mlir safetensors prompts)
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
cd "$root"

seed_import() {
  find test/Inputs/models test/Inputs/bad test/Runtime/Inputs -maxdepth 1 \
    -type f -name '*.json' -exec cp {} "$1"/ \;
}

seed_hardware() {
  cp data/hardware/*.json test/Inputs/hardware/*.json "$1"/
  # "base" overrides: one figure, a nested table, a renamed preset.
  printf '%s' '{"base": "gb200-nvl72", "name": "slow", "memory": {"hbm_bandwidth_tb_per_s": {"value": 4.0, "source": "what-if"}}}' > "$1/base-memory.json"
  printf '%s' '{"base": "h100", "collectives": {"all_reduce": {"alpha_us": [{"gpus": 2, "value": 5, "source": "s"}, {"gpus": 8, "value": 9, "source": "s"}]}}}' > "$1/base-alpha.json"
  printf '%s' '{"base": "b200", "interconnect": {"nvlink_domain_gpus": {"value": 16, "source": "s"}}, "compute": {"peak_dense_pflops": {"fp4": {"value": null, "source": "s"}}}}' > "$1/base-nofp4.json"
}

seed_cost() {
  # Layouts the tests use, each with a few parameter tails (model, preset,
  # strategy, numbers).
  local i=0 layout tail
  grep -rhoE '(kvp|tpa|tpf|ep|pp|dp)=[0-9]+(,(kvp|tpa|tpf|ep|pp|dp)=[0-9]+)*' \
    test unittests docs | sort -u | head -60 |
    while read -r layout; do
      for tail in '' '\001\001\001' '\002\003\004\005\006\007' \
        '\007\000\004\000\000\000\000\000\000\000\020'; do
        printf '%s\0'"$tail" "$layout" > "$1/layout-$i"
        i=$((i + 1))
      done
    done
  # No layout: one the search enumerates (model, preset, strategy, numbers
  # and the GPU count from the tail).
  for i in 1 2 3 4 5 6 7 8; do
    head -c $((8 + 4 * i)) /dev/urandom > "$1/enumerated-$i.tail"
    { printf '\0'; cat "$1/enumerated-$i.tail"; } > "$1/enumerated-$i"
    rm "$1/enumerated-$i.tail"
  done
}

seed_pass_options() {
  # --helix-...=OPTIONS of the RUN lines, as "NAME OPTIONS".
  grep -rhoE -- "--(helix-[a-z-]+|convert-helix-to-emitc)(=(\"[^\"]*\"|'[^']*'|[^ ]+))?" \
    test | sed -E "s/^--//; s/=/ /; s/^([^ ]+) [\"']/\1 /; s/[\"']$//" |
    sort -u | awk -v d="$1" '{ f = d "/opt-" NR; printf "%s", $0 > f; close(f) }'
}

seed_mlir() {
  # Every test file, split at "// -----", without the RUN/CHECK comments;
  # and the three test models at each stage of the pipeline.
  python3 - "$1" <<'EOF'
import glob, hashlib, os, re, sys
out = sys.argv[1]
for f in glob.glob('test/**/*.mlir', recursive=True):
    for part in re.split(r'^// -----\s*$', open(f).read(), flags=re.M):
        lines = [l for l in part.splitlines()
                 if not re.match(r'\s*//\s*([A-Z0-9-]+(-[A-Z]+)?:)', l)]
        body = '\n'.join(lines).strip() + '\n'
        if body.strip():
            name = hashlib.sha1(body.encode()).hexdigest()[:16]
            open(os.path.join(out, name + '.mlir'), 'w').write(body)
EOF
  local m layout
  for m in gqa:"kvp=2,tpa=2,tpf=4 batch=4 context=8192" \
    mla-moe:"kvp=4,tpa=1,tpf=2,ep=2 batch=2 context=4096" \
    swa:"kvp=4,tpa=2,tpf=2,ep=4 batch=2 context=8192"; do
    layout=${m#*:}
    m=${m%%:*}
    "$tools/helix-opt" "test/Transforms/Inputs/$m.mlir" \
      --helix-apply-layout="layout=$layout" -o "$1/$m-planned.mlir"
    "$tools/helix-opt" "$1/$m-planned.mlir" --helix-insert-collectives \
      --helix-hopb --helix-kv-placement -o "$1/$m-placed.mlir"
    "$tools/helix-opt" "$1/$m-placed.mlir" --helix-partition \
      --helix-resident-formats -o "$1/$m-rank.mlir"
  done
}

seed_safetensors() {
  python3 fuzz/make_safetensors_seeds.py "$1"
  # Checkpoints helix-make-checkpoint writes for a micro model, in each
  # stored format (the larger ones are left to the merge to keep or drop).
  local cfg=$raw/micro-llama.json cfgmx=$raw/micro-gpt-oss.json f ck
  printf '%s' '{"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "intermediate_size": 32, "vocab_size": 16, "max_position_embeddings": 64, "tie_word_embeddings": true, "torch_dtype": "bfloat16"}' > "$cfg"
  printf '%s' '{"model_type": "gpt_oss", "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "sliding_window": 8, "layer_types": ["sliding_attention"], "num_local_experts": 2, "num_experts_per_tok": 1, "intermediate_size": 32, "vocab_size": 16, "max_position_embeddings": 64, "torch_dtype": "bfloat16"}' > "$cfgmx"
  for f in bf16 fp8-block fp8-tensor nvfp4; do
    ck=$raw/ck-$f
    "$tools/helix-make-checkpoint" --config "$cfg" -o "$ck" --format "$f" > /dev/null
    cp "$ck/model.safetensors" "$1/micro-llama-$f.safetensors"
  done
  "$tools/helix-make-checkpoint" --config "$cfgmx" -o "$raw/ck-mx" --format mxfp4 > /dev/null
  cp "$raw/ck-mx/model.safetensors" "$1/micro-gpt-oss-mxfp4.safetensors"
}

seed_prompts() {
  cp test/Runtime/Inputs/*.txt test/Codegen/Inputs/*.txt "$1"/
}

for t in "${targets[@]}"; do
  mkdir -p "$raw/$t" "fuzz/corpus/$t"
  "seed_${t//-/_}" "$raw/$t"
  merged=$(mktemp -d)
  "$fuzzbin/helix-fuzz-$t" -merge=1 -rss_limit_mb=2560 -timeout=30 \
    "$merged" "$raw/$t" "fuzz/corpus/$t" > "$raw/$t.merge.log" 2>&1 ||
    { tail -30 "$raw/$t.merge.log"; exit 1; }
  rm -f "fuzz/corpus/$t"/*
  cp "$merged"/* "fuzz/corpus/$t"/
  rm -rf "$merged"
  echo "seed-corpora: $t: $(ls "$raw/$t" | wc -l) seeds -> $(ls "fuzz/corpus/$t" | wc -l) files, $(du -sk "fuzz/corpus/$t" | cut -f1) KiB"
done
