# nse — run `make help` for the targets.
SHELL := /bin/bash
SWIFT ?= swift
# Debian packages the build and the tests need.
APT_PACKAGES := libsodium-dev libjansson-dev libcurl4-openssl-dev libsqlite3-dev libssl-dev zlib1g-dev pkg-config python3 python3-venv curl openssl jq nghttp2-server nghttp2-client sip-tester linphone-cli time haproxy postgresql \
  kamailio kamailio-utils-modules kamailio-extra-modules kamailio-sqlite-modules kamailio-tls-modules \
  chromium chromium-driver fonts-dejavu-core
RELEASE_FLAGS := -c release --static-swift-stdlib
RELEASE_BIN = $(shell $(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)
DEBUG_BIN = $(shell $(SWIFT) build --show-bin-path)

.PHONY: help deps build debug test interop demo bench soak clean fuzz test-asan test-tsan order-functions lint format

help: ## Show this help.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-9s %s\n", $$1, $$2}'

deps: ## Install the Debian packages the build needs (only the missing ones).
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps ## Build the release binaries (static Swift runtime) into .build/release.
	$(SWIFT) build $(RELEASE_FLAGS)
	@echo "binaries: $(RELEASE_BIN)/nse $(RELEASE_BIN)/nse-tool $(RELEASE_BIN)/nse-extension $(RELEASE_BIN)/nse-app (keep them together)"

debug: deps
	$(SWIFT) build

test: deps ## Build, then run every test: unit tests and end-to-end tests of the built nse binary.
	$(SWIFT) build
	$(SWIFT) build --build-tests
	# One suite at a time: the end-to-end suites run many real processes and servers each, and on 2 cores
	# running them all at once starves the timing-bound tests (budgets, timeouts) of CPU.
	# The output is kept to count the skipped tests: one skipped for want of a tool make deps installs fails the run.
	NSE_BIN_DIR="$(DEBUG_BIN)" $(SWIFT) test --skip-build --no-parallel 2>&1 | tee .build/test-output.log; \
	  test $${PIPESTATUS[0]} -eq 0
	python3 scripts/check-skips.py .build/test-output.log
	# The scenario corpus, as a user's CI would replay theirs.
	"$(DEBUG_BIN)/nse" replay fixtures/cases --junit .build/replay-junit.xml
	# Again with each push's process forked by the extension's fork server: the same outcomes, case for case.
	"$(DEBUG_BIN)/nse" replay fixtures/cases --extension-launch fork --junit .build/replay-fork-junit.xml
	# Every shell example of README.md and docs/ run as written (or checked against --help), and the case counts.
	NSE_BIN_DIR="$(DEBUG_BIN)" python3 scripts/doc-examples.py
	# A real APNs client from PyPI (aioapns, in a venv kept in .build) against nse serve.
	NSE_BIN_DIR="$(DEBUG_BIN)" bash scripts/interop-aioapns.sh
	# Two more APNs clients from PyPI (pyapns_client, kalyke-apns; venvs in .build), then providers through HAProxy (examples/haproxy).
	NSE_BIN_DIR="$(DEBUG_BIN)" bash scripts/interop-apns-clients.sh
	# Both servers' /metrics read by a real Prometheus parser (prometheus-client from PyPI, venv in .build) while pushes and a SIP MESSAGE go through.
	NSE_BIN_DIR="$(DEBUG_BIN)" bash scripts/interop-metrics.sh
	# Live Activity pushes from two PyPI clients (aioapns, kalyke-apns) and the channel/broadcast API with a signed token.
	NSE_BIN_DIR="$(DEBUG_BIN)" bash scripts/interop-live-activities.sh
	# The SDK as a SwiftPM dependency: examples/swiftpm-extension built, its unit tests run, its executable run by nse.
	NSE_BIN_DIR="$(DEBUG_BIN)" bash scripts/sdk-swiftpm.sh
	# A real Kamailio (examples/kamailio) holding MESSAGEs and pushing to nse serve over UDP, TCP and TLS.
	NSE_BIN_DIR="$(DEBUG_BIN)" python3 scripts/interop-kamailio.py
	# A fleet as examples/fleet/run.sh starts it (PostgreSQL, three nodes, HAProxy), 10,000 devices, a node killed mid-run.
	NSE_BIN_DIR="$(DEBUG_BIN)" python3 scripts/interop-fleet.py
	# The lock-screen page in a real browser (chromium headless, selenium from PyPI in .build); screenshot in .build.
	NSE_BIN_DIR="$(DEBUG_BIN)" python3 scripts/browser-lockscreen.py || [ $$? = 77 ]
	# One minute of the soak: both servers under load and faults; nothing lost, nothing leaked, SIGTERM exits 0.
	NSE_BIN_DIR="$(DEBUG_BIN)" python3 scripts/soak.py --minutes 1
	# A smoke of the benchmark harness (no timings judged); runs the peer only if linphone-daemon is installed.
	NSE_BIN_DIR="$(DEBUG_BIN)" python3 bench/bench.py --quick

interop: deps ## Interop tests: aioapns (PyPI) pushes to nse serve (tokens, certificates); Kamailio holds and pushes MESSAGEs.
	$(SWIFT) build
	NSE_BIN_DIR="$(DEBUG_BIN)" bash scripts/interop-aioapns.sh
	NSE_BIN_DIR="$(DEBUG_BIN)" bash scripts/interop-apns-clients.sh
	NSE_BIN_DIR="$(DEBUG_BIN)" bash scripts/interop-live-activities.sh
	NSE_BIN_DIR="$(DEBUG_BIN)" python3 scripts/interop-kamailio.py

demo: build ## The main job on the embedded default: seal a message to a fresh device and show what the lock screen shows.
	NSE_BIN_DIR="$(RELEASE_BIN)" bash scripts/demo.sh

# The real peer `make bench` measures nse against (Debian's linphone-daemon, liblinphone 5.1), and GNU time for its peak RSS.
BENCH_APT_PACKAGES := linphone-cli time

bench: build ## Benchmarks: nse run against C fork+exec floors and linphone-daemon (the real peer), one MESSAGE fanned out to 100 devices, then nse serve under h2load.
	@missing=""; for p in $(BENCH_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	NSE_BIN_DIR="$(RELEASE_BIN)" python3 bench/bench.py

SOAK_MINUTES ?= 10
# Swift sources the formatter owns (.swift-format: 4 spaces, 120 columns).
FORMAT_PATHS := Package.swift Sources Tests Fuzz/Package.swift Fuzz/Sources

lint: deps ## swift-format in strict lint mode; the module diagram in docs/architecture.md, the reason codes in docs/result.md and the doc comments' links up to date; log metadata keys and loggers as docs/architecture.md says.
	$(SWIFT) format lint --strict --recursive --parallel $(FORMAT_PATHS)
	python3 scripts/module-graph.py --check
	python3 scripts/check-reasons.py
	python3 scripts/check-log-keys.py

format: ## Rewrite the Swift sources as .swift-format says (then `make lint` passes).
	$(SWIFT) format format --in-place --recursive --parallel $(FORMAT_PATHS)

order-functions: deps ## Re-make the lists of functions a notification runs, which the release linker places first (needs valgrind).
	@dpkg -s valgrind >/dev/null 2>&1 || { SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; $$SUDO apt-get install -y -qq valgrind >/dev/null; }
	python3 scripts/order-functions.py

soak: build ## nse serve + nse sip-server under mixed load and faults for SOAK_MINUTES (10): nothing lost, nothing leaked.
	NSE_BIN_DIR="$(RELEASE_BIN)" python3 scripts/soak.py --minutes $(SOAK_MINUTES)

# Fuzzing (docs/fuzzing.md): seconds per target, and which targets (all, or names separated by commas).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= all
ASAN_FLAGS := --sanitize=address --scratch-path .build-asan
# Leaks of the toolchain's own libraries are suppressed; leaks in nse's code fail the run.
ASAN_ENV := LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan-suppressions.txt NSE_SANITIZER_MEMORY_FACTOR=3
# A sanitized extension's RSS carries shadow memory: its memory limit is scaled (NotificationHost.limitsForThisRun).
# Reports of accesses whose synchronisation ThreadSanitizer cannot see (Synchronization.Mutex contended) are suppressed one by one.
TSAN_ENV := TSAN_OPTIONS=suppressions=$(CURDIR)/scripts/tsan-suppressions.txt NSE_SANITIZER_MEMORY_FACTOR=4
TSAN_FLAGS := --sanitize=thread --scratch-path .build-tsan

fuzz: deps ## libFuzzer on the parsers, FUZZ_SECONDS (60) per target: fails on a crash and keeps the reproducer.
	FUZZ_SECONDS="$(FUZZ_SECONDS)" FUZZ_TARGETS="$(FUZZ_TARGETS)" SWIFT="$(SWIFT)" bash scripts/fuzz.sh

# The whole test suite, as `make test` runs it, on binaries and tests built with a sanitizer in their own scratch path.
test-asan: deps ## The test suite under AddressSanitizer (build in .build-asan).
	nice -n 10 $(SWIFT) build --build-tests $(ASAN_FLAGS)
	$(ASAN_ENV) NSE_BIN_DIR="$$($(SWIFT) build $(ASAN_FLAGS) --show-bin-path)" $(SWIFT) test --skip-build --no-parallel $(ASAN_FLAGS)
	$(ASAN_ENV) "$$($(SWIFT) build $(ASAN_FLAGS) --show-bin-path)/nse" replay fixtures/cases --junit .build-asan/replay-junit.xml
	$(ASAN_ENV) NSE_BIN_DIR="$$($(SWIFT) build $(ASAN_FLAGS) --show-bin-path)" bash scripts/interop-aioapns.sh

test-tsan: deps ## The test suite under ThreadSanitizer (build in .build-tsan).
	nice -n 10 $(SWIFT) build --build-tests $(TSAN_FLAGS)
	$(TSAN_ENV) NSE_BIN_DIR="$$($(SWIFT) build $(TSAN_FLAGS) --show-bin-path)" $(SWIFT) test --skip-build --no-parallel $(TSAN_FLAGS)
	$(TSAN_ENV) "$$($(SWIFT) build $(TSAN_FLAGS) --show-bin-path)/nse" replay fixtures/cases --junit .build-tsan/replay-junit.xml
	$(TSAN_ENV) NSE_BIN_DIR="$$($(SWIFT) build $(TSAN_FLAGS) --show-bin-path)" bash scripts/interop-aioapns.sh

clean: ## Remove build products.
	rm -rf .build
