#!/usr/bin/env bash
# Builds the real Kubernetes binaries of the test world from their Go modules
# into bin/: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# hollow-node (the kubelet's code over a fake runtime), kubectl (inplace as a
# kubectl plugin is tested through it), and for real nodes (test/realnode)
# the kubelet, kube-proxy and CoreDNS; Prometheus for canary analysis
# (test/prom). Each is built once and reused while
# the modules it links and its own sources are unchanged (a content hash
# kept beside it in bin/.<name>.stamp); CoreDNS, built from
# its own module, and Prometheus, from test/tools/prometheus, while their
# versions are. Then packages.sh checks (and as root
# installs) the Debian packages real nodes run on.
set -euo pipefail
cd "$(dirname "$0")"
out="$(cd ../.. && pwd)/bin"
mkdir -p "$out"
k8s=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "$k8s" | cut -d. -f2)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

# What a binary is built from: the modules (path, version, replacement) of
# the packages it links, as the build resolves them, and its own sources. A
# requirement that only another binary links leaves its stamp as it was.
stamp() {
	{
		go list -deps -f '{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}} {{.Version}}{{end}}{{end}}' "./$1" | sort -u
		cat "./$1"/*.go
	} | sha256sum | cut -d' ' -f1
}

stale() {
	[ ! -x "$out/$1" ] || [ "$(cat "$out/.$1.stamp" 2>/dev/null)" != "$(stamp "$1")" ]
}

for b in etcd kube-apiserver kube-controller-manager kube-scheduler hollow-node kubectl kubelet kube-proxy; do
	if ! stale "$b"; then
		echo "bin/$b is up to date"
		continue
	fi
	echo "building bin/$b ($k8s) from its Go module; the first build takes several minutes..."
	start=$(date +%s)
	go build -trimpath -ldflags "$ldflags" -o "$out/$b.tmp" "./$b"
	mv "$out/$b.tmp" "$out/$b"
	stamp "$b" >"$out/.$b.stamp"
	echo "  bin/$b built in $(( $(date +%s) - start ))s"
done

# CoreDNS wants newer client-go than this module pins: go install builds it
# from its own module at this version.
coredns=v1.15.0
if [ -x "$out/coredns" ] && [ "$(cat "$out/.coredns.stamp" 2>/dev/null)" = "$coredns" ]; then
	echo "bin/coredns is up to date"
else
	echo "building bin/coredns ($coredns) from its Go module; the first build takes a few minutes..."
	start=$(date +%s)
	tmp=$(mktemp -d "$out/.coredns.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	GOBIN="$tmp" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$coredns"
	mv "$tmp/coredns" "$out/coredns"
	echo "$coredns" >"$out/.coredns.stamp"
	echo "  bin/coredns built in $(( $(date +%s) - start ))s"
fi

# Prometheus (test/prom) is a tool of its own module (prometheus/go.mod):
# it wants newer Kubernetes and OpenTelemetry modules than this one pins.
# Rebuilt when the version that module requires changes.
prometheus=$(cd prometheus && go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
if [ -x "$out/prometheus" ] && [ "$(cat "$out/.prometheus.stamp" 2>/dev/null)" = "$prometheus" ]; then
	echo "bin/prometheus is up to date"
else
	echo "building bin/prometheus ($prometheus) from its Go module; the first build takes about five minutes..."
	start=$(date +%s)
	(cd prometheus && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/prometheus.tmp" github.com/prometheus/prometheus/cmd/prometheus)
	mv "$out/prometheus.tmp" "$out/prometheus"
	echo "$prometheus" >"$out/.prometheus.stamp"
	echo "  bin/prometheus built in $(( $(date +%s) - start ))s"
fi

./packages.sh
