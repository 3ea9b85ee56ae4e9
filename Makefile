# Medallion — build, test and measure.
#
#   make demo     build and run the daemon on a throwaway data dir, and show it working
#   make test     what CI runs: gofmt check, go vet, staticcheck, go test -race
#   make bench    the benchmarks whose figures are in the README (MEDALLION_PERF=1 adds the
#                 10,000-version history and the million-medallion store; minutes)
#   make eval     score Tier 0 curation against the hand labels in ../shared/corpus/labels
#   make eval-llm Tier 0 against Tier 0 + Tier 1 with recorded model answers (../shared/eval/llm_replay.py)
#   make eval-baseline  rewrite testdata/eval/baseline.json, the eval's ratchet (say why in the commit)
#   make run      run medalliond in the foreground on your default config
#   make install  go install both binaries into $(GOBIN) (default ~/go/bin)
#   make test-agents  the save-file loop with the real Claude Code, Codex and Gemini CLIs from npm
#   make profile  the daemon's CPU profile under the benchmarks' workloads, in bin/medalliond.pprof

GO          ?= go
BIN         := bin
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS     := -s -w -X github.com/medallionhq/medallion/internal/version.Version=$(VERSION)
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(shell $(GO) env GOPATH)/bin/staticcheck
BENCHTIME   ?= 1x
# Pure-Go, statically linked binaries. With cgo, linking package net (pflag
# and the client need it) pulls in the C resolver and makes the binary load
# through ld.so and libc: 1.3 of medallionctl's 3.9 ms of CPU per run, paid
# by the SessionStart hook before every agent session. Nothing here needs cgo.
BUILDENV    := CGO_ENABLED=0

.PHONY: all build test test-agents fmt-check vet staticcheck unit bench profile eval eval-baseline eval-llm run install demo clean

all: build

# Each binary is copied over itself once linked (rewrite): the Go linker
# writes its output through mmap, and a file written that way starts 8-9 %
# slower than the same bytes written with write(2), for as long as its
# pages stay cached (medallionctl, Linux 6.18 ext4, farm-bench pairs; most
# likely the page cache's smaller folios). medallionctl runs before every
# agent session (issue 12). go build leaves an up-to-date copy as it is.
rewrite = for f in $(1); do cp "$$f" "$$f.tmp" && mv -f "$$f.tmp" "$$f" || exit 1; done

build:
	$(BUILDENV) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/medalliond ./cmd/medallionctl
	@$(call rewrite,$(BIN)/medalliond $(BIN)/medallionctl)

test: fmt-check vet staticcheck unit

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# The other systems' vet type-checks the code and tests built only there
# (a helper defined in a _linux file broke darwin's and windows' test
# builds unseen): about a minute each the first time, a second once cached.
vet:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...

$(STATICCHECK):
	GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

# jsonscancheck: the transcript parsers' in-place walks are checked
# against jsonscan.SkipValue at every step (see internal/jsonscan).
# TestHookFitsItsStack skips under -race, whose instrumentation deepens
# every frame: it runs once more without.
unit:
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 -tags jsonscancheck ./internal/jsonscan ./internal/transcript
	$(GO) test -count=1 -run TestHookFitsItsStack ./cmd/medallionctl

# The real agent CLIs (pinned npm packages, installed once into
# AGENTS_CACHE and reused) against our own fake model server, with the
# binaries as built here. Skips, saying so, without npm or its registry.
AGENTS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/medallion-test-agents
test-agents: build
	MEDALLION_AGENTS_BIN=$(abspath $(BIN)) MEDALLION_AGENTS_CACHE=$(AGENTS_CACHE) \
		$(GO) test -count=1 -timeout 20m -v ./internal/e2e/agents

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

# The daemon's CPU profile under the benchmarks' workloads: every daemon
# they start writes its own (MEDALLION_CPU_PROFILE), merged into
# bin/medalliond.pprof. Backfills of real transcripts weigh most (the
# shared corpus's Claude Code, Codex and Gemini sessions, and 16 copies of
# its Claude Code ones), then 200 MB of generated sessions, then save-file
# loads. Where the CPU goes: go tool pprof -top bin/medalliond.pprof. It is
# also the profile to try profile-guided optimisation with (README,
# Performance): -trimpath keeps the folders of whoever made it out, and it
# holds function names and addresses only. Needs ../shared/corpus; about
# 5 minutes.
PROFILES := $(abspath $(BIN))/profiles
PROFILE_TEST := GOFLAGS=-trimpath MEDALLION_CPU_PROFILE=$(PROFILES) MEDALLION_TRACE= $(GO) test -count=1 -run '^$$' -timeout 30m ./internal/e2e
profile:
	@test -d ../shared/corpus/claude-code || { echo "make profile needs the transcripts of ../shared/corpus"; exit 1; }
	rm -rf $(PROFILES)
	$(PROFILE_TEST) -bench '^BenchmarkCorpusBackfill$$' -benchtime 3x
	MEDALLION_PERF=1 MEDALLION_PERF_CORPUS=16 MEDALLION_PERF_IDLE=5s $(PROFILE_TEST) -bench '^BenchmarkFootprintBackfill$$' -benchtime 1x
	$(PROFILE_TEST) -bench '^BenchmarkBackfill$$' -benchtime 1x
	$(PROFILE_TEST) -bench '^Benchmark(CtlLoad|HookUp)$$' -benchtime 2000x
	$(GO) tool pprof -proto $$(find $(PROFILES) -name '*.pprof' -size +0) > $(BIN)/medalliond.pprof
	@ls -l $(BIN)/medalliond.pprof

# Skips (and says so) when ../shared/corpus/labels or python3 is absent.
eval:
	$(GO) test -count=1 -run '^TestEval$$' -v ./internal/curate

# Tier 0 against Tier 0 + Tier 1 on the labelled sessions, the model being
# ../shared/eval/llm_replay.py serving recorded answers from EVAL_LLM_DIR
# (kept outside the repository). Prompts without an answer are left in
# EVAL_LLM_DIR/pending for a model to answer; run again after answering.
EVAL_LLM_DIR ?= $(abspath ../eval-llm-recordings)
eval-llm:
	@mkdir -p $(EVAL_LLM_DIR); rm -f $(EVAL_LLM_DIR)/port
	@python3 ../shared/eval/llm_replay.py $(EVAL_LLM_DIR) --port-file $(EVAL_LLM_DIR)/port --max-seconds 3000 & \
	pid=$$!; trap "kill $$pid" EXIT; \
	for i in $$(seq 50); do [ -s $(EVAL_LLM_DIR)/port ] && break; sleep 0.1; done; \
	MEDALLION_EVAL_LLM_URL=http://127.0.0.1:$$(cat $(EVAL_LLM_DIR)/port)/v1 MEDALLION_EVAL_LLM_DIR=$(EVAL_LLM_DIR) \
		$(GO) test -count=1 -timeout 60m -run '^TestEvalLLM$$' -v ./internal/curate

# The eval's ratchet: each labelled file's counts as measured now. TestEval
# fails when a file in it loses recall or gains unmatched items.
eval-baseline:
	MEDALLION_EVAL_BASELINE=write $(GO) test -count=1 -run '^TestEval$$' -v ./internal/curate

run: build
	$(BIN)/medalliond run

install:
	$(BUILDENV) $(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/medalliond ./cmd/medallionctl
	@dir=$$($(GO) env GOBIN); [ -n "$$dir" ] || dir=$$($(GO) env GOPATH | cut -d: -f1)/bin; \
	$(call rewrite,"$$dir/medalliond" "$$dir/medallionctl")

demo: build
	@./$(BIN)/medallionctl --help >/dev/null
	@sh testdata/demo.sh $(BIN)

clean:
	rm -rf $(BIN)
