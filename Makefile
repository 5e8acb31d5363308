# SPDX-License-Identifier: GPL-2.0
# kcoll: kernel module, library, tools, tests.
#
#   make                  build kcoll.ko, libkcoll and every tool (`make selftests`: the tests,
#                         with the selftests' engine module)
#   make check            install missing Debian packages, build, run host tests and the
#                         QEMU virtual-cluster suites; ends with "N passed, N failed"
#   make check-debug      the VM suites on the KASAN/lockdep/kmemleak kernel (slow tier)
#   make demo             boot a 3-node virtual cluster and show kcoll running on it
#   make install          module (+depmod), library, headers, tools, man pages, udev rule,
#                         the Python package kcoll (PYTHONDIR: /usr/lib/python3/dist-packages);
#                         never the selftests' engine module
#   make sparse | checkpatch   static checks of kmod/
#   make check-layers     the layer rule of kmod/ (Documentation/design.rst); make check runs it
#   make sched-table      regenerate core/kcoll_sched_table.h, AUTO's table, from kcoll-sim
#   make check-sched-table  the whole table against kcoll-sim, and its picks on the whole grid
#   make fuzz             the fuzzer on 1 VM for FUZZ_SECONDS (300; FUZZ_NODES=2: on 2 VMs too)
#   make bench            kcoll vs perftest, Open MPI and Gloo on 2 and 4 VMs: bench/out/report.md
#                         (BENCH_NODES="2 4 8": also on 8 VMs, for kcoll-sim's validation)
#   make bench-smoke      the same at tiny sizes on 2 VMs, checked for a well-formed report
#
# KDIR selects the kernel headers (default: the running kernel's, else the newest installed).

TOP := $(CURDIR)
KDIR ?= $(shell d=/lib/modules/$$(uname -r)/build; [ -d $$d ] && echo $$d || \
		ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1)
PREFIX ?= /usr/local
DESTDIR ?=
UDEVDIR ?= /lib/udev/rules.d
export PREFIX DESTDIR

NPROC := $(shell nproc 2>/dev/null || echo 1)

all: module lib tools examples

check-kdir:
	@if [ -z "$(KDIR)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "kcoll: no kernel headers found: apt-get install linux-headers-amd64," \
		     "or pass KDIR=/path/to/kernel/build" >&2; exit 1; fi

module: check-kdir
	$(MAKE) -C $(KDIR) M=$(TOP) modules

lib:
	$(MAKE) TOP=$(TOP) -C lib

tools: lib
	$(MAKE) TOP=$(TOP) -C tools

examples: lib
	$(MAKE) TOP=$(TOP) -C examples

# The engine is built with kcoll.ko (it links against its exports), after `module` so that
# two kbuild runs never share the tree at once.
selftests: lib module
	$(MAKE) -C $(KDIR) M=$(TOP) KCOLL_TEST_ENGINE=y modules
	$(MAKE) TOP=$(TOP) -C selftests/kernel
	$(MAKE) TOP=$(TOP) -C selftests/fuzz

# Part of `make` (tools); kept as a name of its own for the scripts that ask for it.
kcoll-perf: tools

deps:
	rig/deps.sh

# The build of the test runs uses every core (the targets above order what depends on what).
check: deps
	$(MAKE) -j$(NPROC) all selftests
	rig/check.sh

check-debug: deps
	$(MAKE) -j$(NPROC) all selftests
	rig/check.sh --debug

# The fuzzer alone (Documentation/testing.rst, "The fuzzer"); results in build/fuzz/.
FUZZ_SECONDS ?= 300
FUZZ_NODES ?= 1
fuzz: deps
	$(MAKE) all selftests
	FUZZ_SECONDS=$(FUZZ_SECONDS) rig/check.sh --out build/fuzz --suite fuzz1 \
		$(if $(filter 2,$(FUZZ_NODES)),--suite fuzz2)

demo: deps
	$(MAKE) all kcoll-perf
	rig/demo.sh

# The benchmark (Documentation/perf.rst); its Debian packages are a group of their own.
# BENCH_NODES: the cluster sizes, one run each, 2 to 8 VMs (8: about 12 GiB of guest memory
# at the default BENCH_MEM_MB, and hours of TCG on a small host).
BENCH_NODES ?= 2 4
bench: deps
	rig/deps.sh bench
	$(MAKE) all kcoll-perf
	+bench/run.sh -n "$(BENCH_NODES)"

bench-smoke: deps
	rig/deps.sh bench
	$(MAKE) all kcoll-perf
	+selftests/bench/smoke.sh

install: module lib tools examples
	# `module` rebuilt modules.order without the selftests' engine: only kcoll.ko goes in.
	# Distribution kernels sign modules with a key only their builders have: no signing
	# here (an unsigned module loads, tainting the kernel, unless lockdown forbids it).
	$(MAKE) -C $(KDIR) M=$(TOP) INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=extra \
		CONFIG_MODULE_SIG_ALL= modules_install
	[ -n "$(DESTDIR)" ] || depmod -a $$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$$/\1/p' \
		$(KDIR)/include/generated/utsrelease.h)
	$(MAKE) TOP=$(TOP) -C lib install
	$(MAKE) TOP=$(TOP) -C tools install
	$(MAKE) TOP=$(TOP) -C man install
	$(MAKE) TOP=$(TOP) -C python install
	install -D -m 0644 packaging/60-kcoll.rules $(DESTDIR)$(UDEVDIR)/60-kcoll.rules

# AUTO's selection table, generated from kcoll-sim's model (Documentation/scale.rst); rebuild
# the module and the tools afterwards.  selftests/host/test_sched_table fails on a drift.
sched-table: tools
	tools/kcoll-sim/kcoll-sim --derive-thresholds datacentre -q \
		>core/kcoll_sched_table.h.tmp
	mv core/kcoll_sched_table.h.tmp core/kcoll_sched_table.h

# What selftests/host/test_sched_table checks up to 64 ranks (make check), on every row and
# rank count of the grid.
check-sched-table: tools
	sh selftests/host/test_sched_table.sh --full

sparse: check-kdir
	$(MAKE) -C $(KDIR) M=$(TOP) C=2 CF="-D__CHECK_ENDIAN__" modules

check-layers:
	selftests/host/check_layers.sh

# checkpatch.pl comes from Debian's linux-source-6.1, unpacked under build/ (not committed).
checkpatch:
	@rig/kernel-script.sh build/kscripts scripts/checkpatch.pl scripts/spelling.txt \
		scripts/const_structs.checkpatch
	perl build/kscripts/scripts/checkpatch.pl --no-tree --strict --max-line-length=100 \
		-f $(filter-out %.mod.c,$(wildcard kmod/*.c kmod/transport/*.c)) \
		$(filter-out kmod/kcoll_trace.h,$(wildcard kmod/*.h)) kmod/transport/*.h \
		include/uapi/linux/kcoll.h
	@# The trace header's macros are field lists and assignments for TRACE_EVENT's stages,
	@# which checkpatch reads as expressions; every other rule still applies to it.
	perl build/kscripts/scripts/checkpatch.pl --no-tree --strict --max-line-length=100 \
		--ignore COMPLEX_MACRO,MULTISTATEMENT_MACRO_USE_DO_WHILE,TRAILING_SEMICOLON \
		--ignore MACRO_ARG_REUSE,MACRO_ARG_PRECEDENCE -f kmod/kcoll_trace.h

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	-$(MAKE) TOP=$(TOP) -C lib clean
	-$(MAKE) TOP=$(TOP) -C tools clean
	-$(MAKE) TOP=$(TOP) -C examples clean
	-$(MAKE) TOP=$(TOP) -C python clean
	-$(MAKE) TOP=$(TOP) -C selftests/kernel clean
	-$(MAKE) TOP=$(TOP) -C selftests/host clean
	-$(MAKE) TOP=$(TOP) -C selftests/fuzz clean
	rm -rf build/check build/check-debug build/selftests build/fuzz

.PHONY: all sched-table check-kdir module lib tools examples selftests deps check check-debug demo install sparse \
	fuzz check-sched-table \
	checkpatch check-layers clean kcoll-perf bench bench-smoke
