#!/usr/bin/env bash
# Builds the Debian packages asn, asn-dkms, libasnclient<N> and libasnclient-dev into
# build/packages/ with CPack (cmake/AsnPackaging.cmake), from the tree build/ that
# scripts/test.sh builds: only what is missing or stale is compiled. Installs missing Debian
# packages first (needs root or sudo for that only).
#   scripts/package.sh             the packages
#   scripts/package.sh --lintian   and run lintian on them (errors fail the script)
set -euo pipefail
cd "$(dirname "$0")/.."

run_lintian=0
for arg in "$@"; do
  case "$arg" in
    --lintian) run_lintian=1 ;;
    *) echo "usage: scripts/package.sh [--lintian]" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
build=build
# The packages install under /usr (Debian's multiarch libdir comes with that prefix); the
# prefix changes no compiled object, so an already built tree stays built.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  >/dev/null
cmake --build "$build" -j"$(nproc)" --target asnd asnctl asnctl_completion_files asnsim asnclient deb-files

rm -rf "$build/packages"
(cd "$build" && cpack -G DEB -C RelWithDebInfo >/dev/null)
rm -rf "$build/packages/_CPack_Packages"
ls -1 "$build"/packages/*.deb

if [ "$run_lintian" = 1 ]; then
  # Tags this packaging accepts, with the reason, are in deploy/debian/lintian-suppress.
  lintian --fail-on error --suppress-tags-from-file deploy/debian/lintian-suppress \
    "$build"/packages/*.deb
fi
