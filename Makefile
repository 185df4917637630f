# agentry — make help lists the targets.

GO      ?= go
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  := $(DESTDIR)$(PREFIX)/bin
MANDIR  := $(DESTDIR)$(PREFIX)/share/man
SHAREDIR := $(DESTDIR)$(PREFIX)/share

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X github.com/agentry/agentry/lib/version.version=$(VERSION)

CMDS  := $(notdir $(wildcard cmd/*))
BINS  := $(addprefix bin/,$(CMDS))
MAN1  := $(wildcard man/*.1)
MAN5  := $(wildcard man/*.5)
MAN7  := $(wildcard man/*.7)

.PHONY: all test test-gates setup test-peers fmt-check vet race scripts man-lint fuzz install demo bench bench-ab pgo clean help FORCE

all: $(BINS) ## build every command into ./bin

# build-bin BUILD-FLAGS, PACKAGE: go build the rule's target, then put a
# copy in place. The linker writes its output through mmap, and a binary run from
# those page-cache pages starts ~0.4 ms slower (measured, every run, until
# the pages are evicted) than the same bytes written by cp, as install(1)
# and a package manager write them. The copy goes in by rename, so a
# binary that is running is never written to.
define build-bin
	@mkdir -p bin
	CGO_ENABLED=0 $(GO) build -trimpath $(1) -ldflags "$(LDFLAGS)" -o $(@D)/.$(@F).link $(2)
	@cp $(@D)/.$(@F).link $(@D)/.$(@F).new && mv -f $(@D)/.$(@F).new $@ && rm -f $(@D)/.$(@F).link
endef

bin/%: FORCE
	$(call build-bin,,./cmd/$*)

# make test first installs what the tests need and the machine lacks, or
# stops with the command that does, before anything runs (tests/setup.sh);
# SETUP=no skips that step.
SETUP ?= yes
test: setup ## every gate: gofmt, vet, race tests with the script suite, man lint (SETUP=no: skip installing what they need)
	@$(MAKE) --no-print-directory test-gates

test-gates: fmt-check vet race man-lint

setup: ## install what make test needs besides Go (apt-get as root or with sudo -n, or brew), or say how
	@if [ "$(SETUP)" != no ]; then bash tests/setup.sh; fi

fmt-check: ## fail if any Go file is not gofmt-clean
	@out="$$(gofmt -l cmd lib tests bench)"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet: ## go vet
	$(GO) vet ./...

# The race detector needs cgo, so a C compiler; without one the same tests
# run without it, and say so.
race: all ## unit tests and the testscript suite (against ./bin), with the race detector where there is a C compiler
	@if [ "$$($(GO) env CGO_ENABLED)" = 1 ] && command -v "$$($(GO) env CC)" >/dev/null; then race=-race; else \
	  race=; echo "race: no C compiler, so no race detector: the tests run without -race (apt-get install gcc for it)"; fi; \
	echo "AGENTRY_BIN=$(CURDIR)/bin $(GO) test $$race -count=1 -timeout 30m ./..."; \
	AGENTRY_BIN=$(CURDIR)/bin $(GO) test $$race -count=1 -timeout 30m ./...

scripts: all ## only the testscript suite in tests/scripts
	AGENTRY_BIN=$(CURDIR)/bin $(GO) test -count=1 -timeout 30m -run 'TestScripts' ./tests/

PEERS_DIR ?= $(HOME)/.cache/agentry-peers
test-peers: all ## runagent against the real claude and codex CLIs, offline (installs them, pinned, into PEERS_DIR)
	@if [ "$(SETUP)" != no ]; then bash tests/setup.sh --peers; fi
	@bash tests/peers/install.sh "$(PEERS_DIR)"
	$(GO) test -count=1 -run XXX ./tests/peers/ >/dev/null  # compile while the network is there
	@# Where a network namespace can be made (root), the tests run with loopback
	@# only, which proves that nothing in them reaches outside the machine.
	@if unshare -n true 2>/dev/null; then \
	  echo "test-peers: in a network namespace with loopback only"; \
	  AGENTRY_PEERS="$(PEERS_DIR)" AGENTRY_BIN=$(CURDIR)/bin unshare -n sh -c 'ip link set lo up && exec $(GO) test -count=1 -timeout 45m -v ./tests/peers/'; \
	else \
	  AGENTRY_PEERS="$(PEERS_DIR)" AGENTRY_BIN=$(CURDIR)/bin $(GO) test -count=1 -timeout 45m -v ./tests/peers/; \
	fi
	@# make test skips the tests that drive agent-host --acp through the official
	@# ACP SDK when it is not installed; install.sh has put it in place, so they run here.
	AGENTRY_PEERS="$(PEERS_DIR)" AGENTRY_BIN=$(CURDIR)/bin $(GO) test -count=1 -timeout 30m -v -run '^TestACP' ./tests/

man-lint: ## lint every man page with mandoc (without mandoc: the Go-side subset of its checks)
	@if command -v mandoc >/dev/null; then echo "mandoc -Tlint -Wwarning $(MAN1) $(MAN5) $(MAN7)"; mandoc -Tlint -Wwarning $(MAN1) $(MAN5) $(MAN7); else \
	  echo "man-lint: mandoc is not installed, so only the Go-side check runs (apt-get install mandoc for the full lint)"; \
	  $(GO) test -count=1 -run 'TestManPagesWellFormed|TestLintMdoc' ./tests/; fi

FUZZTIME ?= 30s
# Minimizing a new input may take the fuzzer up to a minute by default, with
# no execs counted meanwhile; 5s keeps the time spent on finding things.
fuzz: ## run every fuzz test for FUZZTIME (default 30s) each
	@for pkg in $$($(GO) list ./lib/...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg || exit 1; \
	  done; \
	done

install: all ## install binaries, man pages and bash/zsh/fish completions under DESTDIR/PREFIX
	install -d $(BINDIR) $(MANDIR)/man1 $(MANDIR)/man5 $(MANDIR)/man7 \
	  $(SHAREDIR)/bash-completion/completions $(SHAREDIR)/zsh/site-functions $(SHAREDIR)/fish/vendor_completions.d
	install -m 0755 $(BINS) $(BINDIR)/
	install -m 0644 $(MAN1) $(MANDIR)/man1/
	$(if $(MAN5),install -m 0644 $(MAN5) $(MANDIR)/man5/)
	$(if $(MAN7),install -m 0644 $(MAN7) $(MANDIR)/man7/)
	@# svc-monitor is started by svc, never typed: it has no completions.
	@set -e; for c in $(filter-out svc-monitor,$(CMDS)); do \
	  bin/$$c --completion bash > $(SHAREDIR)/bash-completion/completions/$$c; \
	  bin/$$c --completion zsh  > $(SHAREDIR)/zsh/site-functions/_$$c; \
	  bin/$$c --completion fish > $(SHAREDIR)/fish/vendor_completions.d/$$c.fish; \
	done
	@echo "installed $(CMDS) under $(DESTDIR)$(PREFIX)"

demo: all ## build, then run the suite end to end on generated agent traffic
	@bash demo/demo.sh

bench: all ## time ndjson against jq and grep -F on four ~250 MB corpora and a transcript-shaped one, svc and agent-host against their peers (installs jq if missing)
	@bash bench/bench.sh

bench-ab: bin/ndjson ## ./bin/ndjson against baseline binaries (AB_BASES, default /tmp/ndjson-b58), interleaved, per verb and corpus
	@bash bench/ab.sh

pgo: ## gather cmd/ndjson/default.pgo, the profile ndjson is compiled with, from make bench's verbs over its corpora
	@bash bench/pgo.sh

clean: ## remove build output
	rm -rf bin

help: ## this list
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'
