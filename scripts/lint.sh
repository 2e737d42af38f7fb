#!/usr/bin/env bash
# The style checks, first step of scripts/test.sh (and so of CI) and the pre-commit hook (.pre-commit-config.yaml):
# clang-format (.clang-format) on the C++ and CUDA sources, ruff (lint and format, pyproject.toml) on the Python
# files, mypy on the chseg package, and that every reference to a result file resolves (scripts/check-result-links.py).
# The tools are the versions of scripts/lint-requirements.txt, in a virtual environment of their own (build-lint/venv,
# made once). Takes seconds.
#   scripts/lint.sh          checks; exits 1 naming every file that is not formatted or fails a check
#   scripts/lint.sh --fix    formats the files in place (clang-format, ruff format, ruff's safe fixes), then checks
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
[ "${1:-}" != --fix ] || fix=1
venv=${CHS_LINT_VENV:-build-lint/venv}
req=scripts/lint-requirements.txt
if ! cmp -s "$req" "$venv/requirements.txt" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
  cp "$req" "$venv/requirements.txt"
fi
# Tracked sources and those about to be (not ignored); results and configure-time templates (.in: @VAR@) excluded.
mapfile -t cxx < <(git ls-files --cached --others --exclude-standard -- '*.h' '*.hxx' '*.cxx' '*.cpp' '*.cu' '*.cuh' |
  grep -v '^bench/results/' | while read -r f; do [ -f "$f" ] && echo "$f"; done)
status=0
if [ "$fix" = 1 ]; then
  "$venv/bin/clang-format" -i "${cxx[@]}"
  "$venv/bin/ruff" format -q .
  "$venv/bin/ruff" check -q --fix . || true
fi
bad=()
for f in "${cxx[@]}"; do
  "$venv/bin/clang-format" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'clang-format: not formatted (scripts/lint.sh --fix formats them):\n' >&2
  printf '  %s\n' "${bad[@]}" >&2
  status=1
fi
"$venv/bin/ruff" format --check -q . || { echo "ruff format: the files above are not formatted" >&2; status=1; }
"$venv/bin/ruff" check -q . || status=1
"$venv/bin/mypy" || status=1
python3 scripts/check-result-links.py || status=1
[ "$status" = 0 ] && echo "lint: ${#cxx[@]} C++/CUDA files formatted; ruff and mypy clean" >&2
exit "$status"
