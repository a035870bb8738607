/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QEMU guest test's netlink client for the family "asn": raw netlink (no
 * libnl, so that the program links statically with libc alone), one socket,
 * requests built attribute by attribute (bad ones too), answers and extended
 * ACKs read back. Included once, by asn_guest_test.c.
 */
#ifndef GUEST_NETLINK_H
#define GUEST_NETLINK_H

static int fd;
static uint16_t family;
static uint32_t events_group;
static uint32_t seq = 1;
static char last_msg[256];

struct req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char buf[8192];
};

static void put_attr(struct req *r, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void start(struct req *r, uint16_t type, uint8_t cmd, uint16_t flags)
{
	memset(r, 0, sizeof(*r));
	r->n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->n.nlmsg_type = type;
	r->n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	r->n.nlmsg_seq = seq++;
	r->g.cmd = cmd;
	r->g.version = ASN_GENL_VERSION;
}

static struct nlattr *find_attr(struct nlmsghdr *n, uint16_t type)
{
	int len = n->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(n) + GENL_HDRLEN);

	while (len >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		len -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return NULL;
}

/* Pulls the extended ACK message out of an error message. */
static void read_extack(struct nlmsghdr *n)
{
	struct nlmsgerr *e = NLMSG_DATA(n);
	size_t off = sizeof(*e);
	int len;
	struct nlattr *a;

	if (!(n->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(n->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	a = (struct nlattr *)((char *)e + NLMSG_ALIGN(off));
	len = (int)n->nlmsg_len - (int)NLMSG_HDRLEN - (int)NLMSG_ALIGN(off);
	while (len >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		if (a->nla_type == NLMSGERR_ATTR_MSG)
			snprintf(last_msg, sizeof(last_msg), "%s", (char *)a + NLA_HDRLEN);
		len -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
}

/*
 * Sends r (raw_len bytes if nonzero, to send truncated messages) and reads
 * the answers; each data message goes to cb. Returns 0 or the -errno of the ACK.
 */
static int transact(struct req *r, size_t raw_len,
		    void (*cb)(struct nlmsghdr *, void *), void *arg)
{
	static char buf[65536];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	size_t len = raw_len ? raw_len : r->n.nlmsg_len;

	last_msg[0] = 0;
	if (sendto(fd, r, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	for (;;) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *n;

		if (got < 0)
			return -errno;
		for (n = (struct nlmsghdr *)buf; NLMSG_OK(n, got); n = NLMSG_NEXT(n, got)) {
			if (n->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(n);

				read_extack(n);
				return e->error;
			}
			if (n->nlmsg_type == NLMSG_DONE)
				return 0;
			if (cb)
				cb(n, arg);
		}
	}
}

static void family_cb(struct nlmsghdr *n, void *arg)
{
	struct nlattr *a = find_attr(n, CTRL_ATTR_FAMILY_ID);
	struct nlattr *grps, *grp, *x;
	int len, glen;

	(void)arg;
	if (a)
		family = *(uint16_t *)((char *)a + NLA_HDRLEN);
	grps = find_attr(n, CTRL_ATTR_MCAST_GROUPS);
	if (!grps)
		return;
	/* nested: one nest per group holding NAME and ID */
	len = grps->nla_len - NLA_HDRLEN;
	grp = (struct nlattr *)((char *)grps + NLA_HDRLEN);
	while (len >= (int)NLA_HDRLEN && grp->nla_len >= NLA_HDRLEN && grp->nla_len <= len) {
		uint32_t id = 0;
		int is_events = 0;

		glen = grp->nla_len - NLA_HDRLEN;
		x = (struct nlattr *)((char *)grp + NLA_HDRLEN);
		while (glen >= (int)NLA_HDRLEN && x->nla_len >= NLA_HDRLEN && x->nla_len <= glen) {
			if (x->nla_type == CTRL_ATTR_MCAST_GRP_ID)
				id = *(uint32_t *)((char *)x + NLA_HDRLEN);
			if (x->nla_type == CTRL_ATTR_MCAST_GRP_NAME &&
			    !strcmp((char *)x + NLA_HDRLEN, ASN_GENL_MCGRP_EVENTS))
				is_events = 1;
			glen -= NLA_ALIGN(x->nla_len);
			x = (struct nlattr *)((char *)x + NLA_ALIGN(x->nla_len));
		}
		if (is_events)
			events_group = id;
		len -= NLA_ALIGN(grp->nla_len);
		grp = (struct nlattr *)((char *)grp + NLA_ALIGN(grp->nla_len));
	}
}

struct devinfo {
	int count;
	uint32_t index, kind, blocks, generation;
	uint64_t binding;
	uint32_t owner_pid;
	char pci[32];
};

static void dev_cb(struct nlmsghdr *n, void *arg)
{
	struct devinfo *d = arg;
	struct nlattr *a;

	d->count++;
	a = find_attr(n, ASN_ATTR_DEV_INDEX);
	if (a)
		d->index = *(uint32_t *)((char *)a + NLA_HDRLEN);
	a = find_attr(n, ASN_ATTR_BOARD_KIND);
	if (a)
		d->kind = *(uint32_t *)((char *)a + NLA_HDRLEN);
	a = find_attr(n, ASN_ATTR_BLOCK_COUNT);
	if (a)
		d->blocks = *(uint32_t *)((char *)a + NLA_HDRLEN);
	a = find_attr(n, ASN_ATTR_GENERATION);
	if (a)
		d->generation = *(uint32_t *)((char *)a + NLA_HDRLEN);
	a = find_attr(n, ASN_ATTR_PCI_ADDR);
	if (a)
		snprintf(d->pci, sizeof(d->pci), "%s", (char *)a + NLA_HDRLEN);
	a = find_attr(n, ASN_ATTR_BINDING);
	if (a)
		memcpy(&d->binding, (char *)a + NLA_HDRLEN, sizeof(d->binding));
	a = find_attr(n, ASN_ATTR_OWNER_PID);
	d->owner_pid = a ? *(uint32_t *)((char *)a + NLA_HDRLEN) : 0;
}

struct values {
	unsigned int n;
	uint32_t v[ASN_MAX_BATCH];
};

static void values_cb(struct nlmsghdr *n, void *arg)
{
	struct values *out = arg;
	struct nlattr *a = find_attr(n, ASN_ATTR_VALUES);

	if (!a)
		return;
	out->n = (a->nla_len - NLA_HDRLEN) / 4;
	memcpy(out->v, (char *)a + NLA_HDRLEN, out->n * 4);
}

static uint32_t dev_index;

static int reg_read(const uint32_t *offs, unsigned int n, struct values *out)
{
	struct req r;

	start(&r, family, ASN_CMD_REG_READ, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, n * 4);
	out->n = 0;
	return transact(&r, 0, values_cb, out);
}

static int reg_write(const uint32_t *offs, const uint32_t *vals, unsigned int n)
{
	struct req r;

	start(&r, family, ASN_CMD_REG_WRITE, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, n * 4);
	put_attr(&r, ASN_ATTR_VALUES, vals, n * 4);
	return transact(&r, 0, NULL, NULL);
}

static int table_write(const uint32_t *offs, const uint32_t *vals, unsigned int n,
		       uint32_t arm_off, uint32_t arm_val)
{
	struct req r;

	start(&r, family, ASN_CMD_TABLE_WRITE, 0);
	put_attr(&r, ASN_ATTR_DEV_INDEX, &dev_index, 4);
	put_attr(&r, ASN_ATTR_OFFSETS, offs, n * 4);
	put_attr(&r, ASN_ATTR_VALUES, vals, n * 4);
	put_attr(&r, ASN_ATTR_ARM_OFFSET, &arm_off, 4);
	put_attr(&r, ASN_ATTR_ARM_VALUE, &arm_val, 4);
	return transact(&r, 0, NULL, NULL);
}

static uint32_t read1(uint32_t off)
{
	struct values v;

	if (reg_read(&off, 1, &v) || v.n != 1)
		return 0xdeadbeef;
	return v.v[0];
}

static int write1(uint32_t off, uint32_t val)
{
	return reg_write(&off, &val, 1);
}

static void open_family(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct req r;
	int one = 1;

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("netlink socket");
		exit(2);
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	start(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	r.g.version = 1;
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, ASN_GENL_NAME, sizeof(ASN_GENL_NAME));
	transact(&r, 0, family_cb, NULL);
}

#endif /* GUEST_NETLINK_H */
