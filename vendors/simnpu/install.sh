#!/bin/sh
# Installs simnpu (the kit-simnpu package in this directory) into the Python environment that
# runs ckit; used when building the vendor layer of the reference container. POSIX sh.
# The constraint pins torch==2.13.0: if anything wanted another torch, pip fails instead of
# replacing the release the kit certifies.
set -eu

PYTHON="${PYTHON:-python3}"
here=$(cd "$(dirname -- "$0")" && pwd)

constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
echo "torch==2.13.0" > "$constraints"

"$PYTHON" -m pip install --no-cache-dir --constraint "$constraints" "$here"
# Importing registers the device: fail the build now rather than at the first run.
"$PYTHON" -c "import simnpu, torch; assert torch.simnpu.is_available(); print(torch.simnpu.get_device_name(0))"
