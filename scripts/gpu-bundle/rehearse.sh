#!/usr/bin/env bash
# Rehearses the device run without a GPU (docs/gpu.md, "The device
# bundle"): gpu-bundle/run.sh runs in a root file system made from Debian
# packages -- glibc, bash, coreutils and the other tools run.sh calls,
# Python 3; no LLVM, MLIR or MPI -- with the CUDA toolkit's libraries bound
# in at /usr/local/cuda (the device's own; no driver), an empty
# LD_LIBRARY_PATH and nothing else of this machine. It passes when the env
# step finds every library of every binary and runs the tools, and every
# other step reaches the point where it needs a GPU and says so in one line.
#
# usage: scripts/gpu-bundle/rehearse.sh [BUNDLE_DIR (default gpu-bundle/)]
#
# Needs root (unshare, mount, chroot) and apt-get download; the root file
# system is cached in $HELIX_REHEARSAL_ROOT (default build/gpu-rehearsal-root).
# Exit 77 where it cannot make or enter one (not root, no mount namespace).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=$(cd "${1:-$root/gpu-bundle}" && pwd)
fs=${HELIX_REHEARSAL_ROOT:-$root/build/gpu-rehearsal-root}
cuda=${CUDA_HOME:-/usr/local/cuda}
say() { echo "rehearse: $*"; }
skip() { echo "rehearse: skipped: $*"; exit 77; }
[ -f "$bundle/run.sh" ] && [ -f "$bundle/payload.tar.xz" ] ||
  { echo "rehearse: error: $bundle has no run.sh and payload.tar.xz (scripts/gpu-bundle.sh)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (unshare, mount, chroot)"
unshare -m true 2> /dev/null || skip "no mount namespace here (unshare -m)"

# What run.sh and its tools call, and what those link: nothing more.
packages=(
  libc6 libgcc-s1 libstdc++6 zlib1g libzstd1 liblzma5 libbz2-1.0
  libselinux1 libpcre2-8-0 libacl1 libattr1 libgmp10 libtinfo6 libcrypt1
  libmd0 libaudit1 libcap-ng0 libcap2
  bash dash coreutils sed grep gawk mawk findutils tar xz-utils gzip
  diffutils libsigsegv2 libmpfr6 libreadline8
  python3.11-minimal libpython3.11-minimal libpython3.11-stdlib
  libexpat1 libffi8 libssl3 libsqlite3-0 libncursesw6 libuuid1 media-types
)
if [ ! -f "$fs/.made" ] || [ "$0" -nt "$fs/.made" ]; then
  say "making a root file system from ${#packages[@]} Debian packages in $fs"
  rm -rf "$fs"
  mkdir -p "$fs/.debs"
  (cd "$fs/.debs" && apt-get download "${packages[@]}" > /dev/null) ||
    skip "apt-get download failed (no package mirror?)"
  for d in "$fs"/.debs/*.deb; do
    dpkg-deb -x "$d" "$fs"
  done
  ln -sf python3.11 "$fs/usr/bin/python3"
  [ -e "$fs/bin" ] || ln -s usr/bin "$fs/bin"
  [ -e "$fs/lib" ] || ln -s usr/lib "$fs/lib"
  [ -e "$fs/lib64" ] || ln -s usr/lib64 "$fs/lib64"
  ln -sf bash "$fs/usr/bin/sh"
  ln -sf mawk "$fs/usr/bin/awk" # (what update-alternatives would make)
  mkdir -p "$fs"/{proc,dev,tmp,bundle,out,usr/local/cuda,etc}
  chmod 1777 "$fs/tmp"
  echo "root:x:0:0:root:/root:/bin/bash" > "$fs/etc/passwd"
  echo "root:x:0:" > "$fs/etc/group"
  touch "$fs/.made"
fi
rm -rf "$fs/tmp" && mkdir -m 1777 "$fs/tmp" # (a previous rehearsal's bundle)
banned=$(find "$fs" -path "$fs/proc" -prune -o \( -name 'libLLVM*' -o \
  -name 'libMLIR*' -o -name 'libmpi*' -o -name 'libopen-rte*' -o \
  -name 'libopen-pal*' -o -name 'libpmix*' -o -name mpirun -o -name orterun \
  \) -print)
[ -z "$banned" ] || { echo "rehearse: error: the root file system holds $banned" >&2; exit 1; }

out=$(mktemp -d /tmp/helix-rehearsal.XXXXXX)
say "running $bundle/run.sh in it (results in $out)"
rc=0
unshare -m bash -c '
  set -e
  fs=$1; bundle=$2; out=$3; cuda=$4
  mount --make-rprivate /
  mount --bind "$bundle" "$fs/bundle"
  mount --bind "$out" "$fs/out"
  mount --bind "$(readlink -f "$cuda")" "$fs/usr/local/cuda"
  mount -o remount,bind,ro "$fs/usr/local/cuda"
  mount -t proc proc "$fs/proc"
  mount --rbind /dev "$fs/dev"
  exec chroot "$fs" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root OUT=/out \
    LD_LIBRARY_PATH= HELIX_BUNDLE_DIR=/tmp bash /bundle/run.sh
' _ "$fs" "$bundle" "$out" "$cuda" > "$out/rehearsal.log" 2>&1 || rc=$?
cat "$out/rehearsal.log"

# The verdict.
bad=0
expect() { # expect WHAT CONDITION-STATUS
  if [ "$2" = 0 ]; then echo "rehearse: ok: $1"; else echo "rehearse: FAIL: $1"; bad=1; fi
}
grep -q "^== env: ok" "$out/summary.txt" 2> /dev/null
expect "the env step passed" $?
grep -q "every binary resolves every library" "$out/env.txt" 2> /dev/null
expect "every binary resolves every library" $?
steps=$(grep -c "^== " "$out/summary.txt" 2> /dev/null || echo 0)
nogpu=$(grep -c "^== .*: no-gpu" "$out/summary.txt" 2> /dev/null || echo 0)
[ "$nogpu" -ge 1 ] && [ "$nogpu" = $((steps - 1)) ]
expect "every other step ($((steps - 1))) stopped where it needs a GPU ($nogpu)" $?
lines_ok=0
for f in "$out"/*.txt; do
  case $(basename "$f") in env.txt | summary.txt | rehearsal.log) continue ;; esac
  grep -q "no CUDA GPU" "$f" || { echo "rehearse: $(basename "$f") does not say it needs a GPU"; lines_ok=1; }
done
expect "each of them says so" $lines_ok
[ "$rc" = 0 ]
expect "run.sh exited 0 (no step failed)" $?
rm -rf "$out"
exit $bad
