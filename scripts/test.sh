#!/usr/bin/env bash
# Builds asn and runs every test: the unit, service and integration suites under ctest, then
# the unit and service suites again in an AddressSanitizer + UndefinedBehaviorSanitizer build
# (built with clang) and in a ThreadSanitizer build, then every fuzz target for a bounded time
# (clang, libFuzzer). Between the first stage and the sanitizers, scripts/install-test.sh
# builds the Debian packages from build/, installs them on this machine, checks them and
# purges them.
# Installs missing Debian packages first (needs root or sudo for that, and for the install
# test). Prints the time of each stage at the end, whether it passed or not.
#   scripts/test.sh                  everything (what CI runs)
#   scripts/test.sh --no-sanitize    skip the sanitizer builds and the fuzzing (quicker, local)
#   scripts/test.sh --repeat N LABEL build, then run the tests of ctest label LABEL (unit,
#                                    service, integration, kernel, or a regex of them) up to N
#                                    times each, stopping at the first failure: to hunt a flake
#
# ASN_TEST_TIME_SCALE (a positive number, default 1) multiplies every limit a test waits for
# (tests/README.md says how a timed test uses it). Set it higher on a machine slower than an
# idle 2-core one; the sanitizer stages multiply it again, by their own slowdown.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/test.sh [--no-sanitize] [--repeat N LABEL]" >&2
  exit 2
}
sanitize=1
repeat=0
label=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-sanitize) sanitize=0 ;;
    --repeat)
      [ $# -ge 3 ] || usage
      repeat=$2
      label=$3
      shift 2
      [[ "$repeat" =~ ^[1-9][0-9]*$ ]] || {
        echo "scripts/test.sh: --repeat takes a count of at least 1, not '$repeat'" >&2
        exit 2
      }
      ;;
    *) usage ;;
  esac
  shift
done

# One number scales every test's limits; anything else stops here, before any build.
time_scale=${ASN_TEST_TIME_SCALE:-1}
if ! [[ "$time_scale" =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] ||
  awk -v s="$time_scale" 'BEGIN { exit !(s <= 0) }'; then
  echo "scripts/test.sh: ASN_TEST_TIME_SCALE='$time_scale' is not a positive number" \
    "(1 on an idle 2-core machine; 3 makes every test limit three times longer)" >&2
  exit 2
fi
# scaled F: the time scale times F (the sanitizer stages run our code 3-15x slower).
scaled() { awk -v s="$time_scale" -v f="$1" 'BEGIN { printf "%g", s * f }'; }
# The longest one test may run before ctest stops it (seconds): a backstop for a hang, far
# above any test's need, never a measure of speed (the longest, CrashTest, takes 80 s idle
# and 570 s beside eight CPU hogs).
ctest_timeout() { awk -v s="$1" 'BEGIN { printf "%d", 1800 * s }'; }

# Stage times, printed at the end (and when a stage fails).
stage_names=()
stage_secs=()
stage_name=""
stage_start=$SECONDS
stage() {
  if [ -n "$stage_name" ]; then
    stage_names+=("$stage_name")
    stage_secs+=($((SECONDS - stage_start)))
  fi
  stage_name=$1
  stage_start=$SECONDS
  [ -z "$1" ] || echo "== $1 =="
}
report_times() {
  local rc=$?
  stage ""
  echo "== stage times (seconds) =="
  local i
  for i in "${!stage_names[@]}"; do
    printf '%6d  %s\n' "${stage_secs[$i]}" "${stage_names[$i]}"
  done
  printf '%6d  total (exit %d)\n' "$SECONDS" "$rc"
}
trap report_times EXIT

jobs=$(nproc)
stage "Debian packages the build needs"
scripts/install-deps.sh

# Unity builds (CMake compiles the .cc files of a target eight to a translation unit): the
# gRPC, protobuf and standard headers are parsed once per eight files, not once per file:
# a third to two fifths off each build here (issue 30). An ordinary `cmake -B` build is not
# one, for quick incremental builds; the code must compile both ways.
unity=(-DCMAKE_UNITY_BUILD=ON)
stage "build (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${unity[@]}" >/dev/null
cmake --build build -j"$jobs"

if [ "$repeat" -gt 0 ]; then
  stage "tests labelled '$label', up to $repeat times each"
  ASN_TEST_TIME_SCALE=$time_scale ctest --test-dir build -L "$label" --output-on-failure \
    -j"$jobs" --repeat until-fail:"$repeat" --timeout "$(ctest_timeout "$time_scale")"
  exit 0
fi

stage "tests"
ASN_TEST_TIME_SCALE=$time_scale \
  ctest --test-dir build --output-on-failure -j"$jobs" --timeout "$(ctest_timeout "$time_scale")"
stage "Debian packages: build, install with apt, check, purge"
scripts/install-test.sh

if [ "$sanitize" = 1 ]; then
  # Debug at -g1: line tables are all a sanitizer report needs for file:line, and the full
  # debug information of -g costs a tenth of these builds' compile time (issue 30).
  # One ctest test per binary (ASN_CTEST_PER_CASE=OFF): a process takes ~0.4 s to start
  # under a sanitizer, more than most cases; GoogleTest's output still names a failed case.
  sanitizer_debug=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1
    "${unity[@]}" -DASN_CTEST_PER_CASE=OFF)
  # ASan + UBSan with clang (as scripts/fuzz.sh): its sanitizers are the upstream ones (GCC's
  # libsanitizer is a copy); it compiles our code under them in two thirds of GCC's CPU time,
  # a test file in less than half (issue 30); and its warnings, -Werror too, catch what GCC's
  # miss. TSan stays GCC's: under clang's, gRPC's inline header code (compiled into our
  # binaries, where tests/tsan.supp's called_from_lib cannot reach) raises race reports
  # that are found, then suppressed, one by one: a shard of lock_service_test ran past 9 minutes
  # of CPU where GCC's TSan takes 64 s.
  # The main, packaged build is GCC's.
  clang=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
  stage "build (ASan + UBSan)"
  cmake -S . -B build-asan -G Ninja "${sanitizer_debug[@]}" "${clang[@]}" -DASN_SANITIZE=address \
    -DASN_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j"$jobs" --target asn_unit_service_tests
  stage "unit and service tests under ASan + UBSan"
  # tests/lsan.supp: per-thread state OpenSSL frees as a thread ends, seen as a leak when
  # the process exits first.
  asan_scale=$(scaled 3)
  ASN_TEST_TIME_SCALE=$asan_scale ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
    UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan -L 'unit|service' --output-on-failure -j"$jobs" \
    --timeout "$(ctest_timeout "$asan_scale")"

  stage "build (ThreadSanitizer)"
  cmake -S . -B build-tsan -G Ninja "${sanitizer_debug[@]}" -DASN_SANITIZE=thread \
    -DASN_BUILD_BENCH=OFF >/dev/null
  cmake --build build-tsan -j"$jobs" --target asn_threaded_unit_service_tests
  stage "unit and service tests under ThreadSanitizer"
  # tests/tsan.supp: races TSan imagines inside the uninstrumented gRPC, abseil and protobuf.
  # history_size=7: the longest access history, so the other side of a report keeps its stack
  # and a suppression can match it ("failed to restore the stack" matches nothing).
  # -LE single-threaded: a test with one thread has no race to find (tests/README.md).
  tsan_scale=$(scaled 8)
  ASN_TEST_TIME_SCALE=$tsan_scale \
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=7:suppressions=$PWD/tests/tsan.supp" \
    ctest --test-dir build-tsan -L 'unit|service' -LE single-threaded --output-on-failure \
    -j"$jobs" --timeout "$(ctest_timeout "$tsan_scale")"

  stage "fuzzing (libFuzzer, ASan + UBSan), 20 s a target"
  scripts/fuzz.sh 20
fi
