#!/usr/bin/env bash
# Builds the device bundle (docs/gpu.md, "The device bundle"): everything a
# run on a lent GPU machine needs -- a bare machine with the CUDA driver and
# toolkit, Python 3, and no LLVM, MLIR, MPI or network -- and nothing that
# needs helix's compiler there:
#
#   gpu-bundle/run.sh           the one command on the device (run.sh -h)
#   gpu-bundle/payload.tar.xz   bin/ (the GPU tools, the gpu-labelled kernel
#                               tests, helix-make-checkpoint, helix-reference,
#                               helix-bench-decode), cases/ (the projects of
#                               test/Codegen/gpu-cases.txt, built), decode/
#                               (the 1-GPU projects of decode-cases.txt,
#                               built, with their plans for each GPU preset),
#                               mpi/ (Open MPI, relocatable), lib/ (every
#                               shared library ldd shows outside glibc and
#                               the CUDA driver and toolkit), test/ (the
#                               scripts and inputs the runs read)
#   gpu-bundle/MANIFEST         what is in it, from which commit
#
# usage: scripts/gpu-bundle.sh [--no-build] [--out DIR]
#
# It builds helix first (scripts/build.sh; HELIX_BUILD_DIR, default build/,
# must have the CUDA backend). The CUDA code is the library's as built:
# CMAKE_CUDA_ARCHITECTURES' sm_90a and sm_100a among the others. The bundle
# must stay under 48 MiB (it travels with the working tree); the script
# fails above that. scripts/gpu-bundle/rehearse.sh runs it without a GPU,
# in a root file system made from Debian packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HELIX_BUILD_DIR:-$root/build}
out=$root/gpu-bundle
do_build=1
while [ $# -gt 0 ]; do
  case $1 in
  --no-build) do_build=0 ;;
  --out) out=$2; shift ;;
  -h | --help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "gpu-bundle: error: unknown argument $1" >&2; exit 1 ;;
  esac
  shift
done
say() { echo "gpu-bundle: $*"; }
die() { echo "gpu-bundle: error: $*" >&2; exit 1; }

if [ $do_build = 1 ]; then
  "$root/scripts/build.sh"
fi
for t in helix helix-bench-kernels-gpu helix-calibrate-gpu helix-make-checkpoint \
  helix-reference helix-bench-decode; do
  [ -x "$build/bin/$t" ] || die "$build/bin/$t is missing (a build with the CUDA backend: nvcc, cuBLAS, NCCL)"
done
cuda_tests=$(find "$build/unittests" -name HelixRuntimeCudaTests -type f | head -1)
[ -n "$cuda_tests" ] || die "HelixRuntimeCudaTests is not built in $build"

work=$(mktemp -d /tmp/helix-gpu-bundle.XXXXXX)
trap 'rm -rf "$work"' EXIT
stage=$work/helix-bundle
prefix=$work/prefix
mkdir -p "$stage"/{bin,lib,cases,decode,test}
say "installing helix into a scratch prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"

# --- Tools and tests -------------------------------------------------------
cp "$build/bin/helix-bench-kernels-gpu" "$build/bin/helix-calibrate-gpu" \
  "$build/bin/helix-make-checkpoint" "$build/bin/helix-reference" \
  "$build/bin/helix-bench-decode" "$cuda_tests" "$stage/bin/"
mkdir -p "$stage/test/Codegen" "$stage/test/Runtime" "$stage/test/Inputs"
cp "$root"/test/Codegen/{codegen_e2e.py,speculative_check.py,damage_checkpoint.py,gpu-cases.txt} \
  "$stage/test/Codegen/"
cp "$root/test/Runtime/compare_logits.py" "$stage/test/Runtime/"

# Every file the cases name under test/ travels at the same relative path.
need_input() { # need_input PATH-UNDER-test/
  mkdir -p "$stage/test/$(dirname "$1")"
  cp "$root/test/$1" "$stage/test/$1"
}

# --- The gpu cases: projects built here, run there --------------------------
say "building the projects of test/Codegen/gpu-cases.txt"
: > "$stage/cases/cases.txt"
grep -v '^#' "$root/test/Codegen/gpu-cases.txt" | grep -v '^[[:space:]]*$' |
  while IFS='|' read -r name config e2e compile; do
    name=$(echo $name); config=$(echo $config)
    e2e=$(echo $e2e); compile=$(echo $compile)
    for f in $config $e2e; do
      case $f in @TEST@/*) need_input "${f#@TEST@/}" ;; esac
    done
    here() { echo "$1" | sed "s|@TEST@|$root/test|g"; }
    python3 "$root/test/Codegen/codegen_e2e.py" --bin "$build/bin" \
      --prefix "$prefix" --config "$(here "$config")" \
      --work "$work/cases/$name" $(here "$e2e") --backend cuda --build-only \
      -- $compile > "$work/case-$name.log" 2>&1 ||
      { cat "$work/case-$name.log"; die "case $name did not build"; }
    mkdir -p "$stage/cases/$name/project/build"
    cp "$work/cases/$name/project/plan.json" "$stage/cases/$name/project/"
    cp "$work/cases/$name/project/build/helix-decode" \
      "$stage/cases/$name/project/build/"
    echo "$name|$config|$e2e|$compile" >> "$stage/cases/cases.txt"
  done

# --- The 1-GPU decode benchmarks -------------------------------------------
say "building the projects of scripts/gpu-bundle/decode-cases.txt"
presets="h100 h200 b200"
: > "$stage/decode/cases.txt"
grep -v '^#' "$root/scripts/gpu-bundle/decode-cases.txt" | grep -v '^[[:space:]]*$' |
  while IFS='|' read -r name model format batch options; do
    name=$(echo $name); model=$(echo $model); format=$(echo $format)
    batch=$(echo $batch)
    need_input "Inputs/models/$model"
    d=$stage/decode/$name
    mkdir -p "$d"
    # The checkpoint's config.json (with its quantization_config) is what
    # the plan is compiled from; the weights are written on the device.
    ck=$work/decode-ck/$name
    mkdir -p "$work/decode-ck"
    "$build/bin/helix-make-checkpoint" --config "$root/test/Inputs/models/$model" \
      -o "$ck" --format "$format" --config-only > /dev/null
    for hw in $presets; do
      p=$work/decode/$name-$hw
      "$build/bin/helix" compile --model "$ck/config.json" --gpus 1 \
        --batch "$batch" --context 128 --hardware "$hw" $options \
        --emit project -o "$p" --backend cuda > "$work/decode-$name-$hw.log" 2>&1 ||
        { cat "$work/decode-$name-$hw.log"; die "decode case $name ($hw) did not compile"; }
      cp "$p/plan.json" "$d/plan-$hw.json"
    done
    p=$work/decode/$name-h100
    for hw in $presets; do
      diff -r "$p/src" "$work/decode/$name-$hw/src" > /dev/null ||
        die "decode case $name: the program compiled for $hw differs from h100's"
    done
    cmake -S "$p" -B "$p/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release > "$work/decode-$name-build.log" 2>&1 &&
      cmake --build "$p/build" >> "$work/decode-$name-build.log" 2>&1 ||
      { cat "$work/decode-$name-build.log"; die "decode case $name did not build"; }
    cp "$p/build/helix-decode" "$d/"
    cp "$ck/config.json" "$d/config.json"
    echo "$name|$model|$format|$batch|$options" >> "$stage/decode/cases.txt"
  done

# --- Open MPI, relocatable (OPAL_PREFIX) -----------------------------------
say "copying Open MPI"
mpi=$stage/mpi
ompi_libdir=$(ompi_info --path libdir --parsable 2>/dev/null | sed -n 's/^path:libdir://p')
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')
ompi_pkgdatadir=$(ompi_info --path pkgdatadir --parsable 2>/dev/null | sed -n 's/^path:pkgdatadir://p')
ompi_prefix=$(ompi_info --path prefix --parsable 2>/dev/null | sed -n 's/^path:prefix://p')
[ -n "$ompi_pkglibdir" ] && [ -d "$ompi_pkglibdir" ] || die "Open MPI's ompi_info gives no plugin folder"
rel() { echo "${1#$ompi_prefix/}"; }
mkdir -p "$mpi/bin" "$mpi/$(rel "$ompi_pkglibdir")" "$mpi/$(rel "$ompi_pkgdatadir")"
cp "$(readlink -f "$(command -v orterun)")" "$mpi/bin/mpirun"
cp "$(readlink -f "$(command -v orted)")" "$mpi/bin/orted"
cp -r "$ompi_pkgdatadir"/. "$mpi/$(rel "$ompi_pkgdatadir")/"
# The plugins, less those of fabrics a one-node run never uses (and whose
# libraries -- verbs, UCX, libfabric, PSM -- the device image lacks).
heavy='libibverbs|libucp|libucs|libuct|libfabric|libpsm|librdmacm|libnl-'
for f in "$ompi_pkglibdir"/*.so; do
  if ! ldd "$f" 2>/dev/null | grep -Eq "$heavy"; then
    cp "$f" "$mpi/$(rel "$ompi_pkglibdir")/"
  fi
done
pmix_plugins=$(dirname "$(readlink -f "$(ldconfig -p | sed -n 's/.*libpmix.so.2 .*=> //p' | head -1)")")/pmix
if [ -d "$pmix_plugins" ]; then
  mkdir -p "$mpi/pmix"
  cp "$pmix_plugins"/*.so "$mpi/pmix/"
fi

# --- Shared libraries -------------------------------------------------------
# Everything the ELF files of the bundle load, but glibc (every Linux has
# it) and the CUDA driver and toolkit (the device's own): run.sh finds
# those there.
say "collecting shared libraries"
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libresolv\.so|libutil\.so|libcuda\.so|libcudart\.so|libcublas\.so|libcublasLt\.so|libnccl\.so|libnvidia)'
collect() { # collect ELF...: copies every library they need, transitively
  local queue=("$@") f lib path
  while [ ${#queue[@]} -gt 0 ]; do
    f=${queue[0]}
    queue=("${queue[@]:1}")
    while read -r lib path; do
      [ -n "$path" ] || continue
      echo "$lib" | grep -Eq "$skip" && continue
      [ -e "$stage/lib/$lib" ] && continue
      cp -L "$path" "$stage/lib/$lib"
      queue+=("$stage/lib/$lib")
    done < <(ldd "$f" 2>/dev/null | sed -n 's/^\s*\(\S*\) => \(\/\S*\) .*/\1 \2/p')
  done
}
mapfile -t elves < <(find "$stage" -type f \( -perm -u+x -o -name '*.so*' \) \
  -exec sh -c 'head -c 4 "$1" | grep -q "ELF" && echo "$1"' _ {} \;)
collect "${elves[@]}"
missing=$(for f in "${elves[@]}" "$stage"/lib/*; do
  LD_LIBRARY_PATH=$stage/lib ldd "$f" 2>/dev/null | grep "not found" | grep -Ev "$skip" || true
done | sort -u)
[ -z "$missing" ] || die "libraries not found: $missing"

# --- Smaller: no symbol tables ---------------------------------------------
for f in "${elves[@]}" "$stage"/lib/*; do
  strip --strip-unneeded "$f" 2> /dev/null || true
done

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)

rm -rf "$out"
mkdir -p "$out"
say "compressing"
tar -C "$work" -cf - helix-bundle | xz -9e -T0 > "$out/payload.tar.xz"
cp "$root/scripts/gpu-bundle/run.sh" "$out/run.sh"
chmod +x "$out/run.sh"
{
  echo "helix device bundle, built $(date -u +%Y-%m-%dT%H:%MZ) from $commit$dirty"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
  echo "cuda architectures: $(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt")"
  echo "payload: $(du -b "$out/payload.tar.xz" | cut -f1) bytes compressed, $(du -sb "$stage" | cut -f1) unpacked"
  echo
  (cd "$work" && find helix-bundle -type f | sort | while read -r f; do
    printf '%10d  %s\n' "$(stat -c %s "$f")" "$f"
  done)
} > "$out/MANIFEST"
size=$(du -sb "$out" | cut -f1)
say "$out: $((size / 1024)) KiB ($(sed -n 4p "$out/MANIFEST"))"
[ "$size" -le $((48 * 1024 * 1024)) ] || die "the bundle is over 48 MiB"
