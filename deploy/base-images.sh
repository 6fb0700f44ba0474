#!/usr/bin/env bash
# Makes the base images the Dockerfile and deploy/compose.yaml need available to podman, on a host
# that cannot pull from a public registry. For each of node:24-slim, postgres:15 and
# nginx:1.27-alpine: use it if it is already local or can be pulled (within PULL_TIMEOUT);
# otherwise build a local stand-in from Debian bookworm (debootstrap) and Debian's packages, once
# (an existing stand-in is reused; FORCE=1 rebuilds). See docs/deployment.md ("Run with Docker or
# podman"). Needs root, podman, debootstrap; the Debian mirror is the one apt uses on this host.
#
#   deploy/base-images.sh            # prints NODE_IMAGE=…, POSTGRES_IMAGE=…, NGINX_IMAGE=… to use
#   eval "$(deploy/base-images.sh)"  # and export them
#
# Stand-ins are named localhost/railyard-stand-in/<name>; their Containerfiles are in deploy/stand-ins/.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stand_ins="$root/deploy/stand-ins"
pull_timeout="${PULL_TIMEOUT:-20s}"
force="${FORCE:-0}"
debian_image=localhost/railyard-stand-in/debian:bookworm
# podman here: runc (crun fails on this host's cgroups) and the host network for apt and npm.
build=(podman build --runtime "${PODMAN_RUNTIME:-runc}" --network host --format docker --quiet)

log() { echo "base-images: $*" >&2; }

exists() { podman image exists "$1"; }

# A registry image if it is local already or can be pulled in time; nothing otherwise.
# (Fully qualified: podman would match a short name such as node:24-slim to a local stand-in.)
registry_image() {
  local image="docker.io/library/$1"
  if exists "$image"; then echo "$image"; return; fi
  log "trying to pull $image (timeout $pull_timeout)"
  if timeout "$pull_timeout" podman pull --quiet "$image" >/dev/null 2>&1; then
    echo "$image"
  fi
}

# The Debian mirror apt uses on this host (deb822 .sources or a one-line sources.list).
debian_mirror() {
  local uri
  uri="$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n 1 || true)"
  [ -n "$uri" ] || uri="$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | grep -v security | head -n 1 || true)"
  echo "${uri:-http://deb.debian.org/debian}"
}

debian_stand_in() {
  if exists "$debian_image" && [ "$force" != 1 ]; then return; fi
  local dir
  dir="$(mktemp -d -t railyard-rootfs.XXXXXX)"
  log "debootstrap bookworm from $(debian_mirror) (about 30 s)"
  debootstrap --variant=minbase bookworm "$dir" "$(debian_mirror)" >/dev/null
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
  tar -C "$dir" -c . | podman import --quiet - "$debian_image" >/dev/null
  rm -rf "$dir"
}

node_stand_in() {
  local image=localhost/railyard-stand-in/node:24-slim
  if exists "$image" && [ "$force" != 1 ]; then echo "$image"; return; fi
  debian_stand_in
  local ctx node npm_dir
  ctx="$(mktemp -d -t railyard-node-ctx.XXXXXX)"
  # The Node 24 the project pins, and an npm (npm is plain JavaScript: the host's works on Node 24).
  node="$(cd "$root" && npm exec --offline -- node -p process.execPath)"
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  cp "$node" "$ctx/node"
  cp -r "$npm_dir" "$ctx/npm"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
  log "building $image (Node $("$node" --version), npm $(node "$npm_dir/bin/npm-cli.js" --version 2>/dev/null || echo '?'))"
  "${build[@]}" --build-arg DEBIAN_IMAGE="$debian_image" -f "$stand_ins/node.Containerfile" -t "$image" "$ctx" >/dev/null
  rm -rf "$ctx"
  echo "$image"
}

package_stand_in() {
  local name="$1" tag="$2"
  local image="localhost/railyard-stand-in/$name:$tag"
  if exists "$image" && [ "$force" != 1 ]; then echo "$image"; return; fi
  debian_stand_in
  log "building $image from Debian's packages"
  "${build[@]}" --build-arg DEBIAN_IMAGE="$debian_image" -f "$stand_ins/$name.Containerfile" -t "$image" "$stand_ins" >/dev/null
  echo "$image"
}

node_image="$(registry_image node:24-slim)"
[ -n "$node_image" ] || node_image="$(node_stand_in)"
postgres_image="$(registry_image postgres:15)"
[ -n "$postgres_image" ] || postgres_image="$(package_stand_in postgres 15)"
nginx_image="$(registry_image nginx:1.27-alpine)"
[ -n "$nginx_image" ] || nginx_image="$(package_stand_in nginx 1.27-alpine)"

echo "NODE_IMAGE=$node_image"
echo "POSTGRES_IMAGE=$postgres_image"
echo "NGINX_IMAGE=$nginx_image"
