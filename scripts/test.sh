#!/usr/bin/env bash
# Builds asn and runs every test: the unit, service and integration suites under ctest, then
# the unit and service suites again in an AddressSanitizer + UndefinedBehaviorSanitizer build
# and in a ThreadSanitizer build, then every fuzz target for a bounded time (clang,
# libFuzzer). Between the first stage and the sanitizers, scripts/install-test.sh builds the
# Debian packages from build/, installs them on this machine, checks them and purges them.
# Installs missing Debian packages first (needs root or sudo for that, and for the install
# test).
#   scripts/test.sh                  everything (what CI runs)
#   scripts/test.sh --no-sanitize    skip the sanitizer builds and the fuzzing (quicker, local)
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitize) sanitize=0 ;;
    *) echo "usage: scripts/test.sh [--no-sanitize]" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
jobs=$(nproc)

echo "== build (RelWithDebInfo) =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
echo "== tests =="
ctest --test-dir build --output-on-failure -j"$jobs"
echo "== Debian packages: build, install with apt, check, purge =="
scripts/install-test.sh

if [ "$sanitize" = 1 ]; then
  echo "== build (ASan + UBSan) =="
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DASN_SANITIZE=address \
    -DASN_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j"$jobs" --target asn_unit_service_tests
  echo "== unit and service tests under ASan + UBSan =="
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan -L 'unit|service' --output-on-failure -j"$jobs"

  echo "== build (ThreadSanitizer) =="
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DASN_SANITIZE=thread \
    -DASN_BUILD_BENCH=OFF >/dev/null
  cmake --build build-tsan -j"$jobs" --target asn_unit_service_tests
  echo "== unit and service tests under ThreadSanitizer =="
  # tests/tsan.supp: races TSan imagines inside the uninstrumented gRPC, abseil and protobuf.
  # history_size=7: the longest access history, so the other side of a report keeps its stack
  # and a suppression can match it ("failed to restore the stack" matches nothing).
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=7:suppressions=$PWD/tests/tsan.supp" \
    ctest --test-dir build-tsan -L 'unit|service' --output-on-failure -j"$jobs"

  echo "== fuzzing (libFuzzer, ASan + UBSan), 20 s a target =="
  scripts/fuzz.sh 20
fi
