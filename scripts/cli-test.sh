#!/usr/bin/env bash
# Runs the tests of the command-line programs (test/cli) after scripts/build.sh: the 3D Slicer modules through
# ctk-cli and slicerio, and the VTK rendering example under Xvfb. Extra arguments go to pytest.
#   CHS_BUILD        the build folder (default build)
#   CHS_CLI_BACKEND  the modules' --backend (default auto: the GPU where there is one)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
chs_install_missing python3-pytest python3-numpy python3-scipy python3-vtk9 python3-typing-extensions xvfb xauth
# ctk-cli and slicerio (PyPI, with slicerio's NRRD reader) without their dependencies, so NumPy stays Debian's.
/usr/bin/python3 -c "import ctk_cli, slicerio, nrrd" 2>/dev/null || /usr/bin/python3 -m pip install -q --user \
  --break-system-packages --no-deps ctk-cli==1.5 slicerio==1.4.0 pynrrd==1.1.3
/usr/bin/python3 -m pytest -q -p no:cacheprovider test/cli "$@"
