# Strata: `make run` and `make test` are the whole quickstart on Debian 12.
# `make run` installs what building and running needs and builds the strata
# binary alone; `make test` installs the rest (test oracles, Chromium, the
# packaging tools) and builds and runs everything.

BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
JOBS      ?= $(shell nproc)
CMAKE_ARGS ?=
MODEL     ?= models/strata-demo.gguf

.PHONY: all deps deps-run build build-strata build-asan test test-fast test-asan crash-matrix fuzz-long run bench deb clean

all: build

deps:
	scripts/install-deps

deps-run:
	scripts/install-deps --run

# Everything: the binaries, the tests, the benchmarks.
build: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DSTRATA_TESTS=ON $(CMAKE_ARGS)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The strata binary alone (no test is configured or built).
build-strata: deps-run
	cmake -S . -B $(BUILD_DIR) -G Ninja -DSTRATA_TESTS=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD_DIR) -j $(JOBS) --target strata

# The CPU tests again under AddressSanitizer + UndefinedBehaviorSanitizer, built
# with clang so the libFuzzer targets can be built and run too. Optimized (-O1,
# as the sanitizer docs advise): at -O0 the tests that write and run whole
# models take ten times longer and find nothing more.
build-asan: deps
	CC=clang CXX=clang++ cmake -S . -B $(ASAN_DIR) -G Ninja -DSTRATA_CUDA=OFF \
	  -DSTRATA_SANITIZE=ON -DSTRATA_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g"
	cmake --build $(ASAN_DIR) -j $(JOBS)

test: build build-asan
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -LE fuzz
	ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(JOBS) -LE "gpu|browser|packaging"

# The whole crash matrix (`make test` runs two crashes a point and 20 random
# kills): a real server with a disk cache killed 10 times at every crash point
# of common/crash_point.h and 200 times at random moments with requests in
# flight, each followed by a restart that must serve every acknowledged block
# and nothing wrong. About ten minutes; prints the counts as JSON.
crash-matrix: build
	STRATA_CRASH_RUNS=10 STRATA_RANDOM_KILLS=200 \
	  $(BUILD_DIR)/tests/service/serve/serve_crash_test

# Every libFuzzer target (tests/fuzz/README.md) for FUZZ_SECONDS each, one after
# another, on the sanitizer build: `make fuzz-long FUZZ_SECONDS=3600`. What they
# find goes to build-asan/tests/fuzz/corpus/, crashes to .../artifacts/.
FUZZ_SECONDS ?= 3600
fuzz-long: build-asan
	for script in $(ASAN_DIR)/tests/fuzz/run_*.sh; do \
	  FUZZ_SECONDS=$(FUZZ_SECONDS) sh $$script || exit 1; \
	done

# Just the unit tests of the main build: seconds, for the edit-compile loop.
test-fast: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -L unit

# Serve the default model, the bundled demo (models/README.md: it writes
# English, it knows nothing), or MODEL=path.gguf: the OpenAI API on the Unix
# socket and the chat page on http://127.0.0.1:$(PORT)/ (both printed).
# Ctrl-C stops it.
PORT ?= 8080
run: build-strata
	$(BUILD_DIR)/service/strata info $(MODEL)
	$(BUILD_DIR)/service/strata serve --model $(MODEL) --port $(PORT)

# Kernel benchmarks, then one sequence on the default model; all print JSON
# with the ceiling each figure is compared to.
bench: build-strata
	cmake --build $(BUILD_DIR) --target run_bench
	$(BUILD_DIR)/service/strata bench -m $(MODEL)

# The Debian package, build-deb/strata_<version>_amd64.deb: the release build
# (scripts/build-release.sh: every supported GPU, with the cuBLAS libraries it
# loads shipped in the package) when nvcc is there, else CPU-only; DEB_CUDA=OFF
# makes a CPU-only package anyway. packaging/ holds debian/, the units, the
# config file and the man page.
DEB_CUDA ?= AUTO
deb: deps
	scripts/build-release.sh -DSTRATA_CUDA=$(DEB_CUDA)
	scripts/build-deb.sh build-release/service/strata build-deb

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) build-deb
