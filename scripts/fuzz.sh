#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang, ASan + UBSan, the helix
# libraries instrumented for coverage) in ${HELIX_FUZZ_BUILD_DIR:-build-fuzz}
# and runs them (docs/robustness.md, "Fuzzing"; fuzz/README.md).
#
#   scripts/fuzz.sh [TARGET...] [--seconds N] [--regression] [--merge]
#                   [--build-only] [--list]
#
# TARGET: import hardware cost pass-options mlir safetensors prompts (default:
# all). Without --regression each target fuzzes for N seconds (default 60)
# over a working copy of its corpus (build-fuzz/fuzz/work/TARGET, kept
# between runs); what it finds is written to build-fuzz/fuzz/artifacts/TARGET/.
# --regression replays the committed corpus and regression inputs once
# (fuzz/corpus/TARGET, fuzz/regressions/TARGET): fast, for CI. --merge folds
# the working corpus into fuzz/corpus/TARGET (minimized with -merge=1).
# Exits non-zero when any target crashes, leaks, hangs, runs out of memory or
# trips a sanitizer or an oracle.
#
# Needs clang and libFuzzer (Debian 12: clang, libclang-rt-dev), installed
# when missing, plus what scripts/setup.sh installs. HELIX_FUZZ_JOBS sets the
# build's parallelism (default: nproc).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HELIX_FUZZ_BUILD_DIR:-$root/build-fuzz}
all_targets=(import hardware cost pass-options mlir safetensors prompts)

targets=()
seconds=60
mode=fuzz
merge=0
while [ $# -gt 0 ]; do
  case "$1" in
  --seconds)
    seconds=${2:?--seconds needs a number}
    shift
    ;;
  --seconds=*) seconds=${1#--seconds=} ;;
  --regression) mode=regression ;;
  --merge) merge=1 ;;
  --build-only) mode=build ;;
  --list)
    printf '%s\n' "${all_targets[@]}"
    exit 0
    ;;
  -h | --help)
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  -*)
    echo "fuzz.sh: unknown option $1" >&2
    exit 2
    ;;
  *)
    if [[ " ${all_targets[*]} " != *" $1 "* ]]; then
      echo "fuzz.sh: unknown target '$1' (expected: ${all_targets[*]})" >&2
      exit 2
    fi
    targets+=("$1")
    ;;
  esac
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "fuzz.sh: --seconds: expected a positive number of seconds" >&2
  exit 2
fi

# Dependencies: the project's, then clang with libFuzzer and the sanitizers.
"$root/scripts/setup.sh"
missing=()
for p in clang libclang-rt-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz.sh: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Configure (the libraries get -fsanitize=address,undefined,fuzzer-no-link
# through HELIX_SANITIZE; no CUDA, no tests) and build only the targets.
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only" \
  "-DHELIX_SANITIZE=address;undefined;fuzzer-no-link" \
  -DHELIX_ENABLE_CUDA=OFF -DHELIX_BUILD_TESTS=OFF -DHELIX_FUZZ=ON \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "${HELIX_FUZZ_JOBS:-$(nproc)}" \
  --target "${targets[@]/#/helix-fuzz-}"
[ "$mode" = build ] && exit 0

# Per-target libFuzzer options: dictionary and the largest input.
declare -A dict=([import]=hf-config [hardware]=hardware [cost]=cost
  [pass-options]=pass-options [mlir]=mlir [safetensors]=safetensors
  [prompts]=prompts)
declare -A max_len=([import]=4096 [hardware]=8192 [cost]=256
  [pass-options]=512 [mlir]=16384 [safetensors]=16384 [prompts]=1024)
common=(-rss_limit_mb=2560 -timeout=30 -print_final_stats=1)

failed=()
summary=()
for t in "${targets[@]}"; do
  bin="$build/fuzz/bin/helix-fuzz-$t"
  corpus="$root/fuzz/corpus/$t"
  regressions="$root/fuzz/regressions/$t"
  inputs=("$corpus")
  [ -d "$regressions" ] && inputs+=("$regressions")
  log="$build/fuzz/logs/$t.log"
  mkdir -p "$build/fuzz/logs"
  start=$(date +%s)
  if [ "$mode" = regression ]; then
    # Each committed input once; nothing is written to the source tree.
    if "$bin" "${common[@]}" -runs=0 "${inputs[@]}" > "$log" 2>&1; then
      status=ok
    else
      status=FAILED
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  else
    work="$build/fuzz/work/$t"
    artifacts="$build/fuzz/artifacts/$t"
    mkdir -p "$work" "$artifacts"
    cp -n "$corpus"/* "$work"/ 2>/dev/null || true
    [ -d "$regressions" ] && { cp -n "$regressions"/* "$work"/ 2>/dev/null || true; }
    if "$bin" "${common[@]}" -max_total_time="$seconds" \
      -max_len="${max_len[$t]}" -dict="$root/fuzz/dict/${dict[$t]}.dict" \
      -artifact_prefix="$artifacts/" "$work" > "$log" 2>&1; then
      status=ok
    else
      status=FAILED
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ "$merge" = 1 ] && [ "$status" = ok ]; then
      merged=$(mktemp -d)
      "$bin" -merge=1 -rss_limit_mb=2560 -timeout=30 -max_len="${max_len[$t]}" \
        "$merged" "$corpus" "$work" >> "$log" 2>&1
      rm -f "$corpus"/*
      cp "$merged"/* "$corpus"/
      rm -rf "$merged"
    fi
  fi
  elapsed=$(($(date +%s) - start))
  summary+=("$(printf '%-13s %-7s %6ss %12s runs' "$t" "$status" "$elapsed" "${runs:-?}")")
  if [ "$status" != ok ]; then
    failed+=("$t")
    echo "fuzz.sh: $t FAILED; the end of $log:" >&2
    grep -v -E '^(#[0-9]+|INFO:|NEW_FUNC)' "$log" | tail -40 >&2
  fi
done

echo "fuzz.sh: $mode (logs in $build/fuzz/logs)"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
