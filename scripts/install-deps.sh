#!/usr/bin/env bash
# Installs the Debian packages rectwin needs to build and test. Idempotent: it asks apt
# only for what is missing, and never downloads anything outside Debian's archive.
# The CUDA toolkit is not a Debian package here; it is used when nvcc is on PATH.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libfyaml-dev libgsl-dev libcmocka-dev libopenblas-dev
  libsimgrid-dev simgrid
  libopenmpi-dev openmpi-bin
  gnuplot-nox python3 time procps
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || {
    echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  }
  sudo_cmd=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
