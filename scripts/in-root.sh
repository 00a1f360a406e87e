#!/usr/bin/env bash
# Runs a command inside the vaeconv toolchain root (scripts/setup-toolchain.sh), with this
# checkout bind-mounted at the same path so build trees and paths match on both sides.
#   scripts/in-root.sh cmake --preset hip-root
set -euo pipefail
ROOT=${VAECONV_ROOT:-/opt/vaeconv-toolchain}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -f "$ROOT/.vaeconv-toolchain-ready" ] || { echo "no toolchain root at $ROOT: run scripts/setup-toolchain.sh" >&2; exit 1; }
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
mountpoint -q "$ROOT/dev" || mount --rbind /dev "$ROOT/dev"
mkdir -p "$ROOT$REPO"
# A mount left by an earlier checkout at the same path (since deleted and cloned again) points at
# the old directory: replace it unless it is this very directory.
if mountpoint -q "$ROOT$REPO" && [ "$(stat -c %d:%i "$ROOT$REPO" 2>/dev/null)" != "$(stat -c %d:%i "$REPO")" ]; then
  umount -l "$ROOT$REPO"
fi
mountpoint -q "$ROOT$REPO" || mount --bind "$REPO" "$ROOT$REPO"
case "$PWD/" in "$REPO"/*) cwd=$PWD ;; *) cwd=$REPO ;; esac
exec chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 CI="${CI:-}" /bin/bash -c 'cd "$0" && exec "$@"' "$cwd" "$@"
