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
DOCDIR ?= $(PREFIX)/share/doc/gaend
# The directory the installed unit runs gaend from (@BINDIR@ in systemd/gaend.service): where
# `install` puts it, without DESTDIR. scripts/check-packaging points it at a test executable.
UNIT_BINDIR ?= $(PREFIX)/bin

# Debian packages the build needs: the C libraries (through pkg-config) and pkg-config itself.
# The D-Bus test peer needs dbus-python and PyGObject from Debian, dbus-daemon, gdbus (libglib2.0-bin)
# and busctl (only in systemd on Debian 12). The key server's PostgreSQL tests run a private server
# from postgresql-15: the versioned package, not the `postgresql` metapackage, because its binaries'
# directory (POSTGRES_BIN) names the version, and the metapackage adds nothing but that dependency.
APT_PACKAGES = pkg-config libssl-dev libdbus-1-dev libbluetooth-dev libsqlite3-dev libpq-dev zlib1g-dev openssl libcurl4 python3 python3-venv \
	python3-dbus python3-gi dbus-daemon libglib2.0-bin systemd postgresql-15
POSTGRES_BIN = /usr/lib/postgresql/15/bin

# The test peers: Bumble's virtual controllers and host, pinned, in a venv of the project's own.
BUMBLE_VERSION = 0.0.236
BUMBLE_VENV = .venv-bumble
# python-dbusmock, pinned, for the bluetoothd stand-in (testbed/bluez_template.py). Its venv is built
# with Debian's python3 and --system-site-packages, because dbus-python and gi come from Debian.
DBUSMOCK_VERSION = 0.38.1
DBUSMOCK_VENV = .venv-dbusmock

PRODUCTS = gaend gaenctl gaen-keyserver

.PHONY: all deps test-peers build check check-packaging test bench install install-data uninstall clean vm-test demo

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
	for product in $(PRODUCTS); do $(SWIFT) build -c release --product $$product || exit 1; done

# Three beacons on virtual radios and a key server on loopback: A and B meet, A shares its keys,
# B is told of the exposure and C is not (scripts/demo; about 40 s after the build).
demo: deps $(BUMBLE_VENV)/.installed
	for product in gaend gaenctl gaen-keyserver; do $(SWIFT) build --product $$product || exit 1; done
	scripts/demo --bin "$$($(SWIFT) build --show-bin-path)" --python $(CURDIR)/$(BUMBLE_VENV)/bin/python

# Everything CI proves: dependencies, test peers, a debug build of every target, and all tests.
check: deps test-peers
	$(SWIFT) build --build-tests
	GAEND_BUMBLE_PYTHON=$(CURDIR)/$(BUMBLE_VENV)/bin/python \
		GAEND_DBUSMOCK_PYTHON=$(CURDIR)/$(DBUSMOCK_VENV)/bin/python \
		GAEND_POSTGRES_BIN=$(POSTGRES_BIN) $(SWIFT) test --skip-build
	$(MAKE) --no-print-directory check-packaging
	$(MAKE) --no-print-directory demo
	scripts/vm-test

# The unit, D-Bus policy and polkit actions, installed into a scratch DESTDIR and checked with
# systemd-analyze (verify, security exposure <= 2.5), a private dbus-daemon and an XML parser.
check-packaging:
	scripts/check-packaging

# The kernel path alone (QEMU; a few minutes the first time).
vm-test:
	scripts/vm-test

test: check

# Benchmarks print figures; they are not tests.
bench: deps
	$(SWIFT) run -c release gaen-bench crypto
	$(SWIFT) build -c release --product gaen-keyserver
	$(SWIFT) run -c release gaen-bench keyserver
	scripts/bench-reports

install: build install-data
	install -d $(BINDIR)
	for product in $(PRODUCTS); do install -m 0755 .build/release/$$product $(BINDIR)/$$product; done

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
		$(DESTDIR)$(POLKIT_ACTIONS_DIR)/org.gaend.policy $(DESTDIR)$(DOCDIR)/examples/gaend.service.d/hci-radio.conf
	rmdir $(DESTDIR)$(DOCDIR)/examples/gaend.service.d $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) 2>/dev/null || true

clean:
	$(SWIFT) package clean
