#!/usr/bin/env bash
# Fixture recipe: --no-deps installs a package whose requirement is never installed.
set -euo pipefail
pip install --no-cache-dir --no-deps "$CKIT_VENDOR_DIR/needs-missing"
