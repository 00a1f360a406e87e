#!/usr/bin/env bash
# Host packages the build needs (Debian): CMake, a C++ compiler, GoogleTest, python3.
# Idempotent: installs only what is missing. CUDA (nvcc) is used when present, never installed.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
[ -d /usr/src/googletest ] || [ -f /usr/lib/x86_64-linux-gnu/libgtest.a ] || need+=(googletest)
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "[install-deps] missing ${need[*]}: run as root or install them" >&2; exit 1; }
  echo "[install-deps] installing ${need[*]}" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi
