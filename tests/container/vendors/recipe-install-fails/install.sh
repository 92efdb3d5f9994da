#!/usr/bin/env bash
# Fixture recipe: the vendor driver cannot be fetched, so the install step exits non-zero.
set -euo pipefail
echo "fetching the fixture driver bundle" >&2
echo "fixture driver bundle: download refused (HTTP 403)" >&2
exit 42
