# SPDX-License-Identifier: GPL-2.0
#
# CIDER.  The two commands:
#   make check   build everything with warnings as errors, run the host
#                unit tests, boot the test VM and run the selftests in it,
#                on Debian's kernels 6.1 and 6.12 and on a debug kernel
#   make demo    boot the test VM and show what cider.ko does today
# Both install what they need first (tools/install-deps, needs root).

KVER = $(shell tools/kver)
KDIR = /lib/modules/$(KVER)/build
LT := build/linux-tools
KSELFTEST := $(LT)/tools/testing/selftests

CC ?= cc
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Werror
# The tools answer --version with the release in VERSION.
CPPFLAGS := -Iuapi -Ilib -DCIDER_VERSION='"$(shell cat VERSION)"'
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

KERNEL_SRC := $(wildcard kmod/*.c kmod/*.h kmod/core/*.c kmod/core/*.h) uapi/linux/cider.h
LIB_SRC := lib/cider.c lib/cider-kv.c lib/keyfile.c lib/numparse.c lib/jsonw.c
LIB_HDR := lib/cider.h lib/numparse.h lib/jsonw.h uapi/linux/cider.h
# The selftests are a kselftest target (selftests/cider/Makefile, which
# lists them); binaries in build/selftests/cider.  Run only under the
# debug kernel (they need its fault injection):
DEBUG_SELFTESTS := faults kvfaults removal fuzz
CORE_SRC := kmod/core/credit.c kmod/core/backoff.c kmod/core/store.c
PROTO_SRC := $(addprefix kmod/core/,client.c write.c lockqueue.c writecomb.c localwc.c readcomb.c cache.c contention.c \
	alloc.c fence.c caslock.c slab.c hashindex.c locate.c scan.c block.c)
SIM_SRC := $(wildcard tools/cider-sim/*.c) $(PROTO_SRC) kmod/core/backoff.c lib/workload.c lib/numparse.c lib/jsonw.c
CORE_HDR := $(wildcard kmod/core/*.h)
SIM_HDR := $(wildcard tools/cider-sim/*.h) $(CORE_HDR) lib/workload.h
CORE_TESTS := $(patsubst %.c,%,$(wildcard kmod/core/tests/test_*.c))
HOST_TESTS := lib/test_libcider lib/test_numparse lib/test_jsonw lib/test_workload $(CORE_TESTS) tools/cider-sim/tests/test_lincheck \
	tools/cider-memd/tests/test_allow tools/cider-memd/tests/test_key tools/cider-bench/tests/test_pace \
	tools/cider-bench/tests/test_lathist tools/cider-bench/tests/test_hdr tools/ciderctl/tests/test_kvdump
TOOLS := tools/ciderctl/ciderctl tools/cider-memd/cider-memd tools/cider-bench/cider-bench \
	 tools/cider-sim/cider-sim build/cider-sim-san tools/vm/cider-hub tools/vm/cluster-clock \
	 tools/cider-agentd/cider-agentd

.PHONY: sim-equiv sim-report soak bench host-tests all deps module module-debug module-6.12 sparse-6.12 \
	debug-selftests selftests sparse checkpatch soak-kv abi-compat check-cluster \
	userspace check check-debug demo shell clean help

all: module userspace

help:
	@sed -n '3,8p' Makefile | sed 's/^# \{0,1\}//'

deps:
	@tools/install-deps

$(LT)/.done: | deps
	tools/linux-tools $(LT)

# Test builds carry fault injection (Kbuild); packaged ones do not.
FAULT := CIDER_FAULT_INJECTION=y

module: deps
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 $(FAULT) modules

# cider.ko for the debug kernel (built first if needed), in build/debug-kmod.
module-debug: deps
	tools/debug-kernel/module

# cider.ko for the 6.12 line (bookworm-backports, Debian 13's kernel), in
# build/kmod-RELEASE; ./cider.ko is the 6.1 line's.  The selftests and
# tools are user space: one build serves both lines.
module-6.12: deps
	tools/module-line 6.12

# The W=1 build and sparse (C=2) in one pass.
sparse-6.12: deps
	tools/module-line 6.12 --sparse

# What the debug VM run executes: the whole suite, then the error paths
# under fault injection, then the fuzzer.
debug-selftests:
	@echo $$($(MAKE) -s -C selftests/cider emit_tests | sed 's/^[^:]*://') $(DEBUG_SELFTESTS)

# C=2 re-checks every file; sparse warnings do not fail kbuild, so grep.
sparse: deps
	@mkdir -p build
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 $(FAULT) modules > build/sparse.log 2>&1 || { cat build/sparse.log; exit 1; }
	@! grep -E '(warning|error):' build/sparse.log

# Kernel style, and no function longer than 80 lines (tools/func-length).
# kmod/compat.h is where the kernel lines differ: it alone may test
# LINUX_VERSION_CODE (an out-of-tree module cannot be "for the version it
# is merged to"), and nothing else is waived there.
# kmod/vocab.h and kmod/core/vocab.h hold X-macro lists (one per concept,
# from which enums, names and trace symbols are made), which checkpatch
# takes for complex macros with reused arguments and trailing semicolons:
# those three checks alone are waived there.
VOCAB_SRC := kmod/vocab.h kmod/core/vocab.h
checkpatch: $(LT)/.done
	$(LT)/scripts/checkpatch.pl --no-tree --quiet --strict --show-types -f \
		$(filter-out kmod/compat.h $(VOCAB_SRC),$(KERNEL_SRC))
	$(LT)/scripts/checkpatch.pl --no-tree --quiet --strict --show-types \
		--ignore COMPLEX_MACRO,MACRO_ARG_REUSE,TRAILING_SEMICOLON -f $(VOCAB_SRC)
	$(LT)/scripts/checkpatch.pl --no-tree --quiet --strict --show-types \
		--ignore LINUX_VERSION_CODE -f kmod/compat.h
	tools/func-length 80 $(filter %.c,$(KERNEL_SRC))

# libs: python3-cider's tests load build/lib/libcider.so.1.
userspace: $(TOOLS) selftests $(HOST_TESTS) libs

selftests: lib/libcider.a $(LT)/.done
	@$(MAKE) -s -C selftests/cider

# Scripts among them (not built, not cleaned): the tools' answers to bad input,
# what the kv selftest's Prometheus format checker refuses, python3-cider's
# host tests.
HOST_TEST_SCRIPTS := tools/cider-memd/tests/test_usage tools/ciderctl/test_usage \
	tools/cider-bench/tests/test_usage selftests/cider/test_prom_check python/tests/run-host \
	tools/cider-agentd/tests/test_usage

host-tests:
	@echo $(HOST_TESTS) $(HOST_TEST_SCRIPTS)

lib/libcider.a: $(LIB_SRC) $(LIB_HDR) lib/cider-uring.c lib/cider-uring.h lib/cider-batch.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o lib/cider.o lib/cider.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o lib/cider-kv.o lib/cider-kv.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o lib/cider-uring.o lib/cider-uring.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o lib/cider-batch.o lib/cider-batch.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o lib/keyfile.o lib/keyfile.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o lib/numparse.o lib/numparse.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o lib/jsonw.o lib/jsonw.c
	ar rcs $@ lib/cider.o lib/cider-kv.o lib/cider-uring.o lib/cider-batch.o lib/keyfile.o lib/numparse.o lib/jsonw.o

tools/vm/cider-hub: tools/vm/cider-hub.c
	$(CC) $(CFLAGS) $(WARN) -o $@ $<

tools/vm/cluster-clock: tools/vm/cluster-clock.c lib/numparse.c lib/numparse.h
	$(CC) -Ilib $(CFLAGS) $(WARN) -o $@ $< lib/numparse.c

CIDERCTL_SRC := tools/ciderctl/ciderctl.c tools/ciderctl/attach.c tools/ciderctl/cnconf.c \
	tools/ciderctl/kvload.c tools/ciderctl/kvdump.c tools/ciderctl/kvscan.c
tools/ciderctl/ciderctl: $(CIDERCTL_SRC) tools/ciderctl/ciderctl.h tools/ciderctl/cnconf.h \
			 tools/ciderctl/kvdump.h lib/libcider.a VERSION
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $(CIDERCTL_SRC) lib/libcider.a -luring

# The dump file codec, alone, under the sanitizers.
tools/ciderctl/tests/test_kvdump: tools/ciderctl/tests/test_kvdump.c tools/ciderctl/kvdump.c \
				  tools/ciderctl/kvdump.h $(LT)/.done
	$(CC) -Itools/ciderctl -isystem $(KSELFTEST) $(CFLAGS) $(WARN) $(SAN) -o $@ $< \
		tools/ciderctl/kvdump.c

MEMD_SRC := tools/cider-memd/cider-memd.c tools/cider-memd/allow.c tools/cider-memd/backing.c \
	tools/cider-memd/notify.c tools/cider-memd/key.c lib/keyfile.c lib/numparse.c kmod/core/store.c \
	kmod/core/block.c kmod/core/keyproof.c
tools/cider-memd/cider-memd: $(MEMD_SRC) tools/cider-memd/allow.h tools/cider-memd/backing.h \
			     tools/cider-memd/notify.h tools/cider-memd/key.h lib/cider.h $(CORE_HDR) VERSION
	$(CC) -Ikmod/core $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $(MEMD_SRC) -lrdmacm -libverbs -lcrypto

# The atomics agent: cider.ko's batches of verbs on its own queue pairs.
AGENTD_SRC := tools/cider-agentd/cider-agentd.c tools/cider-agentd/conn.c \
	tools/cider-agentd/exec.c lib/numparse.c
tools/cider-agentd/cider-agentd: $(AGENTD_SRC) tools/cider-agentd/agentd.h lib/numparse.h \
				 uapi/linux/cider.h $(CORE_HDR) VERSION
	$(CC) -Ikmod/core $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $(AGENTD_SRC) -lrdmacm -libverbs -luring

# The key proof's check and the key file, alone, under the sanitizers.
tools/cider-memd/tests/test_key: tools/cider-memd/tests/test_key.c tools/cider-memd/key.c \
				 tools/cider-memd/key.h lib/keyfile.c lib/cider.h \
				 kmod/core/keyproof.c $(CORE_HDR) $(LT)/.done
	$(CC) -Itools/cider-memd -Ikmod/core $(CPPFLAGS) -isystem $(KSELFTEST) $(CFLAGS) $(WARN) \
		$(SAN) -o $@ $< tools/cider-memd/key.c lib/keyfile.c kmod/core/keyproof.c -lcrypto

# The allow list, alone, under the sanitizers.
tools/cider-memd/tests/test_allow: tools/cider-memd/tests/test_allow.c tools/cider-memd/allow.c \
				   tools/cider-memd/allow.h lib/numparse.c lib/numparse.h $(LT)/.done
	$(CC) -Itools/cider-memd -Ilib -isystem $(KSELFTEST) $(CFLAGS) $(WARN) $(SAN) -o $@ $< \
		tools/cider-memd/allow.c lib/numparse.c

BENCH_SRC := tools/cider-bench/cider-bench.c tools/cider-bench/kv.c tools/cider-bench/kvreport.c \
	tools/cider-bench/tear.c tools/cider-bench/kvhist.c tools/cider-bench/lathist.c \
	tools/cider-bench/pace.c lib/workload.c
BENCH_HDR := tools/cider-bench/bench.h tools/cider-bench/kvbench.h tools/cider-bench/lathist.h \
	tools/cider-bench/pace.h lib/workload.h
tools/cider-bench/cider-bench: $(BENCH_SRC) $(BENCH_HDR) lib/libcider.a $(CORE_HDR) VERSION
	$(CC) $(CPPFLAGS) -Ikmod/core $(CFLAGS) $(WARN) -o $@ $(BENCH_SRC) lib/libcider.a -luring \
		-lpthread -lm

# cider-bench's schedule and histograms, without a device, under the sanitizers.
BENCH_TEST_SRC := tools/cider-bench/lathist.c tools/cider-bench/pace.c
tools/cider-bench/tests/test_%: tools/cider-bench/tests/test_%.c $(BENCH_TEST_SRC) \
				tools/cider-bench/lathist.h tools/cider-bench/pace.h $(LT)/.done
	$(CC) -Itools/cider-bench -isystem $(KSELFTEST) $(CFLAGS) $(WARN) $(SAN) -o $@ $< \
		$(BENCH_TEST_SRC) -lm

# The simulator: optimized for reports, and under the sanitizers for checks.
tools/cider-sim/cider-sim: $(SIM_SRC) $(SIM_HDR) VERSION
	$(CC) -Ikmod/core -Ilib $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $(SIM_SRC) -lm

build/cider-sim-san: $(SIM_SRC) $(SIM_HDR)
	@mkdir -p build
	$(CC) -Ikmod/core -Ilib $(CPPFLAGS) -O1 -g $(WARN) $(SAN) -o $@ $(SIM_SRC) -lm

# The history checker, alone, under the sanitizers.
LINCHECK_SRC := tools/cider-sim/lincheck.c lib/workload.c lib/numparse.c lib/jsonw.c
tools/cider-sim/tests/test_lincheck: tools/cider-sim/tests/test_lincheck.c $(LINCHECK_SRC) \
				      tools/cider-sim/lincheck.h lib/workload.h $(LT)/.done
	$(CC) -Itools/cider-sim -Ilib -isystem $(KSELFTEST) $(CFLAGS) $(WARN) $(SAN) -o $@ $< \
		$(LINCHECK_SRC) -lm

# The kernel's harness is included as a system header: it is not ours to
# make -Wextra clean, our tests are.
lib/test_jsonw: lib/test_jsonw.c lib/jsonw.c lib/jsonw.h $(LT)/.done
	$(CC) -Ilib -isystem $(KSELFTEST) $(CFLAGS) $(WARN) $(SAN) -o $@ $< lib/jsonw.c

lib/test_numparse: lib/test_numparse.c lib/numparse.c lib/numparse.h $(LT)/.done
	$(CC) -Ilib -isystem $(KSELFTEST) $(CFLAGS) $(WARN) $(SAN) -o $@ $< lib/numparse.c

# The workloads, cider-sim's and cider-bench's, alone.
lib/test_workload: lib/test_workload.c lib/workload.c lib/workload.h lib/numparse.c lib/numparse.h \
		   $(LT)/.done
	$(CC) -Ilib -isystem $(KSELFTEST) $(CFLAGS) $(WARN) $(SAN) -o $@ $< lib/workload.c \
		lib/numparse.c -lm -lpthread

lib/test_libcider: lib/test_libcider.c $(LIB_SRC) $(LIB_HDR) lib/cider-batch.c lib/cider-uring.c \
		   lib/cider-uring.h $(LT)/.done
	$(CC) $(CPPFLAGS) -isystem $(KSELFTEST) $(CFLAGS) $(WARN) $(SAN) -o $@ $< $(LIB_SRC) \
		lib/cider-batch.c lib/cider-uring.c -luring

# The portable core, built as user-space code under the sanitizers.
kmod/core/tests/test_%: kmod/core/tests/test_%.c $(CORE_SRC) $(PROTO_SRC) $(CORE_HDR) $(LT)/.done
	$(CC) -Ikmod/core -isystem $(KSELFTEST) $(CFLAGS) $(WARN) $(SAN) -o $@ $< $(CORE_SRC) $(PROTO_SRC)

check:
	@tools/check

# The same as make check, which now includes the debug-kernel run (the
# suite, the error-path test and the fuzzer under KASAN, lockdep, kmemleak).
check-debug: check

demo: deps module userspace
	tools/vm/cider-vm run --timeout 300 -- tools/vm/demo

# The simulator sweeps behind Documentation/evaluation.rst (CSV + PNG).
sim-report: tools/cider-sim/cider-sim
	tools/sim-report build/sim-report

# Behaviour unchanged: the simulator's reports and histories on a fixed
# set of configurations, against those of a base commit (tools/sim-equiv).
SIM_EQUIV_BASE ?=
sim-equiv:
	tools/sim-equiv $(SIM_EQUIV_BASE)

# Random simulator configurations (tools/soak --help): five minutes on
# every CPU by default; e.g. make soak SOAK_ARGS="--runs 200 --seed 7".
SOAK_ARGS ?= --time 300
soak: tools/cider-sim/cider-sim build/cider-sim-san
	tools/soak $(SOAK_ARGS)

# The raw data-path and key-value benchmarks in one test VM run (each KV
# run's history checked there), then the tables, plots and the simulator's
# prediction for each KV run on the host; results in build/bench/.
bench: deps module userspace
	@mkdir -p build/bench
	tools/vm/cider-vm run --out build/bench --timeout 1800 -- \
		bash -c 'tools/bench-raw; raw=$$?; tools/bench-kv && exit $$raw'
	tools/bench-kv-report build/bench

# The real-stack KV soak in the test VM (tools/soak-kv): SOAK_KV_TIME
# seconds (default 120), SOAK_KV_SEED to reproduce a run.
soak-kv: deps module userspace
	tools/soak-kv

# Two compute nodes in two kernels (the virtual cluster, Documentation/cluster.rst).
check-cluster: deps module userspace
	tools/vm/cider-vm cluster --cns 2 --out build/cluster --timeout 900 -- selftests/cluster/two-cns
	tools/vm/cider-vm cluster --cns 3 --out build/cluster3 --timeout 2400 -- selftests/cluster/three-cns
	tools/vm/cider-vm cluster --cns 2 --out build/cluster-cut --timeout 900 -- selftests/cluster/link-cut

# The previous release's ciderctl against this module and back (tools/abi-compat).
abi-compat: deps module userspace
	tools/abi-compat

shell: deps module userspace
	tools/vm/cider-vm shell

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -f lib/*.o lib/*.a $(TOOLS) $(HOST_TESTS) selftests/kselftest
	rm -rf build
include packaging/packaging.mk
