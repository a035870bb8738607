#!/usr/bin/env bash
# Installs the Debian 12 packages asn builds, tests and runs with.
# Idempotent: when every package is already present it only runs dpkg-query and exits.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libnl-3-dev libnl-genl-3-dev libpci-dev
  libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev libisal-dev libsystemd-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  clang libclang-rt-14-dev
  # the linker (cmake/AsnLinker.cmake): a fraction of GNU ld's CPU for the test binaries
  mold
  python3 python3-yaml
  # asnsim: PNG plots (it writes SVG itself)
  gnuplot-nox
  # driver/: asn.ko against Debian's packaged kernel, and its QEMU kernel test (devlink, from
  # iproute2, checks asn.ko's devlink instance in the guest)
  linux-image-amd64 linux-headers-amd64 qemu-system-x86 busybox-static cpio iproute2
  # scripts/package.sh and scripts/install-test.sh: the packages' checks and asn-dkms's build
  lintian dkms man-db
  # the fabric (issue 25): etcd's v3 API protos, compiled at build time (etcd/), and a real
  # etcd cluster for the fabric tests
  golang-etcd-server-dev golang-github-gogo-protobuf-dev
  golang-github-grpc-ecosystem-grpc-gateway-dev etcd-server etcd-client
)

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
