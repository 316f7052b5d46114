# inplace: event-driven, in-place upgrades of Kubernetes pods.
#   make demo   the whole chain on embedded defaults, no cluster needed
#   make test   every test (builds the control-plane binaries once); the
#               end-to-end suite runs twice: on simulated nodes and on
#               hollow nodes (the real kubelet's code)

GO        ?= go
TEST_FLAGS ?= -timeout 60m

.PHONY: all build bin bin-knative image test test-hollow test-real test-unit lint fmt docs demo demo-knative bench bench-bus render clean FORCE

all: build

build: bin/inplace

bin/inplace: FORCE
	$(GO) build -trimpath -o $@ ./cmd/inplace

# The images, built without Docker by cmd/inplace-image (go-containerregistry):
# inplace and the nats-server of config/nats, for PLATFORMS, on a base made in
# the build, pushed as $(REGISTRY)/inplace:$(VERSION) and
# $(REGISTRY)/nats-server:<the version go.mod requires>. It prints the
# kustomize images: entries that point config/ at them (docs/install.md).
#   make image REGISTRY=127.0.0.1:5000/inplace
REGISTRY  ?=
VERSION   ?=
PLATFORMS ?= linux/amd64,linux/arm64
image:
	$(GO) run ./cmd/inplace-image -registry "$(REGISTRY)" -version "$(VERSION)" -platforms "$(PLATFORMS)"

# The real Kubernetes binaries of the test world (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, the hollow node running the
# kubelet's code, kubectl, and for real nodes the kubelet, kube-proxy and
# CoreDNS; Prometheus for canary analysis, from its own module
# test/tools/prometheus), built from their Go modules (test/tools) once and
# reused while
# their sources are unchanged; then the Debian packages real nodes run on
# (containerd, runc, CNI plugins, iptables, nftables, conntrack) are
# installed when missing and this runs as root, or named otherwise
# (test/tools/packages.sh).
bin: FORCE
	test/tools/build.sh

# Knative Eventing's own components (controller, MT Broker, ingress, filter,
# in-memory channel, ApiServerSource adapter) for the Knative node of the
# test world (test/knative), built from knative.dev/eventing
# (test/knative-tools) once and reused.
bin-knative:
	test/knative-tools/build.sh

test: bin bin-knative
	$(GO) test $(TEST_FLAGS) ./...
	$(MAKE) test-hollow

# The end-to-end suite on hollow nodes: the real kubelet's code and the
# real kube-scheduler in place of the simulated nodes (INPLACE_NODES=hollow
# does the same for any test, benchmark or the demo).
test-hollow: bin
	INPLACE_NODES=hollow $(GO) test $(TEST_FLAGS) ./test/e2e/

# The end-to-end suite on real nodes: the real kubelet over containerd and
# runc, kube-proxy and CoreDNS (test/realnode), the tests' images real
# programs; a test that cannot run there skips saying why. Needs root and
# the packages `make bin` installs; without them every test skips naming
# what is missing. REAL_RUN, a go test -run pattern, runs a subset of the
# suite; then the real-node checks themselves (nothing left behind once a
# world stops, also after its test binary is killed), the install as
# docs/install.md tells it (test/install) and a real Prometheus scraping
# the app's pods on real nodes (test/prom), and the canary analysis
# against that Prometheus (test/analysis). Those packages run one at a
# time (-p 1): each starts its own real nodes, and test/install builds the
# image while it runs, so two at once on a two-core machine starve the
# pods whose requests test/analysis counts (a 1 s request timeout).
REAL_RUN ?=
test-real: bin
	INPLACE_NODES=real $(GO) test $(TEST_FLAGS) $(if $(REAL_RUN),-run '$(REAL_RUN)') ./test/e2e/
	INPLACE_NODES=real $(GO) test $(TEST_FLAGS) -p 1 ./test/realnode/ ./test/install/ ./test/prom/ ./test/analysis/

# The fault suite at length (`make test` runs each fault once on 4 pods):
# SIGKILLs of inplace run, nats-server restarts, stream leader losses, API
# server error bursts, events delivered twice and shuffled, each
# FAULTS_RUNS times on FAULTS_PODS pods. The figures go to
# dist/faults.json and dist/faults.md (the table in docs/operations.md).
FAULTS_RUNS ?= 10
FAULTS_PODS ?= 8
faults: bin
	@mkdir -p dist
	@echo "the fault suite, $(FAULTS_RUNS) runs of each fault on $(FAULTS_PODS) pods (full log: dist/faults.log)..."
	@INPLACE_FAULTS_RUNS=$(FAULTS_RUNS) INPLACE_FAULTS_PODS=$(FAULTS_PODS) INPLACE_FAULTS_REPORT=$(CURDIR)/dist/faults.json \
		$(GO) test -count=1 -v -timeout 300m ./test/faults/ > dist/faults.log 2>&1; status=$$?; \
		grep -E '^(--- |ok|FAIL)|figures:' dist/faults.log; cat dist/faults.md 2>/dev/null; exit $$status

# Tests that need neither the control plane nor long runs.
test-unit:
	$(GO) test -short ./...

# gofmt on every Go file; go vet on the main module. (test/tools holds the
# mains of Kubernetes binaries; vetting them would type-check all of
# k8s.io/kubernetes a second time in a cold CI, next to `make bin`.)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# The tables of docs/reference.md generated from the code (annotations,
# commands and flags, event types); test/docs fails while they are stale.
docs:
	$(GO) test ./test/docs/ -run TestReferenceIsCurrent -count=1 -update

# The main job on embedded defaults: the test world, embedded NATS and
# `inplace run`, a shop that opts in, a real push, the rollout live, a
# before/after table, and a replay in dry run.
demo: bin
	@echo "building the demo (the first time compiles the project, about a minute)..."
	$(GO) run ./test/demo

# The same demo in Knative mode: Knative Eventing's own components on the
# test world, config/overlays/knative created, the functions as `inplace
# function` services behind a real Broker, the same before/after table.
demo-knative: bin bin-knative
	@echo "building the demo (the first time compiles the project, about a minute)..."
	$(GO) run ./test/demo -knative

# The benchmark (test/bench): in place against the native rolling update on
# simulated nodes that charge recreation what a real cluster does, API
# writes per pod by actor (the API server's audit log), a 1,000-pod scale
# run, webhook → first patch, memory; a table on stdout and bench.json.
# It prints figures and asserts nothing about speed; it is not part of
# `make test`. BENCH_FLAGS (or INPLACE_BENCH_* variables) choose the parts
# and sizes: go run ./test/bench -h. BENCH_QUICK=1 runs small sizes (about
# 8 minutes on 2 cores) to try a change; its figures are not the issue's.
bench: bin
	$(GO) run ./test/bench $(BENCH_FLAGS)

# The bus and CloudEvents codec micro-benchmarks.
bench-bus:
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/bus/

# Every kustomize overlay of config/ rendered into dist/manifests.
render:
	test/manifests/render.sh

clean:
	rm -rf bin .demo

FORCE:
