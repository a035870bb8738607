// SPDX-License-Identifier: GPL-2.0
/*
 * The guest half of the QEMU kernel test: drives the generic netlink family
 * "asn" with raw netlink (no libnl, so it links statically with nothing but
 * libc) and checks every answer, good and bad. Prints one "ok"/"FAIL" line per
 * check and "ASN-TEST PASS" or "ASN-TEST FAIL" last; exits 0 on pass.
 *
 * Usage: asn_guest_test check|reader|reader-rmmod|cue|peek|poke|as-nobody (main() says each)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "asn_genl.h"
#include "asn_regs.h"
#include "guest_bar.h"
#include "guest_netlink.h"

/* Layout of the netfpga-1g image (mkimage.py --layout). */
#define PORT0 0x1000u
#define ROUTE 0x40000u
#define TDM 0x80000u
#define LOCK 0x400000u

static int failures;

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (cond) {                                                 \
			printf("ok   ");                                    \
		} else {                                                    \
			printf("FAIL ");                                    \
			failures++;                                         \
		}                                                           \
		printf(__VA_ARGS__);                                        \
		printf("\n");                                               \
	} while (0)


/* Waits up to 3 s for an event of this kind on the events socket; 0 if none. */
static int wait_event(int efd, uint32_t want, uint32_t *block, uint32_t *gen)
{
	static char buf[8192];
	struct pollfd p = { .fd = efd, .events = POLLIN };

	while (poll(&p, 1, 3000) > 0) {
		ssize_t got = recv(efd, buf, sizeof(buf), 0);
		struct nlmsghdr *n;

		if (got <= 0)
			return 0;
		for (n = (struct nlmsghdr *)buf; NLMSG_OK(n, got); n = NLMSG_NEXT(n, got)) {
			struct nlattr *ev = find_attr(n, ASN_ATTR_EVENT);
			struct nlattr *bt = find_attr(n, ASN_ATTR_BLOCK_TYPE);
			struct nlattr *g = find_attr(n, ASN_ATTR_GENERATION);

			if (!ev || *(uint32_t *)((char *)ev + NLA_HDRLEN) != want)
				continue;
			*block = bt ? *(uint32_t *)((char *)bt + NLA_HDRLEN) : 0;
			*gen = g ? *(uint32_t *)((char *)g + NLA_HDRLEN) : 0;
			return 1;
		}
	}
	return 0;
}

/* Events: irq_status causes written by the test, and a board reset faked through BAR 2. */
static void check_events(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	uint32_t block = 0, gen = 0;
	int efd, i, asked = 0;

	CHECK(events_group != 0, "multicast group \"events\" resolved (id %u)", events_group);
	efd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (efd < 0 || bind(efd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(efd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &events_group,
		       sizeof(events_group))) {
		CHECK(0, "join the events group: %s", strerror(errno));
		return;
	}
	CHECK(write1(ASN_ID_IRQ_STATUS, ASN_ID_IRQ_STATUS_TDM_SWAP_MASK |
		     ASN_ID_IRQ_STATUS_LOCK_COMPLETION_MASK) == 0, "raise tdm_swap and lock_completion");
	CHECK(wait_event(efd, ASN_EVENT_BANK_SWAPPED, &block, &gen) && block == ASN_TDM_TYPE,
	      "event: bank swapped in block 0x%x", block);
	CHECK(wait_event(efd, ASN_EVENT_COMPLETIONS, &block, &gen) && block == ASN_LOCK_TYPE,
	      "event: completions available in block 0x%x", block);

	/*
	 * A board reset: the driver holds BAR 2 of the good board (sysfs mmap is
	 * refused), so ask the host, through an unbound ivshmem board's memory
	 * (qemu_test.sh watches bad-magic.img), to write id.generation = 2.
	 */
	for (i = 0; i < 32; i++) {
		volatile uint32_t *mem = map_idle_ivshmem(i);

		if (!mem)
			continue;
		mem[0x100 / 4] = 0xcafe0001;	/* the host's cue */
		munmap((void *)mem, 4096);
		asked++;
	}
	CHECK(asked > 0, "asked the host for a board reset through %d unbound board(s)", asked);
	CHECK(wait_event(efd, ASN_EVENT_GENERATION_CHANGED, &block, &gen) && gen == 2,
	      "event: generation changed to %u", gen);
	close(efd);
}

static void expect_refused(int err, int want, const char *msg_part, const char *what)
{
	CHECK(err == -want && strstr(last_msg, msg_part), "%s: %s (\"%s\")", what,
	      strerror(-err), last_msg);
}

/* ASN_CMD_BOARD_OWN on the global socket with `node_fd`; 0 or -errno. */
static int own_board(const char *pci, int node_fd)
{
	uint32_t nfd = node_fd;
	struct req r;

	start(&r, family, ASN_CMD_BOARD_OWN, 0);
	put_attr(&r, ASN_ATTR_PCI_ADDR, pci, strlen(pci) + 1);
	if (node_fd >= 0)
		put_attr(&r, ASN_ATTR_DEV_FD, &nfd, 4);
	return transact(&r, 0, NULL, NULL);
}

/*
 * Who may write, and read clients' data: only the board's owner, the socket that
 * showed an fd of /dev/asn/BDF opened for writing; never root's capability alone.
 * Leaves this process's socket the owner, for the write checks that follow.
 */
static void check_owner(struct devinfo *d)
{
	uint32_t off = ASN_ID_SCRATCH, val = 0x5ca1ab1e, lock_ring = LOCK + ASN_LOCK_REQUEST;
	char node[64];
	struct devinfo again = { 0 };
	struct req r;
	int ro, rw, other, err, pid;

	start(&r, family, ASN_CMD_REG_WRITE, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, &off, 4);
	put_attr(&r, ASN_ATTR_VALUES, &val, 4);
	expect_refused(transact(&r, 0, NULL, NULL), EPERM, "owner",
		       "write by root (CAP_NET_ADMIN) without owning the board");
	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, &lock_ring, 4);
	expect_refused(transact(&r, 0, NULL, NULL), EPERM, "clients' data",
		       "read of the lock request ring without owning the board");
	off = ASN_ID_CAP_COUNT + 4;	/* between id.cap_count and id.scratch */
	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, &off, 4);
	expect_refused(transact(&r, 0, NULL, NULL), EINVAL, "hole", "read of a hole in the id block");

	snprintf(node, sizeof(node), "/dev/asn/%s", d->pci);
	ro = open(node, O_RDONLY);
	rw = open(node, O_RDWR);
	other = open("/dev/null", O_RDWR);
	CHECK(ro >= 0 && rw >= 0, "%s opens read-only and for writing", node);
	expect_refused(own_board(d->pci, -1), EINVAL, "DEV_FD", "BOARD_OWN without DEV_FD");
	expect_refused(own_board(d->pci, ro), EPERM, "DEV_FD", "BOARD_OWN with the node read-only");
	expect_refused(own_board(d->pci, other), EPERM, "DEV_FD", "BOARD_OWN with /dev/null");
	expect_refused(own_board(d->pci, 999), EPERM, "DEV_FD", "BOARD_OWN with no such fd");
	err = own_board(d->pci, rw);
	CHECK(err == 0, "BOARD_OWN with the node open for writing (%s, \"%s\")", strerror(-err),
	      last_msg);
	close(ro);
	close(rw);
	close(other);
	start(&r, family, ASN_CMD_DEV_GET, NLM_F_DUMP);
	transact(&r, 0, dev_cb, &again);
	CHECK(again.owner_pid == (uint32_t)getpid(), "DEV_GET names the owner: pid %u",
	      again.owner_pid);
	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, &lock_ring, 4);
	err = transact(&r, 0, NULL, NULL);
	CHECK(err == 0, "the owner reads the lock request ring (%s)", strerror(-err));
	/* A client's data for the devlink region to leave out (guest_init.sh). */
	val = 0xfeedc0de;
	start(&r, family, ASN_CMD_REG_WRITE, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, &lock_ring, 4);
	put_attr(&r, ASN_ATTR_VALUES, &val, 4);
	err = transact(&r, 0, NULL, NULL);
	CHECK(err == 0, "the owner writes the lock request ring (%s, \"%s\")", strerror(-err),
	      last_msg);

	/* A second process may not take the board while this socket owns it. */
	pid = fork();
	if (pid == 0) {
		open_family();
		rw = open(node, O_RDWR);
		err = own_board(d->pci, rw);
		printf("%s second owner refused while the first holds the board: %s (\"%s\")\n",
		       err == -EBUSY && strstr(last_msg, "another owner") ? "ok  " : "FAIL",
		       strerror(-err), last_msg);
		_exit(err == -EBUSY ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &err, 0) == pid && WIFEXITED(err) && WEXITSTATUS(err) == 0,
	      "second owner: child done");
}

static int run_checks(void)
{
	uint32_t offs[ASN_MAX_BATCH + 1], vals[ASN_MAX_BATCH + 1];
	struct devinfo d = { 0 };
	struct values v;
	struct req r;
	unsigned int i;
	int err;

	open_family();
	CHECK(family != 0, "family \"asn\" resolved (id %u)", family);
	if (!family)
		return 1;

	start(&r, family, ASN_CMD_DEV_GET, NLM_F_DUMP);
	err = transact(&r, 0, dev_cb, &d);
	CHECK(err == 0 && d.count == 1, "dump lists one device (got %d, err %d)", d.count, err);
	CHECK(d.kind == ASN_BOARD_KIND_NETFPGA_1G && d.blocks == 11 && d.generation == 1,
	      "device asn%u at %s: kind %u, %u blocks, generation %u", d.index, d.pci,
	      d.kind, d.blocks, d.generation);
	dev_index = d.index;
	check_owner(&d);

	/* Reads: single and batched. */
	CHECK(read1(ASN_ID_MAGIC) == ASN_REGMAP_MAGIC, "read id.magic");
	offs[0] = ASN_ID_REGMAP_VERSION;
	offs[1] = ASN_ID_CAP_PORTS;
	offs[2] = PORT0 + 0x100 * 5 + 0x10; /* port 5 speed_mbps */
	offs[3] = LOCK;
	err = reg_read(offs, 4, &v);
	CHECK(err == 0 && v.n == 4 &&
	      v.v[0] == (ASN_REGMAP_VERSION_MAJOR << 16 | ASN_REGMAP_VERSION_MINOR) &&
	      v.v[1] == 6 &&
	      v.v[2] == 2000 && v.v[3] == ASN_LOCK_TYPE,
	      "batched read of 4 (err %d: 0x%x %u %u 0x%x)", err, v.v[0], v.v[1], v.v[2], v.v[3]);

	/* Writes: single, then a batch of 64 (the TDM shadow slot table). */
	CHECK(write1(ASN_ID_SCRATCH, 0x5ca1ab1e) == 0 && read1(ASN_ID_SCRATCH) == 0x5ca1ab1e,
	      "write + read back id.scratch");
	for (i = 0; i < 64; i++) {
		offs[i] = TDM + ASN_TDM_SLOT_TABLE + 4 * i;
		vals[i] = 0xa5000000u | i;
	}
	CHECK(reg_write(offs, vals, 64) == 0, "batched write of 64");
	err = reg_read(offs, 64, &v);
	CHECK(err == 0 && v.n == 64 && !memcmp(v.v, vals, 64 * 4), "batched read back of 64");
	for (i = 0; i < ASN_MAX_BATCH; i++)
		offs[i] = ASN_ID_SCRATCH;
	CHECK(reg_read(offs, ASN_MAX_BATCH, &v) == 0 && v.n == ASN_MAX_BATCH,
	      "batch of ASN_MAX_BATCH (%d) reads", ASN_MAX_BATCH);

	/* Bad requests: each refused with a message, nothing written. */
	offs[0] = PORT0 + 0x1c;		/* port 0 aldfb_threshold: RW */
	vals[0] = 0x1111;
	offs[1] = ASN_ID_SCRATCH + 2;
	vals[1] = 0;
	expect_refused(reg_write(offs, vals, 2), EINVAL, "aligned", "unaligned write");
	offs[1] = 0x200000;		/* between stripe and lock: no block */
	expect_refused(reg_write(offs, vals, 2), EINVAL, "outside", "write outside every block");
	expect_refused(reg_read(&offs[1], 1, &v), EINVAL, "outside", "read outside every block");
	offs[1] = 0x01000000;		/* past the BAR */
	expect_refused(reg_read(&offs[1], 1, &v), EINVAL, "outside", "read past the BAR");
	offs[1] = ASN_ID_MAGIC;
	expect_refused(reg_write(offs, vals, 2), EINVAL, "read-only", "write to id.magic (RO)");
	offs[1] = TDM + ASN_TDM_SLOT_TABLE_ACTIVE;
	expect_refused(reg_write(offs, vals, 2), EINVAL, "read-only",
		       "write to the active TDM bank");
	CHECK(read1(PORT0 + 0x1c) == 0, "refused batches wrote nothing (port0 threshold %u)",
	      read1(PORT0 + 0x1c));
	for (i = 0; i <= ASN_MAX_BATCH; i++)
		offs[i] = ASN_ID_SCRATCH;
	expect_refused(reg_read(offs, ASN_MAX_BATCH + 1, &v), ERANGE, "size out of range",
		       "oversize batch (257 reads)");

	start(&r, family, ASN_CMD_REG_WRITE, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	offs[0] = ASN_ID_SCRATCH;
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 8);
	put_attr(&r, ASN_ATTR_VALUES, vals, 4);
	expect_refused(transact(&r, 0, NULL, NULL), EINVAL, "VALUES", "values shorter than offsets");

	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 6);
	expect_refused(transact(&r, 0, NULL, NULL), EINVAL, "", "offsets of 6 bytes");

	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 4);
	expect_refused(transact(&r, 0, NULL, NULL), EINVAL, "DEV_INDEX", "no DEV_INDEX");

	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	expect_refused(transact(&r, 0, NULL, NULL), EINVAL, "OFFSETS: required", "no OFFSETS");

	start(&r, family, ASN_CMD_REG_READ, 0);
	i = 77;
	put_attr(&r, ASN_ATTR_DEV_INDEX, &i, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 4);
	expect_refused(transact(&r, 0, NULL, NULL), ENODEV, "no such", "unknown device 77");

	/* By PCI address, as asnd names a board, with the binding the dump gave. */
	CHECK(d.binding != 0, "dump gives the board's binding");
	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_PCI_ADDR, d.pci, strlen(d.pci) + 1);
	put_attr(&r, ASN_ATTR_BINDING, &d.binding, 8);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 4);
	err = transact(&r, 0, NULL, NULL);
	CHECK(err == 0, "read by PCI address and binding (%s)", strerror(-err));
	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_PCI_ADDR, "0000:00:1f.7", 13);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 4);
	expect_refused(transact(&r, 0, NULL, NULL), ENODEV, "PCI_ADDR", "no board at the address");
	start(&r, family, ASN_CMD_REG_READ, 0);
	i = d.index + 77;
	put_attr(&r, ASN_ATTR_PCI_ADDR, d.pci, strlen(d.pci) + 1);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &i, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 4);
	expect_refused(transact(&r, 0, NULL, NULL), ENODEV, "another board",
		       "index and address naming two boards");
	{
		uint64_t stale = d.binding + 1;

		start(&r, family, ASN_CMD_REG_WRITE, 0);
		put_attr(&r, ASN_ATTR_PCI_ADDR, d.pci, strlen(d.pci) + 1);
		put_attr(&r, ASN_ATTR_BINDING, &stale, 8);
		put_attr(&r, ASN_ATTR_OFFSETS, offs, 4);
		put_attr(&r, ASN_ATTR_VALUES, offs, 4);
		expect_refused(transact(&r, 0, NULL, NULL), ESTALE, "BINDING",
			       "write with the binding of an earlier probe");
	}

	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 2);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 4);
	expect_refused(transact(&r, 0, NULL, NULL), EINVAL, "", "DEV_INDEX of 2 bytes");

	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 4);
	put_attr(&r, ASN_ATTR_BOARD_KIND, &dev_index, 4);
	expect_refused(transact(&r, 0, NULL, NULL), EINVAL, "", "reply-only attribute sent");

	/* Truncated: the attribute claims more bytes than the message holds. */
	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 16);
	r.n.nlmsg_len -= 8;
	err = transact(&r, 0, NULL, NULL);
	CHECK(err == -EINVAL || err == -ERANGE, "truncated attribute refused (%s, \"%s\")",
	      strerror(-err), last_msg);

	start(&r, family, ASN_CMD_REG_READ, 0);
	r.g.reserved = 1;
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 4);
	err = transact(&r, 0, NULL, NULL);
	CHECK(err == -EINVAL, "nonzero reserved header byte refused (%s, \"%s\")",
	      strerror(-err), last_msg);

	start(&r, family, 42, 0);
	err = transact(&r, 0, NULL, NULL);
	CHECK(err == -EOPNOTSUPP, "unknown command 42 refused (%s)", strerror(-err));

	/* Unprivileged write: a child without root. */
	{
		pid_t pid = fork();
		int status = 0;

		if (pid == 0) {
			close(fd);
			if (setgid(65534) || setuid(65534))
				_exit(3);
			open_family();
			err = write1(ASN_ID_SCRATCH, 1);
			_exit(err == -EPERM ? 0 : 4);
		}
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "unprivileged write refused with EPERM (child status %d)", status);
	}
	CHECK(read1(ASN_ID_SCRATCH) == 0x5ca1ab1e, "scratch unchanged after refused writes");

	/* Table write + arm: TDM shadow slot words 64..67, then tdm.control.arm. */
	for (i = 0; i < 4; i++) {
		offs[i] = TDM + ASN_TDM_SLOT_TABLE + 0x100 + 4 * i;
		vals[i] = 0xb0000000u | i;
	}
	expect_refused(table_write(offs, vals, 4, ROUTE + ASN_ROUTE_CONTROL, 1), EINVAL,
		       "outside the armed block", "table write armed in another block");
	expect_refused(table_write(offs, vals, 4, TDM + ASN_TDM_STATUS, 1), EINVAL,
		       "ARM_OFFSET", "table write armed by tdm.status");
	expect_refused(table_write(offs, vals, 4, ASN_ID_SCRATCH, 1), EINVAL,
		       "ARM_OFFSET", "table write armed by id.scratch");
	expect_refused(table_write(offs, vals, 4, TDM + ASN_TDM_CONTROL, 2), EINVAL,
		       "ARM_VALUE", "table write with arm value 2 (disarm)");
	CHECK(read1(offs[0]) == 0 && read1(TDM + ASN_TDM_CONTROL) == 0,
	      "refused table writes wrote nothing");
	start(&r, family, ASN_CMD_TABLE_WRITE, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, 4);
	put_attr(&r, ASN_ATTR_VALUES, vals, 4);
	expect_refused(transact(&r, 0, NULL, NULL), EINVAL, "ARM_OFFSET and",
		       "table write without ARM_*");
	CHECK(table_write(offs, vals, 4, TDM + ASN_TDM_CONTROL, 1) == 0,
	      "table write of 4 + arm");
	CHECK(read1(offs[3]) == 0xb0000003 && read1(TDM + ASN_TDM_CONTROL) == 1,
	      "table words and the arm bit reached the board");

	check_events();

	/* Final values the host checks in the memory file. */
	CHECK(write1(PORT0 + 0x100 * 3 + 0x1c, 0x00000042) == 0, "write port 3 aldfb_threshold");
	CHECK(write1(ROUTE + ASN_ROUTE_DEST_TABLE + 16 * 7 + 4, 0x04030201) == 0,
	      "write route dest_table[7] shadow word 1");

	printf("ASN-TEST %s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}

/* Reads in a loop until the device goes away; the test unbinds it meanwhile. */
static int run_reader(int gone_family)
{
	uint32_t offs[ASN_MAX_BATCH];
	struct values v;
	unsigned long n = 0;
	int err, i, ok;

	struct devinfo d = { 0 };
	struct req r;

	open_family();
	start(&r, family, ASN_CMD_DEV_GET, NLM_F_DUMP);
	transact(&r, 0, dev_cb, &d);
	dev_index = d.index;
	for (i = 0; i < ASN_MAX_BATCH; i++)
		offs[i] = ASN_ID_SCRATCH;
	while ((err = reg_read(offs, ASN_MAX_BATCH, &v)) == 0)
		n++;
	/* Unbind: the device is gone. rmmod: the device or the whole family is. */
	ok = err == -ENODEV || (gone_family && (err == -ENOENT || err == -EOPNOTSUPP));
	printf("%s reader: %lu batches before %s (\"%s\")\n",
	       ok ? "ok  " : "FAIL", n, strerror(-err), last_msg);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "check"))
		return run_checks();
	if (argc > 1 && !strcmp(argv[1], "reader"))
		return run_reader(0);
	if (argc > 1 && !strcmp(argv[1], "reader-rmmod"))
		return run_reader(1);
	/* "as-nobody PROG ARGS": PROG as uid/gid 65534, without any capability */
	if (argc > 2 && !strcmp(argv[1], "as-nobody")) {
		if (setgid(65534) || setuid(65534)) {
			perror("as-nobody");
			return 2;
		}
		execv(argv[2], argv + 2);
		perror(argv[2]);
		return 2;
	}
	if (argc > 3 && !strcmp(argv[1], "cue"))
		return run_cue(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "peek"))
		return run_peek_poke(argc, argv);
	if (argc == 5 && !strcmp(argv[1], "poke"))
		return run_peek_poke(argc, argv);
	fprintf(stderr, "usage: asn_guest_test check|reader|reader-rmmod|cue VALUE ACK|as-nobody PROG ARGS|"
		"peek BDF OFFSET|poke BDF OFFSET VALUE\n");
	return 2;
}
