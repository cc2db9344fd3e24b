# kubectl-dynamo — run `make help` for the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

MODULE      := github.com/ai-dynamo/kubectl-dynamo
BIN         := bin/kubectl-dynamo
# Tools built from the Go module proxy live in the test-data cache, outside the
# work tree, so a fresh clone on the same machine does not build them again.
KDYN_CACHE  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kubectl-dynamo
export KDYN_CACHE
TOOLS_BIN   := $(KDYN_CACHE)/tools
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(TOOLS_BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w \
	-X $(MODULE)/internal/buildinfo.Version=$(VERSION) \
	-X $(MODULE)/internal/buildinfo.Commit=$(COMMIT) \
	-X $(MODULE)/internal/buildinfo.Date=$(DATE)

EXAMPLE_ARGS := topology --from-file examples/prefill-only-zone-required.yaml --exit-zero

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_.-]+:.*## / {printf "  \033[36m%-17s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/kubectl-dynamo with version stamps
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/kubectl-dynamo

.PHONY: example
example: ## Run the main job on the embedded example (no cluster needed)
	go run ./cmd/kubectl-dynamo $(EXAMPLE_ARGS)

.PHONY: test
test: ## The whole suite: provisions what it needs (cached), verify, lint, tests (race where concurrent; under a hostile environment), arm64
	hack/test.sh

.PHONY: test-full
test-full: ## As test, with the randomized tests at their long sizes (KDYN_TEST_LONG=1; nightly-style, about 3x longer)
	KDYN_TEST_LONG=1 hack/test.sh

.PHONY: test-unit
test-unit: ## Only the Go tests (race where concurrent, plain elsewhere), without provisioning: control-plane and tokenizer tests skip if their data is missing
	CGO_ENABLED=1 go test -race -shuffle=on -count=1 $$(hack/test-packages.sh race)
	go test -shuffle=on -count=1 $$(hack/test-packages.sh plain)

.PHONY: test-hostile
test-hostile: ## Every package's tests under the hostile environment (make test runs its tests under it)
	hack/hostile-env.sh

.PHONY: provision
provision: ## Build or fetch the test data: control plane, tokenizers, qemu, chromium (make test does this itself)
	hack/testbin/provision.sh
	hack/tokenizer/fetch.sh
	hack/qemu/provision.sh aarch64
	hack/chromium/provision.sh

.PHONY: verify
verify: ## Check gofmt, go vet, go.mod tidiness, house rules, the package layout and generated docs
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './hack/tools/*')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	go vet ./...
	hack/verify-tidy.sh
	hack/verify-code-patterns.sh
	hack/verify-layout.sh
	hack/verify-readme.sh
	hack/verify-docs.sh

.PHONY: test-arm64
test-arm64: ## Run the routing-core tests as arm64 binaries (natively, or under qemu fetched from the Debian registry)
	hack/test-arm64.sh

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (pinned)
	$(GOLANGCI_LINT) run ./...

.PHONY: lint-tool
lint-tool: $(GOLANGCI_LINT) ## Build the pinned golangci-lint only (make test does it in the background)

$(GOLANGCI_LINT):
	hack/install-golangci-lint.sh $(GOLANGCI_LINT_VERSION) $(GOLANGCI_LINT)

.PHONY: docs
docs: ## Regenerate docs/reference/ and the generated blocks in docs/ (hack/gen-docs)
	go run ./hack/gen-docs

.PHONY: release-check
release-check: ## goreleaser check, a host-platform snapshot release, krew manifest validation and install
	hack/release-check.sh

.PHONY: release-tools
release-tools: ## Build release-check's pinned tools (goreleaser, krew) into $$KDYN_CACHE/tools
	hack/release-check.sh --tools-only

.PHONY: release-snapshot
release-snapshot: ## As release-check, building all six platforms into dist/ (14 min with a cold build cache)
	RELEASE_CHECK_ALL=1 hack/release-check.sh

.PHONY: golden
golden: ## Rewrite golden files from the current output
	UPDATE_GOLDEN=1 go test -count=1 ./...

.PHONY: bench
bench: ## Run the benchmarks (numbers go in docs/performance.md)
	hack/bench.sh

.PHONY: fuzz
fuzz: ## Run each fuzz target briefly (FUZZTIME=10s by default)
	hack/fuzz.sh $${FUZZTIME:-10s}

.PHONY: hashvectors
hashvectors: ## Regenerate XXH3 reference vectors with libxxhash (needs libxxhash-dev)
	hack/hashvectors/generate.sh

.PHONY: clean
clean: ## Remove build outputs
	rm -rf bin dist
