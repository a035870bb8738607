#!/bin/bash
# libasnclient as a user gets it: the components libasnclient and libasnclient-dev (what the
# Debian packages hold) installed into a temporary prefix, pkg-config, the examples built
# alone against it, run against the fake Locks service.
#   install_test.sh BUILD_DIR SOURCE_DIR FAKE_SERVER CXX CC
set -euo pipefail
build=$1 source=$2 fake=$3 cxx=$4 cc=$5
tmp=$(mktemp -d)
server=
cleanup() {
  if [[ -n $server ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# The components examples/locks/README.md tells a user to install, as it spells them: a
# component that does not exist installs nothing, silently (issue 28).
components=$(grep -o -- '--component [A-Za-z0-9_-]*' "$source/examples/locks/README.md" | cut -d' ' -f2)
[[ -n $components ]] || { echo "examples/locks/README.md names no install component"; exit 1; }
for component in $components; do
  cmake --install "$build" --prefix "$tmp/prefix/$component" --component "$component" >/dev/null
  [[ -n $(find "$tmp/prefix/$component" -type f) ]] ||
    { echo "install component '$component' (examples/locks/README.md) installs nothing"; exit 1; }
  cp -a "$tmp/prefix/$component/." "$tmp/prefix/"
  rm -rf "${tmp:?}/prefix/$component"
done
pc=$(find "$tmp/prefix" -name asnclient.pc)
[[ -n $pc ]] || { echo "asnclient.pc not installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
libs=$(pkg-config --libs asnclient)
cflags=$(pkg-config --cflags asnclient)
echo "pkg-config: $cflags $libs"
[[ $libs == *-lasnclient* ]] || { echo "no -lasnclient"; exit 1; }
includedir=$(pkg-config --variable=includedir asnclient)
[[ $(realpath "$includedir") == $(realpath "$tmp/prefix")/* ]] || { echo "includedir outside the prefix"; exit 1; }
[[ -f $includedir/asn/client/locks.hpp && -f $includedir/asn/client/asnclient.h ]]
# Only the include directory: nothing of gRPC's or abseil's (their -DNOMINMAX) leaks into a
# user's build through Requires.private (issue 28, finding 14).
[[ $cflags == "-I$includedir" || $cflags == "-I$includedir " ]] ||
  { echo "pkg-config --cflags asnclient is '$cflags', not just -I$includedir"; exit 1; }
[[ -z $(pkg-config --print-requires-private asnclient) ]] ||
  { echo "asnclient.pc has Requires.private: only the shared library is installed"; exit 1; }
libdir=$(pkg-config --variable=libdir asnclient)
ls "$libdir"/libasnclient.so.1 >/dev/null

# shellcheck disable=SC2086  # the flags are words
"$cxx" -std=c++20 -Wall -Wextra -Werror -o "$tmp/example" "$source/examples/locks/lock_example.cc" \
  $cflags $libs -Wl,-rpath,"$libdir"
# shellcheck disable=SC2086
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -o "$tmp/example_c" \
  "$source/examples/locks/lock_example.c" $cflags $libs -Wl,-rpath,"$libdir"

"$fake" "$tmp/asnd.sock" >"$tmp/server.out" &
server=$!
for _ in $(seq 100); do grep -q ready "$tmp/server.out" 2>/dev/null && break; sleep 0.05; done
out=$("$tmp/example" "$tmp/asnd.sock" inode-1)
echo "$out"
grep -q "locked, token 1," <<<"$out"
grep -q "with fencing token 1" <<<"$out"
out=$("$tmp/example_c" "unix:$tmp/asnd.sock")
echo "$out"
grep -q "locked, token" <<<"$out"
# No endpoint: $ASN_SOCKET, as asnctl reads it (a path), in both APIs.
out=$(ASN_SOCKET="$tmp/asnd.sock" "$tmp/example_c")
echo "$out"
grep -q "locked, token" <<<"$out"
out=$(ASN_SOCKET="$tmp/asnd.sock" "$tmp/example")
grep -q "with fencing token" <<<"$out"
echo "ok"
