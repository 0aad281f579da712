#!/usr/bin/env bash
# Install what layoutsim needs from Debian 12 (if missing), configure and build it in ./build.
# Usage: bash tools/setup.sh        (run from the repository root; uses sudo when not root)
set -euo pipefail
cd "$(dirname "$0")/.."
# clang and libclang-rt-14-dev (libFuzzer's runtime) build the fuzz harnesses, valgrind runs memcheck (tools/test.sh)
PKGS=(build-essential meson ninja-build pkg-config libsimgrid-dev libglib2.0-dev libcjson-dev libxml2-dev check
      pajeng libxml2-utils librsvg2-bin parallel clang libclang-rt-14-dev valgrind)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ -f build/build.ninja ]; then
  meson setup build --reconfigure >/dev/null
else
  meson setup build >/dev/null
fi
ninja -C build >/dev/null
echo "layoutsim built: ./build/layoutsim"
