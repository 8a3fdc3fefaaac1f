#!/usr/bin/env bash
# The device run of helix's bundle (scripts/gpu-bundle.sh; docs/gpu.md,
# "Measured on a GPU"). On a machine with an NVIDIA GPU, its driver and the
# CUDA toolkit's libraries (cudart, cuBLAS; NCCL from the toolkit or a
# Python package), and Python 3; nothing else of helix's:
#
#   gpu-bundle/run.sh [STEP...]        (default: every step, in this order)
#
#   env        the GPU, driver, toolkit and the libraries each binary loads
#              (a missing one fails the step)
#   kernels    the CUDA backend's kernel tests (HelixRuntimeCudaTests)
#   cases      the generated programs of test/Codegen/gpu-cases.txt against
#              helix-reference (codegen_e2e.py --run-only)
#   bandwidth  helix-bench-kernels-gpu --measure: each streaming kernel's
#              achieved bandwidth against a device-to-device copy
#   decode-NAME  a 1-GPU program of decode-cases.txt: its checkpoint written
#              here (helix-make-checkpoint --fast), its step timed by
#              helix-bench-decode against the plan priced for this GPU
#   calibrate  helix-calibrate-gpu: the measurements `helix calibrate
#              --measurements FILE` fits into data/hardware/measured/
#
# Everything lands in $OUT (default ./gpu-bundle-out): STEP.txt (its
# output), STEP.json where it writes one, summary.txt. Each step prints its
# elapsed time; no step starts after $HELIX_BUNDLE_BUDGET_S seconds (420,
# 7 minutes), and each has its own time limit, cut to end by
# $HELIX_BUNDLE_DEADLINE_S (the budget + 120). $HELIX_BUNDLE_PACK names a
# .tar.gz of $OUT written after every step (for a caller that can fetch
# only a few files, and keeps what was done if the run is killed). Without
# a GPU each step says so in one line (status no-gpu). Exit status: the
# number of failed steps.
set -uo pipefail
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/gpu-bundle-out}
mkdir -p "$out" && out=$(cd "$out" && pwd)
budget=${HELIX_BUNDLE_BUDGET_S:-420}
deadline=${HELIX_BUNDLE_DEADLINE_S:-$((budget + 120))}
pack=${HELIX_BUNDLE_PACK:-}
unpack=${HELIX_BUNDLE_DIR:-/tmp}
summary=$out/summary.txt
: > "$summary"

elapsed() { echo $(($(date +%s) - t0)); }
note() { echo "$*" | tee -a "$summary"; }

# --- The payload ------------------------------------------------------------
b=$unpack/helix-bundle
if [ ! -f "$b/.unpacked" ] || [ "$here/payload.tar.xz" -nt "$b/.unpacked" ]; then
  rm -rf "$b"
  mkdir -p "$unpack"
  if command -v xz > /dev/null && command -v tar > /dev/null; then
    tar -C "$unpack" -xJf "$here/payload.tar.xz"
  else
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
      "$here/payload.tar.xz" "$unpack"
  fi || { note "run.sh: cannot unpack $here/payload.tar.xz into $unpack"; exit 1; }
  touch "$b/.unpacked"
fi
[ -f "$here/MANIFEST" ] && cp "$here/MANIFEST" "$out/MANIFEST"

# --- The environment: the bundle's libraries first, then the device's CUDA --
find_lib() { # the folder holding library $1 on this machine, if any
  local d
  for d in ${CUDA_HOME:+$CUDA_HOME/lib64 $CUDA_HOME/lib} /usr/local/cuda/lib64 \
    /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
    /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
    [ -e "$d/$1" ] && { echo "$d"; return; }
  done
  # Python wheels (nvidia-nccl-cu13, nvidia-cublas, ...): PyTorch's.
  find /opt /usr/local /usr/lib /usr/lib64 /root -xdev -name "$1" 2> /dev/null |
    grep -m1 . | xargs -r dirname
}
cuda_dirs=""
for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  d=$(find_lib "$lib")
  [ -n "$d" ] && case ":$cuda_dirs:" in *":$d:"*) ;; *) cuda_dirs=$cuda_dirs:$d ;; esac
done
export LD_LIBRARY_PATH=$b/lib$cuda_dirs
export PATH=$b/mpi/bin:$b/bin:$PATH
export OPAL_PREFIX=$b/mpi
export PMIX_MCA_mca_base_component_path=$b/mpi/pmix
# The settings Debian's openmpi-mca-params.conf makes, for the plugins
# shipped: one node, shared memory.
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_mtl=^ofi,psm,psm2
export OMPI_MCA_osc=^ucx,pt2pt OMPI_MCA_btl_base_warn_component_unused=0
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_mca_base_component_show_load_errors=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One node, no ssh: the launcher that starts local processes only.
export OMPI_MCA_plm=isolated
export PYTHONUNBUFFERED=1
mpirun_np() { mpirun --oversubscribe -np "$@"; }

gpus=$("$b/bin/helix-bench-kernels-gpu" --devices 2> "$out/.devices.err" || echo 0)
no_gpu_why=$(tail -1 "$out/.devices.err" | sed 's/^helix-bench-kernels-gpu: //')
rm -f "$out/.devices.err"
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
case $(echo "$gpu_name" | tr a-z A-Z) in
*H200*) preset=h200 ;; *H100*) preset=h100 ;; *B200* | *GB200*) preset=b200 ;;
*) preset=h100 ;;
esac

failed=0
# step NAME LIMIT_S COMMAND...: runs it (output in $out/NAME.txt and on
# stdout) unless the budget is spent; status ok / FAILED / no-gpu (exit 77)
# / skipped.
step() {
  local name=$1 limit=$2 rc s
  shift 2
  s=$(date +%s)
  if [ "$(elapsed)" -ge "$budget" ]; then
    note "== $name: skipped (the budget of ${budget} s is spent at $(elapsed) s)"
    return
  fi
  [ $((deadline - $(elapsed))) -lt "$limit" ] && limit=$((deadline - $(elapsed)))
  echo "== $name (at $(elapsed) s, limit ${limit} s)"
  # (The step functions run in a child bash: timeout needs a program.)
  timeout -k 10 "$limit" bash -c '"$@"' _ "$@" > "$out/$name.txt" 2>&1
  rc=$?
  tail -n 25 "$out/$name.txt"
  case $rc in
  0) status=ok ;;
  77) status=no-gpu ;;
  124 | 137) status="FAILED (over its ${limit} s)"; failed=$((failed + 1)) ;;
  *) status="FAILED (exit $rc)"; failed=$((failed + 1)) ;;
  esac
  note "== $name: $status, $(($(date +%s) - s)) s (total $(elapsed) s)"
  packup
}
packup() {
  [ -n "$pack" ] && tar -czf "$pack" -C "$(dirname "$out")" "$(basename "$out")" 2> /dev/null
  return 0
}
need_gpu() { # the one line of a step that needs a GPU where there is none
  if [ "$gpus" -lt 1 ] 2> /dev/null || [ -z "$gpus" ]; then
    echo "$1: no CUDA GPU ($no_gpu_why); nothing run"
    return 1
  fi
}

# --- Steps ---------------------------------------------------------------------
do_env() {
  echo "bundle: $(head -1 "$out/MANIFEST" 2> /dev/null)"
  echo "machine: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ {print int($2/1048576) " GiB"}' /proc/meminfo)"
  nvidia-smi 2>&1 || echo "nvidia-smi: not found or failed"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv 2>&1 || true
  nvcc --version 2>&1 | tail -2 || echo "nvcc: not found"
  echo "CUDA libraries from: ${cuda_dirs#:}"
  echo "GPUs in view: $gpus ${no_gpu_why:+($no_gpu_why)}; plans priced for: $preset"
  local bad=0 f miss
  # (glibc's loader lists what a binary loads: no ldd needed.)
  ldso=$(ls /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 2> /dev/null | head -1)
  while read -r f; do
    miss=$("$ldso" --list "$f" 2>&1 | grep "not found")
    if [ -n "$miss" ]; then
      echo "MISSING for ${f#$b/}: $miss"
      bad=1
    fi
  done < <(find "$b" -type f \( -perm -u+x -o -name '*.so*' \) -exec sh -c \
    'head -c 4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
  "$ldso" --list "$b/bin/helix-calibrate-gpu" | grep -E "cuda|cublas|nccl|stdc"
  echo "libraries: $([ $bad = 0 ] && echo 'every binary resolves every library' || echo 'some are missing (above)')"
  mpirun --version 2>&1 | head -1
  for t in helix-make-checkpoint helix-reference; do
    "$t" --help > /dev/null 2>&1 && echo "$t: runs" || { echo "$t: does not run"; bad=1; }
  done
  # The bundle's MPI with several ranks: the first case's program on its
  # CPU backend (no GPU needed), a tiny checkpoint.
  local name config e2e compile np w=/tmp/helix-bundle-mpi-check
  IFS='|' read -r name config e2e compile < "$b/cases/cases.txt"
  np=$(echo "$compile" | sed -n 's/.*--gpus \([0-9]*\).*/\1/p')
  rm -rf "$w" && mkdir -p "$w"
  seq 1 4 | awk '{print $1 ", 2, 3"}' > "$w/prompts.txt"
  if helix-make-checkpoint --config "$(echo "$config" | sed "s|@TEST@|$b/test|")" \
      -o "$w/ckpt" > /dev/null &&
    mpirun_np "$np" "$b/cases/$name/project/build/helix-decode" --weights \
      "$w/ckpt" --prompts "$w/prompts.txt" --steps 2 --backend cpu \
      > "$w/log" 2>&1; then
    echo "mpi: $np ranks of case $name decoded on the CPU backend: $(grep -c '^row' "$w/log") rows"
  else
    echo "mpi: $np ranks of case $name did not run:"; tail -20 "$w/log"; bad=1
  fi
  rm -rf "$w"
  return $bad
}

do_kernels() {
  need_gpu kernels || {
    # Without a GPU the suite's own skip is the proof that it loads.
    mpirun_np 1 HelixRuntimeCudaTests --gtest_brief=1 2>&1 | tail -3
    return 77
  }
  mpirun_np 1 HelixRuntimeCudaTests --gtest_output=json:"$out/kernels.json"
}

do_cases() {
  need_gpu cases || return 77
  local bad=0 name config e2e compile sub r
  while IFS='|' read -r name config e2e compile; do
    sub() { echo "$1" | sed "s|@TEST@|$b/test|g"; }
    s=$(date +%s)
    python3 "$b/test/Codegen/codegen_e2e.py" --bin "$b/bin" --prefix none \
      --config "$(sub "$config")" --work "$b/cases/$name" $(sub "$e2e") \
      --backend cuda --gpu --run-only -- $compile < /dev/null > "$out/case-$name.txt" 2>&1
    r=$?
    [ $r = 0 ] || bad=$((bad + 1))
    echo "case $name: $([ $r = 0 ] && echo ok || echo "FAILED (exit $r)"), $(($(date +%s) - s)) s; $(grep -E 'tokens identical|max \|diff\||FAIL' "$out/case-$name.txt" | tail -2 | tr '\n' ' ')"
  done < "$b/cases/cases.txt"
  return $bad
}

do_bandwidth() {
  need_gpu bandwidth || return 77
  helix-bench-kernels-gpu --measure --json "$out/bandwidth.json"
}

do_calibrate() {
  need_gpu calibrate || return 77
  helix-calibrate-gpu -o "$out/measurements.json"
}

# Checkpoints go where there is room: /dev/shm (memory) or the disk.
scratch() {
  local best=/tmp bestfree=0 d free
  for d in /dev/shm /tmp "$unpack"; do
    free=$(df -Pk "$d" 2> /dev/null | awk 'NR == 2 {print $4}')
    [ -n "$free" ] && [ "$free" -gt "$bestfree" ] && { best=$d; bestfree=$free; }
  done
  echo "$best/helix-bundle-ckpt"
}
ckpt_dir=$(scratch)
do_decode() { # do_decode NAME
  local name=$1 model format batch options d ck
  need_gpu "decode-$name" || return 77
  IFS='|' read -r _ model format batch options < <(grep "^$name|" "$b/decode/cases.txt")
  d=$b/decode/$name
  ck=$ckpt_dir/$(echo "$model-$format" | tr -c 'A-Za-z0-9.\n-' _)
  if [ ! -f "$ck/model.safetensors" ]; then
    rm -rf "$ckpt_dir"
    mkdir -p "$ckpt_dir"
    echo "writing the checkpoint ($model, $format) into $ck"
    local s=$(date +%s)
    helix-make-checkpoint --config "$d/config.json" -o "$ck" --format "$format" \
      --fast || return 1
    echo "checkpoint written in $(($(date +%s) - s)) s"
  fi
  seq 1 "$batch" | awk '{print 1000 + $1 ", 17, 42, 7"}' > "$out/.prompts-$name.txt"
  helix-bench-decode --project "$d" --program "$d/helix-decode" \
    --plan "$d/plan-$preset.json" --weights "$ck" \
    --prompts "$out/.prompts-$name.txt" --steps 48 \
    --json "$out/decode-$name.json" -- --step-timeout 120
}

export b out gpus no_gpu_why preset cuda_dirs ckpt_dir
export -f need_gpu mpirun_np do_env do_kernels do_cases do_bandwidth \
  do_calibrate do_decode

all_steps="env kernels cases bandwidth"
decode_names=$(cut -d'|' -f1 "$b/decode/cases.txt")
first_decodes=$(echo "$decode_names" | grep -E '^(llama8b|dsv2lite)-bf16' | tr '\n' ' ')
later_decodes=$(echo "$decode_names" | grep -Ev '^(llama8b|dsv2lite)-bf16' | tr '\n' ' ')
for n in $first_decodes; do all_steps="$all_steps decode-$n"; done
all_steps="$all_steps calibrate"
for n in $later_decodes; do all_steps="$all_steps decode-$n"; done

if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'
  echo "steps: $all_steps"
  exit 0
fi
steps=${*:-$all_steps}
note "helix device run: $(date -u +%Y-%m-%dT%H:%MZ), ${gpu_name:-no GPU}, steps: $steps"
for s in $steps; do
  case $s in
  env) step env 60 do_env ;;
  kernels) step kernels 240 do_kernels ;;
  cases) step cases 300 do_cases ;;
  bandwidth) step bandwidth 180 do_bandwidth ;;
  calibrate) step calibrate 300 do_calibrate ;;
  decode-*)
    if echo "$decode_names" | grep -qx "${s#decode-}"; then
      step "$s" 240 do_decode "${s#decode-}"
    else
      note "== $s: FAILED (no such decode case; $decode_names)"
      failed=$((failed + 1))
    fi
    ;;
  *) note "== $s: FAILED (no such step; run.sh -h)"; failed=$((failed + 1)) ;;
  esac
done
rm -rf "$ckpt_dir" "$out"/.prompts-*.txt
packup
echo
echo "=== summary ($(elapsed) s; results in $out)"
grep -E '^(==|helix device run)' "$summary" | sed 's/^== //'
for f in "$out"/decode-*.txt; do
  [ -f "$f" ] && grep -h "helix-bench-decode:" "$f" | sed 's|/tmp/helix-bundle/decode/||'
done
grep -h "^  device-to-device\|^attention.*K tokens" "$out/bandwidth.txt" 2> /dev/null | head -30
exit "$failed"
