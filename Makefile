# Strata: `make run` and `make test` are the whole quickstart on Debian 12.
# Both install what is missing first (scripts/install-deps), then build.

BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
JOBS      ?= $(shell nproc)
CMAKE_ARGS ?=
MODEL     ?= $(BUILD_DIR)/models/strata-tiny.gguf

.PHONY: all deps build build-asan test test-fast test-asan run bench clean

all: build

deps:
	scripts/install-deps

build: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_ARGS)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The CPU tests again under AddressSanitizer + UndefinedBehaviorSanitizer, built
# with clang so the libFuzzer targets can be built and run too.
build-asan: deps
	CC=clang CXX=clang++ cmake -S . -B $(ASAN_DIR) -G Ninja -DSTRATA_CUDA=OFF \
	  -DSTRATA_SANITIZE=ON -DSTRATA_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(ASAN_DIR) -j $(JOBS)

test: build build-asan
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -LE fuzz
	ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(JOBS) -LE "gpu|browser"

# Just the unit tests of the main build: seconds, for the edit-compile loop.
test-fast: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -L unit

$(MODEL): build
	mkdir -p $(dir $(MODEL))
	$(BUILD_DIR)/service/strata dev make-model --tokenizer llama3 -o $(MODEL)

# Until the serving issue lands, `run` shows the model pipeline that exists:
# describe the default model and tokenize a sentence with its tokenizer.
run: build $(MODEL)
	$(BUILD_DIR)/service/strata info $(MODEL)
	$(BUILD_DIR)/service/strata tokenize $(MODEL) "Hello from Strata! 你好, مرحبا 👋"

bench: build
	$(BUILD_DIR)/bench/dequantize_bench

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
