# Tailor — every entry point a developer or CI needs. The Kubernetes releases live in
# hack/versions.sh (the default, and the matrix `make test` covers); KUBE_VERSION=<listed release>
# in the environment points any target at another one (`KUBE_VERSION=1.34.4 make dev`). The
# test-bed cluster is hack/cluster.sh; test tiers and the matrix, hack/test.sh.
SHELL := /bin/bash
MODE ?= control-plane
export PATH := $(HOME)/.cache/tailor/node-tools:$(PATH)

.PHONY: help deps build typecheck lint lint-prune lint-moved format test test-unit test-argocd test-chart test-integration test-cri test-e2e test-fault \
        cluster-up cluster-down cluster-status cluster-clean dev bench kube-binaries kube-binaries-all kwok-binaries kruise-binaries image

help:
	@echo "make dev     local cluster with Tailor running in it and a sample applied"
	@echo "make test    lint + typecheck + unit + argocd + chart + integration + cri + e2e + fault on the default Kubernetes,"
	@echo "             then e2e on the other releases in hack/versions.sh (starts and stops its own cluster)"
	@echo "KUBE_VERSION=1.34.4 make dev | test | test-e2e | cluster-up ...   the same on one listed release"
	@echo "make lint    ESLint, Prettier --check, layering (dependency-cruiser); make format rewrites"
	@echo "make lint-prune   lower the complexity ratchet after simplifying; make lint-moved FILES=\"a.ts b.ts\" after moving code"
	@echo "make cluster-up [MODE=control-plane|full] | cluster-down | cluster-status | cluster-clean"
	@echo "make bench   benchmarks (prints measured ratios)"
	@echo "make image   Tailor's OCI image (no Docker), imported into the test bed's containerd"
	@echo "make install-plugin   kubectl tailor status <clone>"

# npm ci only when the lockfile changed since the last install.
node_modules/.installed: package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

deps: node_modules/.installed

build: deps
	npx tsc -p tsconfig.build.json

typecheck: deps
	npx tsc --noEmit -p tsconfig.json

# ESLint (type-checked rules), Prettier, the layering of docs/architecture.md §2 Folders and layering (dependency-cruiser),
# and ShellCheck over the shell scripts (hack/shellcheck.sh).
# ESLint reads eslint-suppressions.json, the function-shape ratchet
# (docs/decisions/0025-guard-rails-ratchet-and-transitive-purity.md): it fails when a file exceeds
# the limits by more than its count there, and when a count is no longer used (make lint-prune).
lint: deps
	npx eslint src test bench
	npx prettier --check "src/**/*.ts" "test/**/*.ts" "bench/**/*.ts"
	npx depcruise src --config .dependency-cruiser.cjs
	bash hack/shellcheck.sh

# Lowers the ratchet's counts to what the code now exceeds, after a function got simpler.
lint-prune: deps
	npx eslint src test bench --prune-suppressions

# After moving code between files, not writing new code: sets the ratchet's counts of FILES (the
# files code left and the files it went to) to what they exceed now. Review the counts it changes.
RATCHET_RULES = ratchet/complexity ratchet/max-params max-depth
lint-moved: deps
	@test -n "$(FILES)" || { echo 'usage: make lint-moved FILES="src/from.ts src/to.ts"'; exit 2; }
	-npx eslint $(FILES) --prune-suppressions > /dev/null
	npx eslint $(FILES) $(addprefix --suppress-rule ,$(RATCHET_RULES))

format: deps
	npx prettier --write "src/**/*.ts" "test/**/*.ts" "bench/**/*.ts"

# The default release, or KUBE_VERSION's; kube-binaries-all builds every release `make test` runs.
kube-binaries:
	bash hack/build-k8s.sh

kube-binaries-all:
	@. hack/versions.sh && for v in $$KUBE_VERSIONS; do KUBE_VERSION=$$v bash hack/build-k8s.sh || exit 1; done

# kwok (simulated nodes for the scale benchmark), pinned in hack/versions.sh, cached like the above.
kwok-binaries:
	bash hack/build-kwok.sh

# OpenKruise's kruise-manager (the peer in bench/peer.bench.ts), pinned in hack/versions.sh.
kruise-binaries:
	bash hack/build-kruise.sh

test: deps
	bash hack/test.sh all

test-unit test-argocd test-chart test-integration test-cri test-e2e test-fault: deps
	bash hack/test.sh $(patsubst test-%,%,$@)

cluster-up:
	bash hack/cluster.sh up $(MODE)

cluster-down:
	bash hack/cluster.sh down

cluster-status:
	bash hack/cluster.sh status

cluster-clean: cluster-down
	rm -rf .tailor/cluster

dev: deps
	bash hack/dev.sh

bench: deps
	bash hack/bench.sh

image: deps
	bash hack/image.sh

# kubectl finds plugins on PATH: link bin/kubectl-tailor into /usr/local/bin when writable, else
# ~/.local/bin (PLUGIN_DIR overrides), and say which; then `kubectl tailor status <clone>` works.
# bin/kubectl_complete-tailor goes next to it: kubectl 1.26+ runs it to complete the plugin's words.
.PHONY: install-plugin
install-plugin: build
	@chmod +x bin/kubectl-tailor bin/kubectl_complete-tailor; \
	dir="$${PLUGIN_DIR:-}"; \
	if [ -z "$$dir" ]; then if [ -w /usr/local/bin ]; then dir=/usr/local/bin; else dir="$$HOME/.local/bin"; fi; fi; \
	mkdir -p "$$dir" && ln -sfn "$(CURDIR)/bin/kubectl-tailor" "$$dir/kubectl-tailor" && \
	ln -sfn "$(CURDIR)/bin/kubectl_complete-tailor" "$$dir/kubectl_complete-tailor" && \
	echo "installed $$dir/kubectl-tailor and $$dir/kubectl_complete-tailor (kubectl 1.26+ completes \`kubectl tailor <TAB>\` through it)"; \
	echo "try: kubectl tailor status <clone>; kubectl tailor history <clone>"; \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "note: $$dir is not on PATH; add it: export PATH=\"$$dir:\$$PATH\"";; esac
