#!/bin/sh
# longfuncs.sh lists the non-test functions of the repository longer than
# 80 lines (or $1), longest first, and their count (issue 31's measure:
# at most ten), then the interfaces declaring more than ten methods (issue
# 31: none). Run from anywhere in the repository.
set -eu
cd "$(dirname "$0")/.."
exec go run ./internal/longfuncs -max "${1:-80}" .
