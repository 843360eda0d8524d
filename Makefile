# gaend: the targets a new user runs. `make check` is what CI runs (.ci/run).
# SPDX-License-Identifier: GPL-3.0-or-later

PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
BINDIR = $(DESTDIR)$(PREFIX)/bin

# Debian packages the build needs: the C libraries (through pkg-config) and pkg-config itself.
APT_PACKAGES = pkg-config libssl-dev libdbus-1-dev libbluetooth-dev zlib1g-dev openssl libcurl4 python3 python3-venv

# The test peers: Bumble's virtual controllers and host, pinned, in a venv of the project's own.
BUMBLE_VERSION = 0.0.236
BUMBLE_VENV = .venv-bumble

PRODUCTS = gaend gaenctl

.PHONY: all deps test-peers build check test bench install uninstall clean vm-test

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

# The venv the radio tests run their controller fixture in (testbed/controllers.py).
test-peers: $(BUMBLE_VENV)/.installed

$(BUMBLE_VENV)/.installed:
	python3 -m venv $(BUMBLE_VENV)
	$(BUMBLE_VENV)/bin/pip install --quiet --disable-pip-version-check bumble==$(BUMBLE_VERSION)
	touch $@

# Release binaries in .build/release.
build: deps
	$(SWIFT) build -c release --product gaend
	$(SWIFT) build -c release --product gaenctl

# Everything CI proves: dependencies, test peers, a debug build of every target, and all tests.
check: deps test-peers
	$(SWIFT) build --build-tests
	GAEND_BUMBLE_PYTHON=$(CURDIR)/$(BUMBLE_VENV)/bin/python $(SWIFT) test --skip-build
	scripts/vm-test

# The kernel path alone (QEMU; a few minutes the first time).
vm-test:
	scripts/vm-test

test: check

# Benchmarks print figures; they are not tests.
bench: deps
	$(SWIFT) run -c release gaen-bench crypto
	scripts/bench-reports

install: build
	install -d $(BINDIR)
	for product in $(PRODUCTS); do install -m 0755 .build/release/$$product $(BINDIR)/$$product; done

uninstall:
	for product in $(PRODUCTS); do rm -f $(BINDIR)/$$product; done

clean:
	$(SWIFT) package clean
