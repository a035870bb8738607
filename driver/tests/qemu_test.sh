#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The QEMU kernel test of asn.ko: builds the module against Debian's packaged
# headers, boots Debian's packaged kernel (TCG, no KVM) with three ivshmem-plain
# devices (a valid netfpga-1g register space, one with a wrong magic, one with
# an unsupported block version), runs the guest test, and checks on the host
# that the good device's memory file holds what the guest wrote.
#
#   driver/tests/qemu_test.sh [OUTDIR]      (default driver/tests/out)
#
# With ASND_PATH and ASNCTL_PATH naming built binaries (ctest sets them), the
# guest then also runs asnd itself on the kernel backend and drives it with
# asnctl; the host checks that asnctl's register write reached the memory file.
# ASN_QEMU_ASND=0 leaves that part out, =1 fails when the binaries are missing;
# a part left out is said on the output, never silently. ASN_QEMU_BENCH=<regs_bench>
# (with asnd's binaries) runs bench/regs_bench on the emulated and the kernel bus
# in the guest instead of the tests.
#
# Fails loudly (exit 1) when QEMU, the kernel image or the headers are missing:
# it never skips.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
driver=$(cd "$here/.." && pwd)
top=$(cd "$driver/.." && pwd)
out=${1:-$here/out}
# The guest's whole run may take this long (seconds) before it counts as hung: 15-75 s on an
# idle 2-core machine, several times that beside other work (TCG has no acceleration), times
# ASN_TEST_TIME_SCALE (tests/README.md).
timeout_s=${ASN_QEMU_TIMEOUT:-$(awk -v s="${ASN_TEST_TIME_SCALE:-1}" 'BEGIN { printf "%d", 540 * s }')}
start=$(date +%s)

die() { echo "qemu_test: FAIL: $*" >&2; exit 1; }
step() { echo "qemu_test: [$(( $(date +%s) - start ))s] $*"; }

command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
# busybox-static installs /bin/busybox; a dynamic one would not run in the initramfs.
busybox=/bin/busybox
[ -x "$busybox" ] && ! readelf -d "$busybox" 2>/dev/null | grep -q NEEDED ||
	die "no static busybox at $busybox (apt-get install busybox-static)"
command -v cpio >/dev/null || die "cpio missing (apt-get install cpio)"
devlink_bin=$(command -v devlink || true)
[ -x "$devlink_bin" ] || die "devlink missing (apt-get install iproute2)"

kdir=$(make -s -C "$driver" kdir)
[ -n "$kdir" ] && [ -f "$kdir/Makefile" ] || die "no kernel headers in /lib/modules/*/build (apt-get install linux-headers-amd64)"
kver=$(basename "$(dirname "$kdir")")
kernel=/boot/vmlinuz-$kver
[ -r "$kernel" ] || die "no kernel image $kernel for headers $kdir (apt-get install linux-image-amd64)"

mkdir -p "$out"
step "building asn.ko against $kdir"
mod=$out/module
make -s -C "$driver" KDIR="$kdir" BUILD="$mod" ASN_WERROR=y -j2 >"$out/build.log" 2>&1 || { cat "$out/build.log"; die "module build failed"; }
grep -i 'warning' "$out/build.log" && die "module build has warnings"
mi=$(modinfo -F vermagic "$mod/asn.ko")
case "$mi" in "$kver "*) ;; *) die "asn.ko vermagic '$mi' does not match $kver";; esac

step "building the guest test program"
gcc -static -O2 -Wall -Wextra -Werror -I"$driver/include/uapi" -I"$mod/generated" \
	-o "$out/asn_guest_test" "$here/asn_guest_test.c"

step "building asnd's kernel backend smoke test (KernelBus, static libnl)"
g++ -std=c++20 -O2 -Wall -Wextra -Werror -static -DFMT_HEADER_ONLY -I"$top/daemon/src" \
	-I"$top/lib/status/include" -I"$top/lib/text/include" -I"$driver/include/uapi" \
	-I"$mod/generated" $(pkg-config --cflags libnl-genl-3.0) -o "$out/kernel_bus_smoke" \
	"$here/kernel_bus_smoke.cc" "$top/daemon/src/bus/kernel_bus.cc" "$top/lib/text/src/text.cc" \
	-lnl-genl-3 -lnl-3 -pthread \
	2>"$out/smoke-build.log" || { cat "$out/smoke-build.log"; die "kernel_bus_smoke build failed"; }

step "building the memory images"
yaml=$top/fpga/regmap/asn_regmap.yaml
python3 "$here/mkimage.py" "$yaml" "$out/good.img"
python3 "$here/mkimage.py" "$yaml" "$out/bad-magic.img" --bad magic
python3 "$here/mkimage.py" "$yaml" "$out/bad-version.img" --bad version
# A second board, hidden behind a wrong magic until the guest's asnd test mends it and binds it.
python3 "$here/mkimage.py" "$yaml" "$out/second.img" --bad magic
cp "$out/good.img" "$out/good.orig.img"
mem_size=$(stat -c %s "$out/good.img")

step "building the initramfs"
root=$out/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp}
cp "$busybox" "$root/bin/busybox"
cp "$mod/asn.ko" "$out/asn_guest_test" "$out/kernel_bus_smoke" "$root/"
cp "$here/guest_init.sh" "$root/init"
# devlink (iproute2), with every library ldd names and the loader, for asn.ko's devlink checks.
cp "$devlink_bin" "$root/bin/devlink"
for lib in $(ldd "$devlink_bin" | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' | sort -u); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
chmod +x "$root/init"
# asnd in the guest: ASN_QEMU_ASND=1 requires it, 0 leaves it out, unset runs it when
# ASND_PATH and ASNCTL_PATH name built binaries and says so when they do not.
with_asnd=0
asnd_mode=${ASN_QEMU_ASND:-auto}
if [ "$asnd_mode" != 0 ]; then
	if [ -x "${ASND_PATH:-}" ] && [ -x "${ASNCTL_PATH:-}" ]; then
		with_asnd=1
	elif [ "$asnd_mode" = 1 ]; then
		die "ASN_QEMU_ASND=1 but ASND_PATH='${ASND_PATH:-}' / ASNCTL_PATH='${ASNCTL_PATH:-}' are not executables (build asnd and asnctl)"
	fi
fi
if [ "$with_asnd" = 1 ]; then
	# Debian ships no static gRPC: the binaries go in with every library ldd names, at
	# the same paths, and the dynamic loader. Debug info stays out (strip).
	strip -o "$root/bin/asnd" "$ASND_PATH"
	strip -o "$root/bin/asnctl" "$ASNCTL_PATH"
	for lib in $(ldd "$ASND_PATH" "$ASNCTL_PATH" | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' | sort -u); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	if [ -n "${ASN_QEMU_BENCH:-}" ]; then
		# Benchmark mode: bench/regs_bench on both backends in the guest, no other test.
		strip -o "$root/bin/regs_bench" "$ASN_QEMU_BENCH"
		for lib in $(ldd "$ASN_QEMU_BENCH" | awk '/=> \//{print $3}'); do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	fi
	step "asnd, asnctl and $(find "$root/lib" "$root/lib64" -type f 2>/dev/null | wc -l) libraries: $(du -sh "$root" | cut -f1) unpacked"
else
	echo "qemu_test: NOTE: asnd in the guest left out (ASN_QEMU_ASND=${ASN_QEMU_ASND:-unset}, ASND_PATH='${ASND_PATH:-}', ASNCTL_PATH='${ASNCTL_PATH:-}': build asnd and asnctl)"
fi
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initramfs.cpio.gz"

step "booting $kernel in QEMU (TCG)"
dev() { echo "-object memory-backend-file,id=$1,size=$mem_size,mem-path=$2,share=on -device ivshmem-plain,memdev=$1${3:+,addr=$3}"; }
# The guest's cue for a faked board reset: 0xcafe0001 at 0x100 of bad-magic.img (a board
# asn.ko refused, so the guest can map it); then id.generation = 2 in good.img.
# Before asnd starts, the guest cues 0xcafe0002 there: the host keeps a copy of good.img
# (what the driver tests left) and answers 0xcafe0003 at 0x104.
cp "$out/good.img" "$out/good.pre-asnd.img"
(
	cue() { od -A n -t x4 -j 256 -N 4 "$out/bad-magic.img" | tr -d ' '; }
	while sleep 0.2; do
		if [ "$(cue)" = cafe0001 ]; then
			printf '\x02\x00\x00\x00' | dd of="$out/good.img" bs=1 seek=52 conv=notrunc status=none
			break
		fi
	done
	# The guest's cue for bus errors (devlink's health reporter): 0xcafe0004; then
	# id.bus_error_count = 3 in good.img, answered 0xcafe0005.
	while sleep 0.2; do
		if [ "$(cue)" = cafe0004 ]; then
			printf '\x03\x00\x00\x00' | dd of="$out/good.img" bs=1 seek=64 conv=notrunc status=none
			printf '\x05\x00\xfe\xca' | dd of="$out/bad-magic.img" bs=1 seek=260 conv=notrunc status=none
			break
		fi
	done
	while sleep 0.2; do
		if [ "$(cue)" = cafe0002 ]; then
			cp "$out/good.img" "$out/good.pre-asnd.img"
			printf '\x03\x00\xfe\xca' | dd of="$out/bad-magic.img" bs=1 seek=260 conv=notrunc status=none
			break
		fi
	done
) &
watcher=$!
set +e
# no_timer_check: on a busy host TCG runs the guest so slowly that the kernel's IO-APIC
# timer check fails and it panics ("IO-APIC + timer doesn't work!", seen beside eight CPU
# hogs); the check is for broken hardware, not for an emulator that is merely slow.
# shellcheck disable=SC2046
timeout "$timeout_s" qemu-system-x86_64 -accel tcg -M pc -m 512M -smp 1 -nographic \
	-no-reboot -kernel "$kernel" -initrd "$out/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init no_timer_check" \
	$(dev good "$out/good.img") $(dev badmagic "$out/bad-magic.img") \
	$(dev badversion "$out/bad-version.img") $(dev second "$out/second.img" 0x10) \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-serial "file:$out/console.log" -monitor none -display none </dev/null >"$out/qemu.log" 2>&1
rc=$?
set -e
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
step "QEMU exited with $rc"
grep -a -E '^(ok|FAIL|bench)|ASN-|KERNEL-BUS|asn |asnd guest' "$out/console.log" || true
[ "$rc" -ne 124 ] || die "QEMU timed out after ${timeout_s}s (console: $out/console.log)"
# isa-debug-exit: value v exits QEMU with (v << 1) | 1; the guest writes 0x10 on pass.
[ "$rc" -eq 33 ] || die "guest did not report a pass (exit $rc; console: $out/console.log)"
grep -aq 'ASN-GUEST PASS' "$out/console.log" || die "no ASN-GUEST PASS line on the console"

if [ -n "${ASN_QEMU_BENCH:-}" ]; then
	step "benchmark mode: the memory checks are left out"
	exit 0
fi
step "checking the memory file on the host"
# The driver tests' writes are checked in the copy taken before asnd started.
checked=$out/good.img
[ "$with_asnd" = 0 ] || checked=$out/good.pre-asnd.img
word() { od -A n -t x4 -j "$(($2))" -N 4 "$1" | tr -d ' '; }
check_word() {
	local got
	got=$(word "$checked" "$1")
	[ "$got" = "$2" ] || die "memory file at $1: $got, want $2 ($3)"
	echo "ok   memory file at $1 = 0x$2 ($3)"
}
check_word 0x2c 5ca1ab1e "id.scratch"
check_word 0x131c 00000042 "port 3 aldfb_threshold"
check_word 0x60074 04030201 "route dest_table[7] word 1"
for i in 0 1 63; do
	check_word $((0x90000 + 4 * i)) "$(printf 'a50000%02x' "$i")" "tdm slot_table shadow word $i"
done
check_word 0xa0000 00000000 "tdm slot_table active bank untouched"
for i in 0 3; do
	check_word $((0x90100 + 4 * i)) "$(printf 'b000000%x' "$i")" "table write: tdm slot_table shadow word $((64 + i))"
done
check_word 0x80020 00000001 "table write: tdm.control.arm"
check_word 0x34 00000002 "id.generation (the host faked a board reset on the guest's cue)"
check_word 0x38 00000004 "id.irq_status, route_commit as kernel_bus_smoke left it (plain memory: W1C does not clear)"
check_word 0x101c 00000000 "port 0 aldfb_threshold untouched"
check_word 0x40 00000003 "id.bus_error_count (the host faked bus errors on the guest's cue)"
check_word 0x410000 feedc0de "lock request ring word 0, as the board's owner wrote it"
# Nothing else changed: every byte but the words above equals the original image.
changed=$(cmp -l "$out/good.orig.img" "$checked" | awk '{printf "%x\n", int(($1-1)/4)*4}' | sort -u |
	grep -v -x -E '2c|131c|60074|900[0-9a-f][0-9a-f]|9010[0-9a-f]|80020|34|38|40|410000' || true)
[ -z "$changed" ] || die "memory file changed at unexpected offsets: $(echo "$changed" | head -5 | tr '\n' ' ')"
echo "ok   no other word of the memory file changed"
if [ "$with_asnd" = 1 ]; then
	grep -aq 'ASND-GUEST DONE' "$out/console.log" || die "the guest did not run asnd (console: $out/console.log)"
	checked=$out/good.img
	check_word 0x2c 600dcafe "id.scratch as asnctl wrote it through asnd's kernel backend"
	# What else asnd wrote at start (its reconciler programs the board from its desired
	# state): listed, not judged here; the driver refused anything read-only.
	asnd_words=$( (cmp -l "$out/good.pre-asnd.img" "$out/good.img" || true) | awk '{printf "%x\n", int(($1-1)/4)*4}' | sort -u)
	echo "info asnd changed $(echo "$asnd_words" | grep -c . || true) word(s): $(echo "$asnd_words" | head -12 | tr '\n' ' ')"
fi
step "PASS"
