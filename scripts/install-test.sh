#!/usr/bin/env bash
# The Debian packages on this machine: builds them (scripts/package.sh, from the tree build/),
# installs them with apt so that their dependencies resolve, checks that every file lands
# where docs/operator-guide.md says and that the shipped configuration and unit are valid,
# then purges them and checks that the purge removed what the packages made and only that: the
# state directory /var/lib/asn, the user asn that owns it and another board's memory in
# /dev/shm/asn are left. A trap purges them whatever happens, and removes what the test
# itself left (that board's memory, the user asn when the install made it). Runs as root
# (CI) or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-test: needs root or sudo" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
as_root() { "${sudo_cmd[@]}" "$@"; }
fail() { echo "install-test: FAIL: $*" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive

packages=(asn asn-dkms libasnclient-dev)
# A machine where the packages are in use is not the test's to purge.
for p in asn asn-dkms libasnclient-dev; do
  if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ]; then
    echo "install-test: SKIPPED: $p is installed on this machine and the test would purge it"
    exit 0
  fi
done
for d in /run/asn /dev/shm/asn; do
  if [ -e "$d" ]; then
    echo "install-test: SKIPPED: $d exists (another asnd's?) and a purge would remove it"
    exit 0
  fi
done

scripts/package.sh --lintian
debs=("$PWD"/build/packages/*.deb)
lib_pkg=$(basename "$(ls build/packages/libasnclient[0-9]*_*.deb)" | cut -d_ -f1)
packages+=("$lib_pkg")
version=$(dpkg-deb -f build/packages/asn_*.deb Version)
upstream=${version%-*}
dkms_kernel=$(ls -v /lib/modules | tail -n 1)

# The state directory is the operator's: a purge must leave it. The test plants one file in
# it (when it does not exist yet) and removes it at the end. A purge leaves the user asn too
# (postrm): the test removes it at the end when the install made it.
planted_state=0
planted_instance=0
made_user=0
getent passwd asn >/dev/null || made_user=1
asnd_pid=""
cleanup() {
  status=$?
  if [ -n "$asnd_pid" ]; then
    as_root kill "$asnd_pid" 2>/dev/null || true
    sleep 1
  fi
  as_root apt-get purge -y -qq "${packages[@]}" >/dev/null 2>&1 || true
  [ "$planted_state" = 1 ] && as_root rm -rf /var/lib/asn
  if [ "$planted_instance" = 1 ]; then
    as_root rm -f /etc/asn/asnd-install-test.yaml
    as_root rmdir /etc/asn 2>/dev/null || true
  fi
  # /dev/shm/asn did not exist before the test (checked above): all in it is the test's.
  as_root rm -rf /dev/shm/asn
  if [ "$made_user" = 1 ]; then
    as_root deluser --system --quiet asn >/dev/null 2>&1 || true
    as_root delgroup --system --quiet asn >/dev/null 2>&1 || true
  fi
  [ "$status" = 0 ] && echo "install-test: OK" || echo "install-test: failed ($status)" >&2
}
trap cleanup EXIT

echo "== install ${debs[*]##*/}"
as_root apt-get install -y -qq --no-install-recommends "${debs[@]}" >/tmp/asn-install-test.log 2>&1 ||
  { cat /tmp/asn-install-test.log >&2; fail "apt-get install"; }
# What the maintainer scripts said (DKMS's build, asnd started or not).
sed -n '/^Setting up asn/,/^\(Setting up lib\|Processing\)/p' /tmp/asn-install-test.log |
  grep -v '^\(Setting up lib\|Processing\)' || true

echo "== files"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
expected=(
  /usr/sbin/asnd /usr/bin/asnctl /usr/bin/asnsim
  /usr/lib/systemd/system/asnd.service /usr/lib/systemd/system/asnd@.service
  /etc/asn/asnd.yaml
  /usr/lib/udev/rules.d/60-asn.rules
  /usr/share/man/man8/asnd.8.gz /usr/share/man/man8/asnctl.8.gz
  /usr/share/man/man5/asnd.yaml.5.gz
  /usr/share/bash-completion/completions/asnctl /usr/share/zsh/vendor-completions/_asnctl
  /usr/share/doc/asn/operator-guide.md /usr/share/doc/asn/asnd.yaml /usr/share/doc/asn/copyright
  "/usr/src/asn-$upstream/dkms.conf" "/usr/src/asn-$upstream/generated/asn_regs.h"
  /usr/lib/modules-load.d/asn.conf
  "/usr/lib/$multiarch/libasnclient.so.1" "/usr/lib/$multiarch/libasnclient.so"
  /usr/include/asn/client/asnclient.h /usr/include/asn/client/locks.hpp
  "/usr/lib/$multiarch/pkgconfig/asnclient.pc"
)
for f in "${expected[@]}"; do [ -e "$f" ] || fail "$f missing"; done
dpkg-query -W -f='${Conffiles}\n' asn | grep -q ' /etc/asn/asnd.yaml ' ||
  fail "/etc/asn/asnd.yaml is not a conffile"
getent passwd asn >/dev/null || fail "no user asn"
getent group asn >/dev/null || fail "no group asn"
[ "$(getent passwd asn | cut -d: -f7)" = /usr/sbin/nologin ] || fail "user asn has a login shell"
[ -L /etc/systemd/system/multi-user.target.wants/asnd.service ] || fail "asnd.service not enabled"
echo "files, user, group and the enabled unit are in place"

echo "== asn.ko (DKMS)"
if [ -f "/lib/modules/$dkms_kernel/build/Makefile" ]; then
  modinfo -k "$dkms_kernel" -F vermagic asn >/dev/null || fail "DKMS built no asn.ko for $dkms_kernel"
  echo "built for $dkms_kernel: $(modinfo -k "$dkms_kernel" -n asn)"
  # DKMS must build without -Werror (driver/Kbuild: a new kernel's new warning would leave
  # the host without asn.ko): dkms.conf does not ask for it and Kbuild adds it only when asked
  # (DKMS cleans its build area, so the compiler's command line is gone by now).
  grep '^MAKE' "/usr/src/asn-$upstream/dkms.conf" | grep -q ASN_WERROR &&
    fail "dkms.conf builds asn.ko with ASN_WERROR"
  grep -q '^ccflags-y.*-Werror' "/usr/src/asn-$upstream/Kbuild" &&
    fail "the DKMS tree's Kbuild always adds -Werror"
  echo "without -Werror"
else
  echo "no headers for $dkms_kernel: DKMS skipped it (as it should)"
fi

echo "== asnd --check-config, as the user asn, on the shipped configuration"
as_root runuser -u asn -- /usr/sbin/asnd --config /etc/asn/asnd.yaml --check-config
echo "== asnd@install-test's ExecStartPre, as the user asn: exit 2 until its own file exists"
# The template's own command line, %i filled in. The instance's file is the operator's: the
# purge leaves it (checked there); the test removes it at the end.
instance_pre=$(sed -e :a -e '/\\$/N; s/\\\n//; ta' /usr/lib/systemd/system/asnd@.service |
               sed -n 's/^ExecStartPre=//p' | sed 's/%i/install-test/g')
rc=0
# shellcheck disable=SC2086  # the command line is words
as_root runuser -u asn -- $instance_pre >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "asnd@install-test without /etc/asn/asnd-install-test.yaml: exit $rc, not 2"
planted_instance=1
as_root cp /etc/asn/asnd.yaml /etc/asn/asnd-install-test.yaml
# shellcheck disable=SC2086
as_root runuser -u asn -- $instance_pre
echo "== udev rule: parsed without errors (udevadm test on any PCI device; runs no RUN)"
pci_dev=$(ls /sys/bus/pci/devices 2>/dev/null | head -n 1)
if [ -n "$pci_dev" ]; then
  rules_errors=$(as_root udevadm test --action=add "/sys/bus/pci/devices/$pci_dev" 2>&1 |
                 grep '60-asn.rules:' || true)
  [ -z "$rules_errors" ] || { echo "$rules_errors" >&2; fail "udev rule"; }
  echo "clean"
else
  echo "no PCI device to test it on: skipped"
fi
echo "== systemd-analyze verify (asnd.service, and the template asnd@.service)"
for unit in asnd.service asnd@.service; do
  out=$(as_root systemd-analyze verify "/usr/lib/systemd/system/$unit" 2>&1) ||
    { echo "$out" >&2; fail "systemd-analyze verify $unit"; }
  [ -z "$out" ] || { echo "$out" >&2; fail "systemd-analyze verify $unit is not clean"; }
done
# The template is asnd.service with its own config, socket and state directory per instance
# (deploy/asnd@.service): the rest, the sandbox above all, must not drift apart.
unit_rest() {
  sed -e :a -e '/\\$/N; s/\\\n//; ta' "$1" |
    grep -vE '^(#|$|Description=|ExecStartPre=|ExecStart=|RuntimeDirectory=|StateDirectory=)'
}
diff <(unit_rest /usr/lib/systemd/system/asnd.service) \
     <(unit_rest /usr/lib/systemd/system/asnd@.service) >&2 ||
  fail "asnd@.service differs from asnd.service beyond its instance's config, socket and state"
echo "clean"
echo "== asnctl --help, man asnctl"
asnctl --help >/dev/null || fail "asnctl --help"
MANPAGER=cat MANWIDTH=80 man asnctl 2>/dev/null | grep -q "operator command line" || fail "man asnctl"
MANPAGER=cat MANWIDTH=80 man 5 asnd.yaml 2>/dev/null | grep -q "backend.kind" || fail "man 5 asnd.yaml"
echo "== bash completion: asnctl loc<TAB> offers lock and locks"
completed=$(bash -c 'source /usr/share/bash-completion/completions/asnctl
  COMP_WORDS=(asnctl loc); COMP_CWORD=1; _asnctl; echo "${COMPREPLY[*]}"')
[ "$completed" = "lock locks" ] || fail "bash completion of 'asnctl loc': '$completed'"
echo "== libasnclient-dev: a C program links with pkg-config asnclient"
tmp=$(mktemp -d)
printf '#include <asn/client/asnclient.h>\nint main(void) { return 0; }\n' >"$tmp/t.c"
# shellcheck disable=SC2046
cc -o "$tmp/t" "$tmp/t.c" $(pkg-config --cflags --libs asnclient) || fail "compile against asnclient"
"$tmp/t" || fail "run against libasnclient"
rm -rf "$tmp"

echo "== asnd runs as the user asn (as the unit starts it, without systemd's sandbox)"
# systemd would make /run/asn and /var/lib/asn (RuntimeDirectory, StateDirectory); the state
# directory, when the test makes it, is removed at the end.
if [ ! -e /var/lib/asn ]; then
  as_root install -d -o asn -g asn -m 0750 /var/lib/asn
  planted_state=1
fi
as_root install -d -o asn -g asn -m 0755 /run/asn
"${sudo_cmd[@]}" runuser -u asn -- /usr/sbin/asnd --config /etc/asn/asnd.yaml \
  --board install-test >/tmp/asn-install-test-asnd.log 2>&1 &
runner=$!
for _ in $(seq 100); do [ -S /run/asn/asnd.sock ] && break; sleep 0.1; done
# The user asn is the test's own (made by the install): its one process is this asnd.
asnd_pid=$(pgrep -u asn -x asnd || true)
[ -n "$asnd_pid" ] || { cat /tmp/asn-install-test-asnd.log >&2; fail "asnd did not start"; }
status_out=$(as_root asnctl status 2>&1) ||
  { cat /tmp/asn-install-test-asnd.log >&2; fail "asnctl status: $status_out"; }
echo "$status_out" | head -n 1
as_root kill "$asnd_pid"
wait "$runner" || fail "asnd did not stop cleanly"
asnd_pid=""
[ "$(stat -c %U /dev/shm/asn)" = asn ] || fail "/dev/shm/asn is not the user asn's"

echo "== upgrade (the same version again): the operator's configuration and the user stay"
uid=$(id -u asn)
echo "# edited by install-test" | as_root tee -a /etc/asn/asnd.yaml >/dev/null
as_root apt-get install -y -qq --reinstall "${debs[@]}" >/tmp/asn-install-test.log 2>&1 ||
  { cat /tmp/asn-install-test.log >&2; fail "apt-get install --reinstall"; }
grep -q "edited by install-test" /etc/asn/asnd.yaml || fail "the upgrade replaced the edited conffile"
[ "$(id -u asn)" = "$uid" ] || fail "the upgrade made a new user asn"
echo "kept"

echo "== purge"
as_root touch /var/lib/asn/install-test-marker
# The board the shipped configuration names, as asnd.service would have made it: the purge
# removes it. The board the test's asnd ran (asn-board-install-test) is not the package's:
# it stays.
as_root runuser -u asn -- touch /dev/shm/asn/asn-board-asn0
as_root apt-get purge -y -qq "${packages[@]}" >/tmp/asn-install-test.log 2>&1 ||
  { cat /tmp/asn-install-test.log >&2; fail "apt-get purge"; }
grep '^asn: purge left' /tmp/asn-install-test.log || true
for f in "${expected[@]}" /run/asn /dev/shm/asn/asn-board-asn0 \
         /usr/src/asn-"$upstream" /etc/systemd/system/multi-user.target.wants/asnd.service; do
  [ ! -e "$f" ] || fail "$f left after purge"
done
[ -e /etc/asn/asnd-install-test.yaml ] || fail "purge removed the operator's asnd-install-test.yaml"
grep -q '^asn: purge left /etc/asn: .*asnd-install-test.yaml' /tmp/asn-install-test.log ||
  fail "purge did not say it left /etc/asn"
[ -e /dev/shm/asn/asn-board-install-test ] || fail "purge removed another board's memory"
grep -q '^asn: purge left /dev/shm/asn: .*asn-board-install-test' /tmp/asn-install-test.log ||
  fail "purge did not say it left /dev/shm/asn"
# Debian keeps system users on purge; the state directory they own then has a real owner.
getent passwd asn >/dev/null || fail "purge removed the user asn (it owns /var/lib/asn)"
getent group asn >/dev/null || fail "purge removed the group asn"
! modinfo -k "$dkms_kernel" asn >/dev/null 2>&1 || fail "asn.ko left after purge"
[ -d /var/lib/asn ] || fail "purge removed the state directory"
[ -e /var/lib/asn/install-test-marker ] || fail "purge emptied the state directory"
getent passwd "$(stat -c %u /var/lib/asn)" >/dev/null ||
  fail "/var/lib/asn is owned by uid $(stat -c %u /var/lib/asn), which names no user"
as_root rm -f /var/lib/asn/install-test-marker
echo "purge left only /var/lib/asn, the user asn and the files it did not make"
