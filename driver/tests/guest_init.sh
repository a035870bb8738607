#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the QEMU kernel test's initramfs: loads asn.ko with ivshmem=1, runs
# the guest test, unbinds the board under a reader in flight, checks dmesg and
# reports through the console and isa-debug-exit (0x10 pass, 0x11 fail).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

fails=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
finish() {
	if [ "$fails" -eq 0 ]; then echo "ASN-GUEST PASS"; v='\020'; else echo "ASN-GUEST FAIL ($fails)"; v='\021'; fi
	printf "$v" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
	sleep 5
	poweroff -f
}

echo "asn guest: kernel $(uname -r)"
t0=$(cut -d' ' -f1 /proc/uptime)
if insmod /asn.ko ivshmem=1; then ok "insmod asn.ko ivshmem=1"; else fail "insmod"; finish; fi

dmesg | grep -q 'not an asn board: magic 0x41534e30' && ok "bad magic refused with one dmesg line" || fail "no bad-magic line"
dmesg | grep -q 'block route at 0x40000: version 3 unsupported' && ok "unsupported block version refused" || fail "no bad-version line"
n=$(ls /sys/bus/pci/drivers/asn | grep -c '^0000:')
[ "$n" = 1 ] && ok "exactly one device bound" || fail "$n devices bound"
bdf=$(ls /sys/bus/pci/drivers/asn | grep '^0000:' | head -1)

/asn_guest_test check || fail "asn_guest_test check"
/kernel_bus_smoke || fail "kernel_bus_smoke"

# Safe removal: unbind while a reader sends batches of 256 reads.
/asn_guest_test reader > /tmp/reader.log 2>&1 &
reader=$!
sleep 1
echo "$bdf" > /sys/bus/pci/drivers/asn/unbind && ok "unbind $bdf with a reader in flight" || fail "unbind"
wait $reader && ok "reader ended cleanly" || fail "reader"
cat /tmp/reader.log
rmmod asn && ok "rmmod asn" || fail "rmmod"

# Module removal with a request in flight: load again, read in a loop, rmmod.
insmod /asn.ko ivshmem=1 && ok "insmod again" || fail "insmod again"
/asn_guest_test reader-rmmod > /tmp/reader2.log 2>&1 &
reader=$!
sleep 1
rmmod asn && ok "rmmod asn with a reader in flight" || fail "rmmod with a reader"
wait $reader && ok "reader ended cleanly after rmmod" || fail "reader after rmmod"
cat /tmp/reader2.log

if dmesg | grep -E 'WARNING|BUG|Oops|Call Trace|general protection'; then fail "dmesg has a warning"; else ok "dmesg free of WARN/BUG/Oops"; fi
dmesg | grep -E ' asn|asn[0-9]' | sed 's/^/dmesg: /'
t1=$(cut -d' ' -f1 /proc/uptime)
echo "asn guest: tests took $t0 -> $t1 s of guest uptime"
finish
