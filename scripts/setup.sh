#!/usr/bin/env bash
# Installs what helix needs on Debian 12 (run as root, or with sudo on PATH).
# Safe to run again: it only installs what is missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  llvm-22-dev libmlir-22-dev mlir-22-tools
  nlohmann-json3-dev libcli11-dev libgtest-dev
  libopenmpi-dev openmpi-bin
  clang-format
  python3-dev pybind11-dev python3-pytest
  python3-torch
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
