#!/usr/bin/env bash
# Checks the Debian packages the test world's real nodes (INPLACE_NODES=real,
# test/realnode) run on: containerd, runc, the CNI plugins, iptables, nft,
# conntrack, ip, nsenter and unshare. As root it installs the missing ones with
# apt-get; otherwise it says what to install and succeeds, since the other
# node modes need none of them. test/realnode checks the same list.
set -euo pipefail
# binary path → the package that has it
declare -A need=(
	[/usr/bin/containerd]=containerd
	[/usr/bin/containerd-shim-runc-v2]=containerd
	[/usr/sbin/runc]=runc
	[/usr/lib/cni/bridge]=containernetworking-plugins
	[/usr/lib/cni/host-local]=containernetworking-plugins
	[/usr/lib/cni/loopback]=containernetworking-plugins
	[/usr/sbin/iptables]=iptables
	[/usr/sbin/nft]=nftables
	[/usr/sbin/conntrack]=conntrack
	[/usr/sbin/ip]=iproute2
	[/usr/bin/nsenter]=util-linux
	[/usr/bin/unshare]=util-linux
)
missing=()
for bin in "${!need[@]}"; do
	if [ ! -x "$bin" ]; then
		missing+=("${need[$bin]}")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "packages for real nodes are installed"
	exit 0
fi
pkgs=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
	echo "real nodes (INPLACE_NODES=real) need Debian packages that are missing; as root run:"
	echo "  apt-get update && apt-get install -y --no-install-recommends $pkgs"
	echo "(the simulated and hollow nodes need none of them)"
	exit 0
fi
echo "installing the packages real nodes need: $pkgs"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # one word per package
apt-get install -y -qq --no-install-recommends $pkgs
