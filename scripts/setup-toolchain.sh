#!/usr/bin/env bash
# Makes this machine ready to build vaeconv for AMD CDNA (gfx942, gfx950).
#
# - If an installed ROCm (6.4 or newer, the first release that targets gfx950) is found, it is used
#   as it is and nothing is installed.
# - Otherwise, on Debian, a toolchain root is built with debootstrap (Debian sid + experimental,
#   which carry HIP 7.2, rocPRIM 7.2 and clang 22), as ../shared/notes/toolchain.md records.
#   The root is reused on later runs: the script is idempotent.
#
# Prints what it does. Prints, as its last line, either
#   VAECONV_HIP=native ROCM_PATH=...      (installed ROCm)
#   VAECONV_HIP=root VAECONV_ROOT=...     (toolchain root; build with scripts/in-root.sh)
# Environment: VAECONV_ROOT (default /opt/vaeconv-toolchain), VAECONV_FORCE_ROOT=1 ignores ROCm.
set -euo pipefail

ROOT=${VAECONV_ROOT:-/opt/vaeconv-toolchain}
STAMP="$ROOT/.vaeconv-toolchain-ready"
# libmiopen-dev: the bench's MIOpen baseline (bench/miopen_baseline.cpp; ~0.4 GB to fetch, with rocBLAS).
# python3: the CDNA performance model and its checks run under ctest inside the root.
# python3-torch (CPU): the Python package's tests (op registration, fake tensors, torch.compile).
PACKAGES="hipcc libamdhip64-dev librocprim-dev libmiopen-dev cmake g++ libgtest-dev ninja-build python3 python3-torch"
say() { echo "[setup-toolchain] $*" >&2; }

rocm_version() {  # prints major.minor of an installed ROCm, or nothing
  local dir=$1
  [ -f "$dir/.info/version" ] && { cut -d. -f1,2 "$dir/.info/version"; return; }
  [ -x "$dir/bin/hipconfig" ] && "$dir/bin/hipconfig" --version 2>/dev/null | cut -d. -f1,2
}

if [ "${VAECONV_FORCE_ROOT:-0}" != 1 ]; then
  for dir in "${ROCM_PATH:-}" /opt/rocm; do
    [ -n "$dir" ] && [ -d "$dir" ] || continue
    v=$(rocm_version "$dir" || true)
    if [ -n "$v" ] && awk -v v="$v" 'BEGIN{split(v,a,".");exit !(a[1]>6||(a[1]==6&&a[2]>=4))}'; then
      say "using installed ROCm $v at $dir"
      echo "VAECONV_HIP=native ROCM_PATH=$dir"
      exit 0
    fi
    [ -n "$v" ] && say "ROCm $v at $dir is older than 6.4 (no gfx950): not used"
  done
fi

[ "$(id -u)" = 0 ] || { say "building the toolchain root needs root (debootstrap, chroot)"; exit 1; }
[ -f /etc/debian_version ] || { say "no ROCm found and this is not Debian: install ROCm 6.4+ first"; exit 1; }

mount_root() {  # hipcc and apt inside the root need /proc and /dev
  mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
  mountpoint -q "$ROOT/dev" || mount --rbind /dev "$ROOT/dev"
}

# experimental's python3-mpmath (1.5 alpha) breaks sid's sympy 1.14, which torch.compile and fake
# tensors import: keep mpmath at sid's version despite -t experimental.
SID_PINNED="python3-mpmath"
pin_sid() {
  printf 'Package: %s\nPin: release a=unstable\nPin-Priority: 1001\n' "$SID_PINNED" \
    > "$ROOT/etc/apt/preferences.d/vaeconv-sid-pins"
}

if [ -f "$STAMP" ]; then
  say "reusing toolchain root $ROOT ($(cat "$STAMP"))"
  mount_root
  # A root made before a package joined the list gets it now.
  missing=$(for p in $PACKAGES; do chroot "$ROOT" dpkg-query -W -f='${Status}' "$p" 2>/dev/null \
            | grep -q 'install ok installed' || echo "$p"; done | tr '\n' ' ')
  pin_sid
  for p in $SID_PINNED; do  # installed from experimental before the pin: move back to sid's
    chroot "$ROOT" dpkg-query -W -f='${Version}' "$p" 2>/dev/null | grep -q '~a' && missing="$missing $p"
  done
  if [ -n "${missing// /}" ]; then
    say "installing into the root what it lacks: $missing"
    chroot "$ROOT" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    chroot "$ROOT" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --allow-downgrades --no-install-recommends -t experimental $missing >&2
  fi
  echo "VAECONV_HIP=root VAECONV_ROOT=$ROOT"
  exit 0
fi

# The Debian mirror this machine already uses (first deb URI in its apt sources).
MIRROR=$(grep -hE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
         | grep -v security | sed -E 's/^URIs:[[:space:]]*//; s/^deb (\[[^]]*\] )?//; s/[[:space:]].*//' \
         | grep -m1 debian || true)
[ -n "$MIRROR" ] || { say "cannot find a Debian mirror in /etc/apt sources"; exit 1; }
say "Debian mirror: $MIRROR"

if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >&2
fi

if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
  say "debootstrap --variant=minbase sid $ROOT (about 20 s)"
  rm -rf "$ROOT"
  debootstrap --variant=minbase sid "$ROOT" "$MIRROR" >&2
fi

cat > "$ROOT/etc/apt/sources.list" <<SRC
deb $MIRROR sid main
deb $MIRROR experimental main
SRC
# sid's lists in the registry are a dated snapshot.
echo 'Acquire::Check-Valid-Until "false";' > "$ROOT/etc/apt/apt.conf.d/99vaeconv-no-valid-until"
pin_sid
mount_root

say "installing HIP 7.2, rocPRIM, clang 22, CMake, GoogleTest inside the root (about 1 min, ~2 GB)"
chroot "$ROOT" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
chroot "$ROOT" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends -t experimental $PACKAGES >&2

HIPV=$(chroot "$ROOT" dpkg-query -W -f='${Version}' libamdhip64-dev 2>/dev/null || echo unknown)
CLANG=$(chroot "$ROOT" sh -c 'ls /usr/bin/clang++-* 2>/dev/null | sort -V | tail -1')
say "toolchain root ready: HIP $HIPV, $CLANG"
echo "hip=$HIPV clang=$CLANG built=$(date -u +%FT%TZ)" > "$STAMP"
echo "VAECONV_HIP=root VAECONV_ROOT=$ROOT"
