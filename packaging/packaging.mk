# SPDX-License-Identifier: GPL-2.0
# Installation, man pages, DKMS and Debian packages (included by Makefile;
# Documentation/install.rst).
#   make install [DESTDIR=...] [PREFIX=/usr/local]   user space, man pages,
#                          udev rule, systemd units, examples
#   make install-dkms      cider.ko's source under /usr/src/cider-VERSION
#   make man               the man pages, into build/man
#   make man-check         they render without warnings, --help agrees
#   make deb               Debian packages into build/deb (lintian-checked)

CIDER_VER := $(shell cat VERSION)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
# bash-completion loads a command's file from here when it is first completed.
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
DOCDIR ?= $(DATADIR)/doc/cider
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UDEVDIR ?= $(PREFIX)/lib/udev
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# Debian's path for modules of every Python 3 (another prefix: its own).
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages
DKMSSRCDIR ?= /usr/src/cider-$(CIDER_VER)
INSTALL ?= install

# libcider.so.1: the soname changes only on an incompatible change of
# libcider's functions (packaging/libcider.map lists what is exported).
SONAME := libcider.so.1
SOLIB := build/lib/libcider.so.1.0.0
LIB_PUBLIC_HDR := lib/cider.h lib/cider-uring.h

# One reStructuredText source per page (Documentation/man/NAME.SECTION.rst);
# every libcider function is a link to libcider(3).
MAN_RST := $(wildcard Documentation/man/*.rst)
MAN_PAGES := $(patsubst Documentation/man/%.rst,build/man/%,$(MAN_RST))
LIBCIDER_FUNCS := $(shell sed -n 's/^[[:space:]]*\(cider_[a-z_]*\);$$/\1/p' packaging/libcider.map)
MAN_LINKS := $(patsubst %,build/man/%.3,$(LIBCIDER_FUNCS))
SUBST = sed -e 's|@VERSION@|$(CIDER_VER)|g' -e 's|@PREFIX@|$(PREFIX)|g' \
	-e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	-e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	-e 's|@DOCDIR@|$(DOCDIR)|g'
INSTALLED_TOOLS := tools/ciderctl/ciderctl tools/cider-memd/cider-memd tools/cider-bench/cider-bench \
	tools/cider-agentd/cider-agentd

.PHONY: dist-build install install-lib install-tools install-man install-system install-python install-dkms \
	libs man man-check deb packaging-check

$(SOLIB): lib/cider.c lib/cider-kv.c lib/cider-uring.c lib/cider-batch.c lib/keyfile.c lib/numparse.c lib/jsonw.c $(LIB_HDR) lib/cider-uring.h packaging/libcider.map
	@mkdir -p build/lib
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -fPIC -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=packaging/libcider.map -Wl,--no-undefined $(LDFLAGS) \
		-o $@ lib/cider.c lib/cider-kv.c lib/cider-uring.c lib/cider-batch.c lib/keyfile.c lib/numparse.c lib/jsonw.c -luring
	ln -sf $(notdir $@) build/lib/$(SONAME)
	ln -sf $(SONAME) build/lib/libcider.so

build/libcider.pc: packaging/libcider.pc.in VERSION FORCE
	@mkdir -p build
	$(SUBST) $< > $@.tmp && mv $@.tmp $@

build/cider-memd@.service: packaging/cider-memd@.service.in VERSION FORCE
	@mkdir -p build
	$(SUBST) $< > $@.tmp && mv $@.tmp $@

build/cider-attach.service: packaging/cider-attach.service.in VERSION FORCE
	@mkdir -p build
	$(SUBST) $< > $@.tmp && mv $@.tmp $@

build/cider-agentd.service: packaging/cider-agentd.service.in VERSION FORCE
	@mkdir -p build
	$(SUBST) $< > $@.tmp && mv $@.tmp $@

build/dkms.conf: packaging/dkms.conf.in VERSION FORCE
	@mkdir -p build
	$(SUBST) $< > $@.tmp && mv $@.tmp $@

# Generated from templates with the paths of this call: always remade.
FORCE:

libs: lib/libcider.a $(SOLIB) build/libcider.pc

build/man/%: Documentation/man/%.rst VERSION
	@mkdir -p build/man
	rst2man --strict --no-generator --no-datestamp $< > $@.tmp
	mv $@.tmp $@

$(MAN_LINKS): packaging/libcider.map
	@mkdir -p build/man
	ln -sf libcider.3 $@

man: $(MAN_PAGES) $(MAN_LINKS)

# Every page renders without a warning; every tool's --help and its page
# list the same options (packaging/man-check).
man-check: man $(INSTALLED_TOOLS)
	packaging/man-check build/man $(INSTALLED_TOOLS)

# What the Debian build compiles (no module: DKMS builds it where installed).
dist-build: libs man $(INSTALLED_TOOLS) build/cider-memd@.service build/cider-attach.service \
		build/cider-agentd.service build/dkms.conf

install-lib: libs
	$(INSTALL) -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/cider/linux
	$(INSTALL) -m 644 lib/libcider.a $(DESTDIR)$(LIBDIR)/libcider.a
	$(INSTALL) -m 644 $(SOLIB) $(DESTDIR)$(LIBDIR)/$(notdir $(SOLIB))
	ln -sf $(notdir $(SOLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libcider.so
	$(INSTALL) -m 644 build/libcider.pc $(DESTDIR)$(LIBDIR)/pkgconfig/libcider.pc
	$(INSTALL) -m 644 $(LIB_PUBLIC_HDR) $(DESTDIR)$(INCLUDEDIR)/cider/
	$(INSTALL) -m 644 uapi/linux/cider.h $(DESTDIR)$(INCLUDEDIR)/cider/linux/cider.h

install-tools: $(INSTALLED_TOOLS)
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(COMPLETIONDIR)
	$(INSTALL) -m 755 tools/ciderctl/ciderctl tools/cider-memd/cider-memd \
		tools/cider-agentd/cider-agentd $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -m 755 tools/cider-bench/cider-bench $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 644 packaging/bash-completion/ciderctl packaging/bash-completion/cider-memd \
		packaging/bash-completion/cider-bench packaging/bash-completion/cider-agentd \
		$(DESTDIR)$(COMPLETIONDIR)/

install-man: man
	set -e; for p in $(MAN_PAGES); do \
		s=$${p##*.}; $(INSTALL) -d $(DESTDIR)$(MANDIR)/man$$s; \
		$(INSTALL) -m 644 $$p $(DESTDIR)$(MANDIR)/man$$s/; \
	done
	set -e; for f in $(LIBCIDER_FUNCS); do ln -sf libcider.3 $(DESTDIR)$(MANDIR)/man3/$$f.3; done

install-system: build/cider-memd@.service build/cider-attach.service build/cider-agentd.service
	$(INSTALL) -d $(DESTDIR)$(UDEVDIR)/rules.d $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(SYSCONFDIR)/cider $(DESTDIR)$(DOCDIR)/examples
	$(INSTALL) -m 644 packaging/60-cider.rules $(DESTDIR)$(UDEVDIR)/rules.d/
	$(INSTALL) -m 644 build/cider-memd@.service build/cider-attach.service \
		build/cider-agentd.service $(DESTDIR)$(SYSTEMDUNITDIR)/
	$(INSTALL) -m 644 packaging/memd-default.conf packaging/cn.conf $(DESTDIR)$(SYSCONFDIR)/cider/
	$(INSTALL) -m 644 packaging/modprobe.d-cider.conf $(DESTDIR)$(DOCDIR)/examples/modprobe.d-cider.conf
	$(INSTALL) -m 644 packaging/modules-load.d-cider.conf $(DESTDIR)$(DOCDIR)/examples/modules-load.d-cider.conf

# python3-cider: the module is pure Python (ctypes over libcider.so.1).
install-python:
	$(INSTALL) -d $(DESTDIR)$(PYTHONDIR)/cider
	$(INSTALL) -m 644 python/cider/__init__.py $(DESTDIR)$(PYTHONDIR)/cider/

install: install-lib install-tools install-man install-system install-python

# The module's source as DKMS wants it: Kbuild, VERSION, kmod/, kmod/core/
# (not its user-space tests) and the uapi header.
install-dkms: build/dkms.conf
	$(INSTALL) -d $(DESTDIR)$(DKMSSRCDIR)/kmod/core $(DESTDIR)$(DKMSSRCDIR)/uapi/linux
	$(INSTALL) -m 644 Kbuild VERSION build/dkms.conf $(DESTDIR)$(DKMSSRCDIR)/
	$(INSTALL) -m 644 $(wildcard kmod/*.c kmod/*.h) $(DESTDIR)$(DKMSSRCDIR)/kmod/
	$(INSTALL) -m 644 $(wildcard kmod/core/*.c kmod/core/*.h) $(DESTDIR)$(DKMSSRCDIR)/kmod/core/
	$(INSTALL) -m 644 uapi/linux/cider.h $(DESTDIR)$(DKMSSRCDIR)/uapi/linux/

# Binary packages from a copy of the tree (tracked and new files), so that
# dpkg-buildpackage's clean never touches this checkout's build.
deb:
	packaging/make-deb build/deb

# What make check runs on the host: the unit is accepted by
# systemd-analyze verify, the udev rule by udevadm, the library exports
# exactly its version script.
packaging-check: libs build/cider-memd@.service build/cider-attach.service \
		build/cider-agentd.service
	packaging/packaging-check
