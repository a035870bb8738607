/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QEMU guest test's access to boards no driver holds, through their sysfs
 * BAR: a cue for the host (which changes a board's memory file), and peek/poke
 * of a word between two bindings. Included once, by asn_guest_test.c.
 */
#ifndef GUEST_BAR_H
#define GUEST_BAR_H

/*
 * The first page of BAR 2 of the ivshmem board (1af4:1110) in slot SLOT of bus 0, mapped,
 * or NULL when the slot holds no such board, a driver holds it (asn.ko holds the board
 * under test: sysfs mmap of its BAR would be refused anyway) or its BAR cannot be mapped.
 */
static volatile uint32_t *map_idle_ivshmem(int slot)
{
	char path[96], ids[32] = "", drv[128];
	volatile uint32_t *mem;
	FILE *f;
	int bar;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/0000:00:%02x.0/device", slot);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	if (!fgets(ids, sizeof(ids), f))
		ids[0] = 0;
	fclose(f);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/0000:00:%02x.0/driver", slot);
	if (strncmp(ids, "0x1110", 6) || readlink(path, drv, sizeof(drv)) >= 0)
		return NULL;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/0000:00:%02x.0/resource2", slot);
	bar = open(path, O_RDWR | O_SYNC);
	if (bar < 0)
		return NULL;
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, bar, 0);
	close(bar);
	return mem == MAP_FAILED ? NULL : mem;
}

/*
 * "cue VALUE ACK": a word for the host, through the BAR of every ivshmem board no driver
 * holds: VALUE at 0x100; then wait (up to 60 s) until the host answers ACK at 0x104.
 */
static int run_cue(uint32_t value, uint32_t ack)
{
	volatile uint32_t *mems[32];
	int i, n = 0, waited;

	for (i = 0; i < 32; i++) {
		volatile uint32_t *mem = map_idle_ivshmem(i);

		if (!mem)
			continue;
		mem[0x104 / 4] = 0;
		mem[0x100 / 4] = value;
		mems[n++] = mem;
	}
	if (!n) {
		printf("FAIL cue 0x%08x: no unbound ivshmem board to write it to\n", value);
		return 1;
	}
	for (waited = 0; waited < 600; waited++) {
		for (i = 0; i < n; i++) {
			if (mems[i][0x104 / 4] == ack) {
				printf("ok   host answered cue 0x%08x\n", value);
				return 0;
			}
		}
		usleep(100000);
	}
	printf("FAIL cue 0x%08x: no answer from the host in 60 s\n", value);
	return 1;
}

/*
 * "peek BDF OFFSET" / "poke BDF OFFSET VALUE": a word of the BAR of an ivshmem board no
 * driver holds (the test changes a board between two bindings, as another card in the
 * same slot would be). VALUE "magic" is the register map's magic.
 */
static volatile uint32_t *map_unbound(const char *bdf)
{
	char path[128];
	volatile uint32_t *mem;
	int bar;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", bdf);
	if (access(path, F_OK) == 0) {
		printf("FAIL %s is bound to a driver: unbind it first\n", bdf);
		return NULL;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource2", bdf);
	bar = open(path, O_RDWR | O_SYNC);
	if (bar < 0) {
		printf("FAIL open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	mem = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED, bar, 0);
	close(bar);
	if (mem == MAP_FAILED) {
		printf("FAIL mmap %s: %s\n", path, strerror(errno));
		return NULL;
	}
	return mem;
}

static int run_peek_poke(int argc, char **argv)
{
	volatile uint32_t *mem = map_unbound(argv[2]);
	uint32_t offset = strtoul(argv[3], NULL, 0);

	if (!mem || offset % 4 || offset >= (1 << 16))
		return 1;
	if (argc > 4)
		mem[offset / 4] = strcmp(argv[4], "magic") ? strtoul(argv[4], NULL, 0) :
							     ASN_REGMAP_MAGIC;
	printf("0x%08x\n", mem[offset / 4]);
	return 0;
}

#endif /* GUEST_BAR_H */
