#!/usr/bin/env bash
# Creates .venv (ignored by git) with the Python packages the integration tests use. Idempotent, and quick
# when nothing changed: a stamp in .venv records this script and the installed toolgym_trl sources, so
# `npm test` can call it on every run without importing torch.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp_file=.venv/.toolgym-setup-stamp
stamp=$(cat scripts/setup-python.sh python/pyproject.toml $(find python/toolgym_trl -name '*.py' | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)
if [ -x .venv/bin/python ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
  echo "python venv up to date (.venv)"
  exit 0
fi
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
if ! .venv/bin/python -c "import torch, transformers, trl, peft, jinja2, fastapi, uvicorn, openai" >/dev/null 2>&1; then
  # Pinned: the versions the cross-checks and the TRL end-to-end test were validated with.
  .venv/bin/pip install --retries 0 -q torch==2.13.0 transformers==5.18.0 trl==1.13.0 peft==0.21.0 accelerate==1.15.0 datasets==5.0.1 \
    jinja2==3.1.6 tokenizers==0.23.2 safetensors==0.8.0 fastapi==0.142.2 uvicorn==0.54.0 openai==3.22.1
fi
# uvicorn[standard]'s event loop and HTTP parser: the server benchmark's baseline is what users deploy.
if ! .venv/bin/python -c "import uvloop, httptools" >/dev/null 2>&1; then
  .venv/bin/pip install --retries 0 -q uvloop==0.23.0 httptools==0.8.0
fi
.venv/bin/pip install --retries 0 -q --no-deps ./python
.venv/bin/python -c "import torch, transformers, trl, toolgym_trl; print('python ok: torch', torch.__version__, 'transformers', transformers.__version__, 'trl', trl.__version__)"
echo "$stamp" >"$stamp_file"
