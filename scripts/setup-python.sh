#!/usr/bin/env bash
# Creates .venv (ignored by git) with the Python packages the integration tests use. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
if ! .venv/bin/python -c "import torch, transformers, trl, peft, jinja2, fastapi, uvicorn, openai" >/dev/null 2>&1; then
  .venv/bin/pip install --retries 0 -q torch transformers trl peft accelerate datasets jinja2 tokenizers safetensors fastapi uvicorn openai
fi
if [ -d python ] && [ -f python/pyproject.toml ]; then
  .venv/bin/pip install --retries 0 -q --no-deps ./python
fi
.venv/bin/python -c "import torch, transformers, trl; print('python ok: torch', torch.__version__, 'transformers', transformers.__version__, 'trl', trl.__version__)"
