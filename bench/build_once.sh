# shellcheck shell=bash
# Sourced by the benchmark scripts that run asnd and asnctl themselves: `build` is the build
# directory ($BENCH_BUILD_DIR, default build/; bench/run.sh sets it), and build_once builds
# the programs it is given (paths in it, each named as its CMake target) unless all of them
# are there already, configuring the directory first if needed.
#   build_once "$build/daemon/asnd" "$build/cli/asnctl"
build=${BENCH_BUILD_DIR:-build}

build_once() {
  local program targets=()
  for program in "$@"; do
    [ -x "$program" ] || targets+=("$(basename "$program")")
  done
  [ ${#targets[@]} -gt 0 ] || return 0
  [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >/dev/null
}
