# gaend: the targets a new user runs. `make check` is what CI runs (.ci/run).
# SPDX-License-Identifier: GPL-3.0-or-later

PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
BINDIR = $(DESTDIR)$(PREFIX)/bin

# Where the packaging files go (all overridable; DESTDIR is prepended to each). systemd reads units
# and sysusers.d from /usr/local/lib as well as /usr/lib, so those follow PREFIX; dbus-daemon and
# polkitd read only /usr/share (and /etc, which is the administrator's), so those do not.
SYSCONFDIR ?= /etc
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
SYSUSERS_DIR ?= $(PREFIX)/lib/sysusers.d
DBUS_SYSTEM_CONF_DIR ?= /usr/share/dbus-1/system.d
DBUS_SYSTEM_SERVICES_DIR ?= /usr/share/dbus-1/system-services
POLKIT_ACTIONS_DIR ?= /usr/share/polkit-1/actions
# udev reads rules from /usr/lib/udev/rules.d (and /etc), never from under /usr/local.
UDEV_RULES_DIR ?= /usr/lib/udev/rules.d
DOCDIR ?= $(PREFIX)/share/doc/gaend
MANDIR ?= $(PREFIX)/share/man
# The directory the installed unit runs gaend from (@BINDIR@ in systemd/gaend.service): where
# `install` puts it, without DESTDIR. scripts/check-packaging points it at a test executable.
UNIT_BINDIR ?= $(PREFIX)/bin

# Debian packages the build needs: the C libraries (through pkg-config) and pkg-config itself.
# The D-Bus test peer needs dbus-python and PyGObject from Debian, dbus-daemon, gdbus (libglib2.0-bin)
# and busctl (only in systemd on Debian 12). The key server's PostgreSQL tests run a private server
# from postgresql-15: the versioned package, not the `postgresql` metapackage, because its binaries'
# directory (POSTGRES_BIN) names the version, and the metapackage adds nothing but that dependency.
# The Debian package's test (scripts/deb-test) needs lintian. The key-server replicas' test and
# benchmark put HAProxy in front of them, as a region's load balancer. The owner's page is tested
# in Cockpit's web service and bridge with Debian's headless Chromium and chromedriver (and a
# font, or its screenshots show boxes).
APT_PACKAGES = pkg-config libssl-dev libdbus-1-dev libbluetooth-dev libsqlite3-dev libpq-dev zlib1g-dev openssl libcurl4 libcurl4-openssl-dev python3 python3-venv python3-jsonschema tmux \
	python3-dbus python3-gi dbus-daemon libglib2.0-bin systemd postgresql-15 lintian faketime haproxy \
	cockpit-ws cockpit-bridge chromium chromium-driver fonts-liberation
POSTGRES_BIN = /usr/lib/postgresql/15/bin

# The test peers: Bumble's virtual controllers and host, pinned, in a venv of the project's own.
BUMBLE_VERSION = 0.0.236
BUMBLE_VENV = .venv-bumble
# python-dbusmock, pinned, for the bluetoothd stand-in (testbed/bluez_template.py). Its venv is built
# with Debian's python3 and --system-site-packages, because dbus-python and gi come from Debian.
DBUSMOCK_VERSION = 0.38.1
DBUSMOCK_VENV = .venv-dbusmock

PRODUCTS = gaend gaenctl gaen-keyserver
# The release build: what `make install` ships, and so what the process suites, the demo and the
# VM stage run (a pointer that outlives its buffer may show only in an optimized build).
RELEASE_BIN = $(CURDIR)/.build/release
# The release flags, the same for every release build (another set would rebuild the whole tree):
# Swift's standard library and Foundation linked into each program, so the target needs no Swift
# toolchain, only Debian's libraries (the package's Depends); without SwiftPM's RUNPATH $ORIGIN
# (it is for Swift's shared libraries, which are linked in: left, it sends the loader to look
# beside the program first); and bound at load time (-z now: full RELRO, as Debian's hardening
# flags ask). scripts/vm-test and scripts/bench-reports read them with `make -s release-flags`.
RELEASE = -c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker now

# Prints how long a stage of `make check` took: $(call timed,NAME,COMMAND).
timed = @start=$$(date +%s); $(2) || exit 1; echo "check: $(1) took $$(( $$(date +%s) - start )) s"

.PHONY: all deps test-peers build check check-packaging check-sanitize check-asan check-tsan test bench install install-data uninstall clean vm-test demo

all: build

# Installs the Debian packages when run as root; otherwise prints the exact command and fails.
deps:
	@missing=""; \
	for package in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$package"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all Debian packages present ($(APT_PACKAGES))"; exit 0; fi; \
	if [ "$$(id -u)" = "0" ]; then \
		echo "deps: installing$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	else \
		echo "deps: missing Debian packages:$$missing"; \
		echo "deps: run: sudo apt-get install -y$$missing"; \
		exit 1; \
	fi

# The venvs the radio tests run their controller fixture (testbed/controllers.py) and the
# bluetoothd stand-in (testbed/bluez_template.py) in.
test-peers: $(BUMBLE_VENV)/.installed $(DBUSMOCK_VENV)/.installed

$(BUMBLE_VENV)/.installed:
	python3 -m venv $(BUMBLE_VENV)
	$(BUMBLE_VENV)/bin/pip install --quiet --disable-pip-version-check bumble==$(BUMBLE_VERSION)
	touch $@

# Debian's /usr/bin/python3 (from python3-minimal), not whatever python3 comes first on PATH.
$(DBUSMOCK_VENV)/.installed:
	debpy=$$(dpkg -L python3-minimal | grep -E 'bin/python3$$') && "$$debpy" -m venv --system-site-packages $(DBUSMOCK_VENV)
	$(DBUSMOCK_VENV)/bin/pip install --quiet --disable-pip-version-check python-dbusmock==$(DBUSMOCK_VERSION)
	touch $@

# Release binaries in .build/release.
build: deps
	for product in $(PRODUCTS); do $(SWIFT) build $(RELEASE) --product $$product || exit 1; done

# Three beacons on virtual radios and a key server on loopback: A and B meet, A shares its keys,
# B is told of the exposure and C is not (scripts/demo; about 40 s after the build).
demo: build $(BUMBLE_VENV)/.installed
	scripts/demo --bin $(RELEASE_BIN) --python $(CURDIR)/$(BUMBLE_VENV)/bin/python

# What the test suites need to find their peers.
TEST_ENV = GAEND_BUMBLE_PYTHON=$(CURDIR)/$(BUMBLE_VENV)/bin/python \
	GAEND_DBUSMOCK_PYTHON=$(CURDIR)/$(DBUSMOCK_VENV)/bin/python \
	GAEND_POSTGRES_BIN=$(POSTGRES_BIN) \
	GAEND_HAPROXY=/usr/sbin/haproxy \
	GAEND_COCKPIT_WS=/usr/lib/cockpit/cockpit-ws \
	GAEND_CHROMEDRIVER=/usr/bin/chromedriver \
	GAEND_CHROMIUM=/usr/bin/chromium

# Everything CI proves: dependencies, test peers, the release binaries, all tests (the unit suites
# in a debug build; every suite that starts gaend, gaenctl, gaen-keyserver or gaen-bench as a process runs the
# release binaries, through GAEND_PRODUCTS_DIR), the packaging, the demo and the VM stage on the
# release binaries, the suites under the sanitizers and each fuzzer for a few seconds. Each stage
# prints how long it took.
check: deps test-peers
	$(call timed,lint,$(MAKE) --no-print-directory lint)
	$(call timed,release build,$(MAKE) --no-print-directory build && $(SWIFT) build $(RELEASE) --product gaen-bench)
	$(call timed,debug build with tests,$(SWIFT) build --build-tests)
	$(call timed,tests (process suites on the release binaries),$(TEST_ENV) GAEND_PRODUCTS_DIR=$(RELEASE_BIN) $(SWIFT) test --skip-build)
	$(call timed,packaging,$(MAKE) --no-print-directory check-packaging)
	$(call timed,demo,$(MAKE) --no-print-directory demo)
	$(call timed,vm-test,GAEND_BIN_DIR=$(RELEASE_BIN) scripts/vm-test)
	$(call timed,deb-test,$(MAKE) --no-print-directory deb-test)
	$(call timed,sanitizers,$(MAKE) --no-print-directory check-sanitize)
	$(call timed,fuzzers (a few seconds each),$(MAKE) --no-print-directory check-fuzz)

# How the sanitized suites run: the Swift runtime's crash backtracer is off, because it reads other
# threads' stacks in a way AddressSanitizer reports (a trap is then reported by the runtime's
# one-line message alone). GAEND_SANITIZER tells the suites that assert memory or CPU figures to
# skip them (a sanitizer's quarantine and checks make them meaningless). LeakSanitizer is off: corelibs Foundation, libcurl and libcrypto leave
# allocations to the exit that it cannot attribute (docs/ARCHITECTURE.md, "Sanitizers").
TSAN_FLAGS = halt_on_error=0:second_deadlock_stack=1:suppressions=$(CURDIR)/testbed/sanitizers/tsan.supp
SANITIZER_ENV = SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 TSAN_OPTIONS=$(TSAN_FLAGS)
# At most 4 test cases at once under a sanitizer. Unbounded, every suite starts together and its
# instrumented programs with it: 69 runnable threads on 2 cores at the peak (/proc/loadavg), and
# one program could wait 15-25 s for the CPU, past a D-Bus call's timeout (docs/testing.md). With
# 4: 18 at the peak, and the ASan run took 77.6 s instead of 88.8.
SANITIZER_TEST_WIDTH = --experimental-maximum-parallelization-width 4
# The suites of the concurrent parts, for ThreadSanitizer; the key server's process suites run
# the instrumented gaen-keyserver (its connections, watchdogs and rate limits) under attack.
TSAN_SUITES = DBusTests|HCITests|DetectionTests|KeyServerTests|KeyServerConnectionLimitsTests|KeyServerNetworkBoundsTests|KeyServerAttackTests

# The suites under the sanitizers, each in a build folder of its own (docs/ARCHITECTURE.md,
# "Sanitizers"). AddressSanitizer runs every suite, the programs the process suites start included
# (they are the instrumented debug build of the same folder); ThreadSanitizer runs the suites of
# the concurrent parts: the D-Bus pump, the HCI driver, the detection worker and the key server
# (its library, and the server itself under the network suites).
check-sanitize: check-asan check-tsan

check-asan: deps test-peers
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	$(TEST_ENV) $(SANITIZER_ENV) GAEND_SANITIZER=address $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan $(SANITIZER_TEST_WIDTH)

# Swift's Mutex takes a contended lock in code TSan does not see; the preloaded wrapper
# (testbed/sanitizers/mutex_tsan.c, built with the toolchain's clang for its swiftcall) shows it.
SWIFT_CLANG = $(dir $(realpath $(shell command -v $(SWIFT))))clang
# Reports go to files (log_path) and are printed shortened after the run, last, so that the lines
# naming a race end the log (testbed/sanitizers/summarize-reports); the files keep every frame.
TSAN_REPORTS = $(CURDIR)/.build-tsan/reports
check-tsan: deps test-peers
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	$(SWIFT_CLANG) -shared -fPIC -O1 -o .build-tsan/mutex_tsan.so testbed/sanitizers/mutex_tsan.c -ldl
	rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	status=0; $(TEST_ENV) $(SANITIZER_ENV) LD_PRELOAD=$(CURDIR)/.build-tsan/mutex_tsan.so \
		TSAN_OPTIONS=$(TSAN_FLAGS):log_path=$(TSAN_REPORTS)/report \
		$(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan --filter '$(TSAN_SUITES)' $(SANITIZER_TEST_WIDTH) || status=$$?; \
	testbed/sanitizers/summarize-reports $(TSAN_REPORTS) || status=1; exit $$status

# The unit, D-Bus policy and polkit actions, installed into a scratch DESTDIR and checked with
# systemd-analyze (verify, security exposure <= 2.5), a private dbus-daemon and an XML parser.
check-packaging:
	scripts/check-packaging

# The kernel path alone (QEMU; a few minutes the first time).
vm-test:
	scripts/vm-test

# libFuzzer on every parser of untrusted bytes (Tests/Fuzz, scripts/fuzz): builds gaend-fuzz in
# .build-fuzz and runs each target for FUZZ_SECONDS (default 60) on a copy of its seed corpus;
# fails naming the input of any crash, timeout or out-of-memory. check-fuzz is a few seconds each.
.PHONY: fuzz check-fuzz
fuzz: deps
	SWIFT=$(SWIFT) scripts/fuzz

check-fuzz: deps
	SWIFT=$(SWIFT) FUZZ_SECONDS=5 scripts/fuzz

test: check

# swift-format (the toolchain's) over every Swift file, with the project's .swift-format; --strict
# fails on any finding. `make format` rewrites the files to match.
.PHONY: lint format
lint:
	$(SWIFT) format lint --strict --configuration .swift-format --recursive Sources Tests Package.swift
	scripts/check-docs

format:
	$(SWIFT) format format --in-place --configuration .swift-format --recursive Sources Tests Package.swift

# Benchmarks print figures; they are not tests.
bench: deps test-peers
	$(SWIFT) run $(RELEASE) gaen-bench crypto
	$(SWIFT) build $(RELEASE) --product gaen-keyserver
	$(SWIFT) run $(RELEASE) gaen-bench keyserver
	$(SWIFT) run $(RELEASE) gaen-bench keyserver-attack
	scripts/bench-replicas $(RELEASE_BIN)
	$(SWIFT) run $(RELEASE) gaen-bench traces
	$(SWIFT) build $(RELEASE) --product gaenctl
	$(SWIFT) run $(RELEASE) gaen-bench busy-detection
	$(SWIFT) build $(RELEASE) --product gaend
	$(SWIFT) run $(RELEASE) gaen-bench idle
	$(SWIFT) run $(RELEASE) gaen-bench idle --bluez-mock $(CURDIR)/.venv-dbusmock/bin/python --seconds 300
	scripts/bench-reports

install: build install-data
	install -d $(BINDIR)
	for product in $(PRODUCTS); do install -m 0755 .build/release/$$product $(BINDIR)/$$product; done
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	for program in gaenctl gaen-keyserver; do \
		.build/release/$$program --generate-completion-script bash >$(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$program && \
		.build/release/$$program --generate-completion-script zsh >$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_$$program && \
		.build/release/$$program --generate-completion-script fish >$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/$$program.fish || exit 1; \
	done

# The release flags, for the scripts that build on their own (one set, or the tree is rebuilt).
.PHONY: release-flags
release-flags:
	@echo $(RELEASE)

# The Debian package (scripts/make-deb): the release build with Swift's runtime linked in, so a Pi
# needs no toolchain. deb-test runs lintian on it (errors and warnings not overridden in
# packaging/lintian-overrides fail), installs it on a Debian without Swift, runs it and purges it.
.PHONY: deb deb-test
deb: build
	scripts/make-deb

deb-test: deb
	scripts/deb-test --deb $$(ls -t .build/deb/*.deb | head -1)

# Everything but the binaries. The configuration is installed only when absent (it is the
# administrator's), 0640 because it may hold the verification API key, and given to group gaend
# when that group exists; installing onto the running system (no DESTDIR) creates the user and
# group first, as a package's post-install step would.
install-data:
	install -d $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	sed 's|@BINDIR@|$(UNIT_BINDIR)|g' systemd/gaend.service >$(DESTDIR)$(SYSTEMD_UNIT_DIR)/gaend.service.tmp
	chmod 0644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/gaend.service.tmp
	mv $(DESTDIR)$(SYSTEMD_UNIT_DIR)/gaend.service.tmp $(DESTDIR)$(SYSTEMD_UNIT_DIR)/gaend.service
	install -D -m 0644 systemd/gaend.service.d/hci-radio.conf $(DESTDIR)$(DOCDIR)/examples/gaend.service.d/hci-radio.conf
	install -D -m 0644 systemd/gaend.sysusers $(DESTDIR)$(SYSUSERS_DIR)/gaend.conf
	install -D -m 0644 dbus-policy/org.gaend.conf $(DESTDIR)$(DBUS_SYSTEM_CONF_DIR)/org.gaend.conf
	install -D -m 0644 dbus-policy/org.gaend.service $(DESTDIR)$(DBUS_SYSTEM_SERVICES_DIR)/org.gaend.service
	install -D -m 0644 polkit/org.gaend.policy $(DESTDIR)$(POLKIT_ACTIONS_DIR)/org.gaend.policy
	install -D -m 0644 udev/60-gaend-indicator-led.rules $(DESTDIR)$(UDEV_RULES_DIR)/60-gaend-indicator-led.rules
	sed 's|@BINDIR@|$(UNIT_BINDIR)|g' systemd/gaen-keyserver.service >$(DESTDIR)$(SYSTEMD_UNIT_DIR)/gaen-keyserver.service.tmp
	chmod 0644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/gaen-keyserver.service.tmp
	mv $(DESTDIR)$(SYSTEMD_UNIT_DIR)/gaen-keyserver.service.tmp $(DESTDIR)$(SYSTEMD_UNIT_DIR)/gaen-keyserver.service
	install -D -m 0644 systemd/gaen-keyserver.sysusers $(DESTDIR)$(SYSUSERS_DIR)/gaen-keyserver.conf
	install -D -m 0644 etc/gaen-keyserver.env $(DESTDIR)$(DOCDIR)/examples/gaen-keyserver.env
	for hook in notify-desktop mail gpio-buzzer; do install -D -m 0644 examples/exposure-hook/$$hook $(DESTDIR)$(DOCDIR)/examples/exposure-hook/$$hook || exit 1; done
	for file in manifest.json index.html gaend.js gaend.css; do install -D -m 0644 cockpit/gaend/$$file $(DESTDIR)$(PREFIX)/share/cockpit/gaend/$$file || exit 1; done
	for page in docs/man/*.[0-9]; do [ -e $$page ] || continue; install -D -m 0644 $$page $(DESTDIR)$(MANDIR)/man$${page##*.}/$$(basename $$page) || exit 1; done
	@if [ -z "$(DESTDIR)" ] && command -v systemd-sysusers >/dev/null; then \
		systemd-sysusers $(SYSUSERS_DIR)/gaend.conf; \
	fi
	@conf=$(DESTDIR)$(SYSCONFDIR)/gaend/gaend.conf; \
	if [ -e "$$conf" ]; then \
		echo "install: keeping $$conf"; \
	else \
		install -D -m 0640 etc/gaend.conf "$$conf" && echo "install: $$conf (default configuration)"; \
		if getent group gaend >/dev/null; then chgrp gaend "$$conf"; \
		else echo "install: no group gaend yet: chgrp gaend $$conf once it exists (gaend must read it)"; fi; \
	fi

uninstall:
	for product in $(PRODUCTS); do rm -f $(BINDIR)/$$product; done
	rm -f $(DESTDIR)$(SYSTEMD_UNIT_DIR)/gaend.service $(DESTDIR)$(SYSUSERS_DIR)/gaend.conf \
		$(DESTDIR)$(DBUS_SYSTEM_CONF_DIR)/org.gaend.conf $(DESTDIR)$(DBUS_SYSTEM_SERVICES_DIR)/org.gaend.service \
		$(DESTDIR)$(POLKIT_ACTIONS_DIR)/org.gaend.policy $(DESTDIR)$(DOCDIR)/examples/gaend.service.d/hci-radio.conf \
		$(DESTDIR)$(UDEV_RULES_DIR)/60-gaend-indicator-led.rules \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR)/gaen-keyserver.service $(DESTDIR)$(SYSUSERS_DIR)/gaen-keyserver.conf \
		$(DESTDIR)$(DOCDIR)/examples/gaen-keyserver.env
	for hook in notify-desktop mail gpio-buzzer; do rm -f $(DESTDIR)$(DOCDIR)/examples/exposure-hook/$$hook; done
	for page in docs/man/*.[0-9]; do rm -f $(DESTDIR)$(MANDIR)/man$${page##*.}/$$(basename $$page); done
	for program in gaenctl gaen-keyserver; do rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$program \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_$$program $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/$$program.fish; done
	rmdir $(DESTDIR)$(DOCDIR)/examples/gaend.service.d $(DESTDIR)$(DOCDIR)/examples/exposure-hook $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) 2>/dev/null || true

clean:
	$(SWIFT) package clean
