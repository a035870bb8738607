#!/usr/bin/env bash
# Installs the Debian 12 packages asn builds, tests and runs with.
# Idempotent: when every package is already present it only runs dpkg-query and exits.
#   scripts/install-deps.sh          everything: the build, the tests, the packages' checks
#   scripts/install-deps.sh demo     what scripts/demo.sh needs: the build of asnd, asnctl,
#                                    the lock example and asnsim (no kernel, QEMU, clang,
#                                    etcd server, lintian or DKMS: minutes less on a fresh host)
#   scripts/install-deps.sh --list [demo]   print the packages, one a line; install nothing
set -euo pipefail

list=0
if [ "${1:-}" = --list ]; then
  list=1
  shift
fi
group=${1:-all}
case "$group" in
  all | demo) ;;
  *) echo "install-deps: unknown group '$group': give demo, or nothing for everything" >&2; exit 2 ;;
esac

# What configuring and building asn needs (the demo's build): CMake finds every one of them,
# the tests' GoogleTest and benchmark too.
packages=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libnl-3-dev libnl-genl-3-dev libpci-dev
  # asnd's Prometheus endpoint (listen.metrics): the HTTP server under it
  libmicrohttpd-dev
  libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev libisal-dev libsystemd-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  # the linker (cmake/AsnLinker.cmake): a fraction of GNU ld's CPU for the test binaries
  mold
  python3 python3-yaml
  # asnsim: PNG plots (it writes SVG itself)
  gnuplot-nox
  # the fabric (issue 25): etcd's v3 API protos, compiled at build time (etcd/)
  golang-etcd-server-dev golang-github-gogo-protobuf-dev
  golang-github-grpc-ecosystem-grpc-gateway-dev
)
if [ "$group" = all ]; then
  packages+=(
    # the sanitizer builds of scripts/test.sh (clang's ASan + UBSan)
    clang libclang-rt-14-dev
    # driver/: asn.ko against Debian's packaged kernel, and its QEMU kernel test (devlink,
    # from iproute2, checks asn.ko's devlink instance in the guest)
    linux-image-amd64 linux-headers-amd64 qemu-system-x86 busybox-static cpio iproute2
    # scripts/package.sh and scripts/install-test.sh: the packages' checks and asn-dkms's build
    lintian dkms man-db
    # a real etcd cluster for the fabric tests
    etcd-server etcd-client
  )
fi

if [ "$list" = 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = installed ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
