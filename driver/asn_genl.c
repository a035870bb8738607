// SPDX-License-Identifier: GPL-2.0
/*
 * asn.ko's generic netlink family "asn": batched register and table access,
 * checked whole against the register map before the first access; the board's
 * owner (ASN_CMD_BOARD_OWN); the events group.
 */
#include <linux/file.h>
#include <linux/kernel.h>
#include <linux/netlink.h>

#include "asn.h"

static struct genl_family asn_genl_family;

void asn_notify(struct asn_dev *adev, u32 event, u32 block_type, u32 generation)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &asn_genl_family, 0, ASN_CMD_EVENT);
	if (!hdr ||
	    nla_put_u32(msg, ASN_ATTR_DEV_INDEX, adev->index) ||
	    nla_put_string(msg, ASN_ATTR_PCI_ADDR, pci_name(adev->pdev)) ||
	    nla_put_u32(msg, ASN_ATTR_EVENT, event) ||
	    nla_put_u32(msg, ASN_ATTR_BLOCK_TYPE, block_type) ||
	    nla_put_u32(msg, ASN_ATTR_GENERATION, generation)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	/* -ESRCH: nobody listens, which is fine. */
	genlmsg_multicast(&asn_genl_family, msg, 0, 0, GFP_KERNEL);
}

/* Whether the request comes from the owner's socket; adev->lock held. */
static bool asn_owner_sent(const struct asn_dev *adev, const struct sk_buff *skb,
			   struct genl_info *info)
{
	return adev->owner_sk && adev->owner_sk == NETLINK_CB(skb).sk &&
	       adev->owner_portid == info->snd_portid &&
	       net_eq(adev->owner_net, genl_info_net(info));
}

static bool asn_is_owner(struct asn_dev *adev, const struct sk_buff *skb,
			 struct genl_info *info)
{
	bool owner;

	mutex_lock(&adev->lock);
	owner = asn_owner_sent(adev, skb, info);
	mutex_unlock(&adev->lock);
	return owner;
}

/* The owner's socket closed: the board has no owner any more. */
static int asn_netlink_notify(struct notifier_block *nb, unsigned long state, void *ptr)
{
	struct netlink_notify *n = ptr;
	struct asn_dev *adev;

	if (state != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC)
		return NOTIFY_DONE;
	mutex_lock(&asn_devs_lock);
	list_for_each_entry(adev, &asn_devs, node) {
		mutex_lock(&adev->lock);
		if (adev->owner_portid == n->portid && net_eq(adev->owner_net, n->net)) {
			adev->owner_portid = 0;
			adev->owner_net = NULL;
			adev->owner_sk = NULL;
			adev->owner_pid = 0;
		}
		mutex_unlock(&adev->lock);
	}
	mutex_unlock(&asn_devs_lock);
	return NOTIFY_DONE;
}

static struct notifier_block asn_netlink_notifier = {
	.notifier_call = asn_netlink_notify,
};

static const struct nla_policy asn_policy[ASN_ATTR_MAX + 1] = {
	[ASN_ATTR_DEV_INDEX] = { .type = NLA_U32 },
	[ASN_ATTR_DEV_NAME] = { .type = NLA_REJECT },
	/* pci_name(): "dddd:bb:dd.f", at most 12 characters in practice */
	[ASN_ATTR_PCI_ADDR] = { .type = NLA_NUL_STRING, .len = 31 },
	[ASN_ATTR_BOARD_KIND] = { .type = NLA_REJECT },
	[ASN_ATTR_GENERATION] = { .type = NLA_REJECT },
	[ASN_ATTR_REG_BYTES] = { .type = NLA_REJECT },
	[ASN_ATTR_BLOCK_COUNT] = { .type = NLA_REJECT },
	[ASN_ATTR_OFFSETS] = NLA_POLICY_RANGE(NLA_BINARY, sizeof(u32),
					       ASN_MAX_BATCH * sizeof(u32)),
	[ASN_ATTR_VALUES] = NLA_POLICY_RANGE(NLA_BINARY, sizeof(u32),
					      ASN_MAX_BATCH * sizeof(u32)),
	[ASN_ATTR_ARM_OFFSET] = { .type = NLA_U32 },
	[ASN_ATTR_ARM_VALUE] = { .type = NLA_U32 },
	[ASN_ATTR_EVENT] = { .type = NLA_REJECT },
	[ASN_ATTR_BLOCK_TYPE] = { .type = NLA_REJECT },
	[ASN_ATTR_SERIAL] = { .type = NLA_REJECT },
	[ASN_ATTR_PAD] = { .type = NLA_REJECT },
	[ASN_ATTR_BINDING] = { .type = NLA_U64 },
	[ASN_ATTR_DEV_FD] = { .type = NLA_U32 },
	[ASN_ATTR_OWNER_PID] = { .type = NLA_REJECT },
};

static const struct genl_multicast_group asn_mcgrps[] = {
	{ .name = ASN_GENL_MCGRP_EVENTS },
};

/*
 * Finds the device a request names and takes a reference; ERR_PTR with an
 * extack message if none. PCI_ADDR is the lasting name (asnd uses it): an
 * index is handed out lowest-free, so after boards are re-bound in another
 * order an index names another board, and a request by index alone would
 * reach it. With both, they must name the same board.
 */
static struct asn_dev *asn_get_dev(struct genl_info *info)
{
	struct nlattr *by_pci = info->attrs[ASN_ATTR_PCI_ADDR];
	struct nlattr *by_index = info->attrs[ASN_ATTR_DEV_INDEX];
	struct nlattr *binding = info->attrs[ASN_ATTR_BINDING];
	struct asn_dev *adev;

	if (!by_pci && !by_index) {
		NL_SET_ERR_MSG(info->extack, "ASN_ATTR_PCI_ADDR or ASN_ATTR_DEV_INDEX: required");
		return ERR_PTR(-EINVAL);
	}
	mutex_lock(&asn_devs_lock);
	list_for_each_entry(adev, &asn_devs, node) {
		if (by_pci && nla_strcmp(by_pci, pci_name(adev->pdev)))
			continue;
		if (by_index && nla_get_u32(by_index) != adev->index) {
			if (!by_pci)
				continue;
			mutex_unlock(&asn_devs_lock);
			NL_SET_ERR_MSG_ATTR(info->extack, by_index,
					    "ASN_ATTR_DEV_INDEX: names another board than ASN_ATTR_PCI_ADDR");
			return ERR_PTR(-ENODEV);
		}
		if (binding && nla_get_u64(binding) != adev->binding) {
			mutex_unlock(&asn_devs_lock);
			NL_SET_ERR_MSG_ATTR(info->extack, binding,
					    "ASN_ATTR_BINDING: the board was bound again since: look it up again");
			return ERR_PTR(-ESTALE);
		}
		kref_get(&adev->ref);
		mutex_unlock(&asn_devs_lock);
		return adev;
	}
	mutex_unlock(&asn_devs_lock);
	if (by_pci)
		NL_SET_ERR_MSG_ATTR(info->extack, by_pci,
				    "ASN_ATTR_PCI_ADDR: no asn board at this address");
	else
		NL_SET_ERR_MSG_ATTR(info->extack, by_index,
				    "ASN_ATTR_DEV_INDEX: no such asn device");
	return ERR_PTR(-ENODEV);
}

static const struct asn_block *asn_find_block(const struct asn_dev *adev, u32 offset)
{
	unsigned int lo = 0, hi = adev->nblocks;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (adev->blocks[mid].offset <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (offset - adev->blocks[lo - 1].offset >= adev->blocks[lo - 1].desc->size)
		return NULL;
	return &adev->blocks[lo - 1];
}

/*
 * Checks one offset against the register map; returns the reason or NULL, and in
 * *err the errno: EINVAL for a bad offset, EPERM for clients' data read by a caller
 * that does not own the board.
 */
static const char *asn_check_offset(const struct asn_dev *adev, u32 offset, bool write,
				    bool owner, int *err)
{
	const struct asn_block *blk;
	const struct asn_block_desc *d;
	u32 rel;

	*err = -EINVAL;
	if (offset % 4)
		return "ASN_ATTR_OFFSETS: offset not 4-byte aligned";
	blk = asn_find_block(adev, offset);
	if (!blk)
		return "ASN_ATTR_OFFSETS: offset outside every register block";
	d = blk->desc;
	rel = offset - blk->offset;
	/* A hole: on a board, a bus error (a bad PCIe completion) rather than a value. */
	if (!asn_in_ranges(d->map, d->map_count, rel))
		return "ASN_ATTR_OFFSETS: offset in a hole between registers";
	if (write && asn_in_ranges(d->ro, d->ro_count, rel))
		return "ASN_ATTR_OFFSETS: offset in a read-only register";
	if (!write && !owner && asn_in_ranges(d->sens, d->sens_count, rel)) {
		*err = -EPERM;
		return "ASN_ATTR_OFFSETS: clients' data (lock rings and data): the owner's only";
	}
	return NULL;
}

/* Checks the whole batch before any access; 0 or the errno with extack. */
static int asn_check_batch(const struct asn_dev *adev, struct genl_info *info,
			   const u32 *offsets, unsigned int n, bool write, bool owner)
{
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		const char *why = asn_check_offset(adev, offsets[i], write, owner, &err);

		if (why) {
			/*
			 * What NL_SET_ERR_MSG_ATTR() does, tracepoint included; it
			 * takes only a literal, and why is one of several (static
			 * storage, as _msg needs).
			 */
			do_trace_netlink_extack(why);
			if (info->extack) {
				info->extack->_msg = why;
				info->extack->bad_attr = info->attrs[ASN_ATTR_OFFSETS];
			}
			dev_dbg(&adev->pdev->dev, "refused batch: op %u offset 0x%x: %s\n",
				i, offsets[i], why);
			return err;
		}
	}
	return 0;
}

static int asn_nl_reg_read(struct sk_buff *skb, struct genl_info *info)
{
	struct asn_dev *adev;
	struct sk_buff *msg;
	struct nlattr *nla;
	const u32 *offsets;
	unsigned int n, i;
	u32 *values;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ASN_ATTR_OFFSETS)) {
		NL_SET_ERR_MSG(info->extack, "ASN_ATTR_OFFSETS: required");
		return -EINVAL;
	}
	if (nla_len(info->attrs[ASN_ATTR_OFFSETS]) % sizeof(u32)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ASN_ATTR_OFFSETS],
				    "ASN_ATTR_OFFSETS: length not a multiple of 4");
		return -EINVAL;
	}
	adev = asn_get_dev(info);
	if (IS_ERR(adev))
		return PTR_ERR(adev);
	offsets = nla_data(info->attrs[ASN_ATTR_OFFSETS]);
	n = nla_len(info->attrs[ASN_ATTR_OFFSETS]) / sizeof(u32);

	err = asn_check_batch(adev, info, offsets, n, false, asn_is_owner(adev, skb, info));
	if (err)
		goto out_put;

	err = -ENOMEM;
	msg = genlmsg_new(nla_total_size(n * sizeof(u32)), GFP_KERNEL);
	if (!msg)
		goto out_put;
	hdr = genlmsg_put_reply(msg, info, &asn_genl_family, 0, ASN_CMD_REG_READ);
	if (!hdr)
		goto out_free;
	nla = nla_reserve(msg, ASN_ATTR_VALUES, n * sizeof(u32));
	if (!nla)
		goto out_free;
	values = nla_data(nla);

	mutex_lock(&adev->lock);
	if (!adev->regs) {
		mutex_unlock(&adev->lock);
		NL_SET_ERR_MSG(info->extack, "asn device was removed");
		err = -ENODEV;
		goto out_free;
	}
	for (i = 0; i < n; i++)
		values[i] = ioread32(adev->regs + offsets[i]);
	mutex_unlock(&adev->lock);

	genlmsg_end(msg, hdr);
	kref_put(&adev->ref, asn_dev_release);
	return genlmsg_reply(msg, info);

out_free:
	nlmsg_free(msg);
out_put:
	kref_put(&adev->ref, asn_dev_release);
	return err;
}

/* Checks the shape of a write batch: OFFSETS and VALUES present, one value each. */
static int asn_write_attrs(struct genl_info *info, unsigned int *n)
{
	if (GENL_REQ_ATTR_CHECK(info, ASN_ATTR_OFFSETS) ||
	    GENL_REQ_ATTR_CHECK(info, ASN_ATTR_VALUES)) {
		NL_SET_ERR_MSG(info->extack, "ASN_ATTR_OFFSETS and ASN_ATTR_VALUES: required");
		return -EINVAL;
	}
	if (nla_len(info->attrs[ASN_ATTR_OFFSETS]) % sizeof(u32)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ASN_ATTR_OFFSETS],
				    "ASN_ATTR_OFFSETS: length not a multiple of 4");
		return -EINVAL;
	}
	if (nla_len(info->attrs[ASN_ATTR_VALUES]) !=
	    nla_len(info->attrs[ASN_ATTR_OFFSETS])) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ASN_ATTR_VALUES],
				    "ASN_ATTR_VALUES: not one value per offset");
		return -EINVAL;
	}
	*n = nla_len(info->attrs[ASN_ATTR_OFFSETS]) / sizeof(u32);
	return 0;
}

/*
 * Checks a table write's arm register and that the batch stays in its block;
 * returns the block or NULL with an extack message.
 */
static const struct asn_block *asn_check_arm(const struct asn_dev *adev,
					     struct genl_info *info,
					     const u32 *offsets, unsigned int n)
{
	u32 arm = nla_get_u32(info->attrs[ASN_ATTR_ARM_OFFSET]);
	u32 value = nla_get_u32(info->attrs[ASN_ATTR_ARM_VALUE]);
	const struct asn_block *blk = asn_find_block(adev, arm);
	unsigned int i;

	if (!blk || !blk->desc->swap_mask ||
	    arm - blk->offset != blk->desc->swap_offset) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ASN_ATTR_ARM_OFFSET],
				    "ASN_ATTR_ARM_OFFSET: not the swap/arm register of a banked block");
		return NULL;
	}
	if (value != blk->desc->swap_mask) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ASN_ATTR_ARM_VALUE],
				    "ASN_ATTR_ARM_VALUE: must set exactly the swap/arm field");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (offsets[i] < blk->offset ||
		    offsets[i] - blk->offset >= blk->desc->size) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ASN_ATTR_OFFSETS],
					    "ASN_ATTR_OFFSETS: table write outside the armed block");
			return NULL;
		}
	}
	return blk;
}

static int asn_do_write(struct sk_buff *skb, struct genl_info *info, bool arm)
{
	const struct asn_block *blk = NULL;
	const u32 *offsets, *values;
	struct asn_dev *adev;
	unsigned int n, i;
	int err;

	err = asn_write_attrs(info, &n);
	if (err)
		return err;
	if (arm && (GENL_REQ_ATTR_CHECK(info, ASN_ATTR_ARM_OFFSET) ||
		    GENL_REQ_ATTR_CHECK(info, ASN_ATTR_ARM_VALUE))) {
		NL_SET_ERR_MSG(info->extack,
			       "ASN_ATTR_ARM_OFFSET and ASN_ATTR_ARM_VALUE: required");
		return -EINVAL;
	}
	adev = asn_get_dev(info);
	if (IS_ERR(adev))
		return PTR_ERR(adev);
	offsets = nla_data(info->attrs[ASN_ATTR_OFFSETS]);
	values = nla_data(info->attrs[ASN_ATTR_VALUES]);

	if (!asn_is_owner(adev, skb, info)) {
		NL_SET_ERR_MSG(info->extack,
			       "writes come only from the board's owner: open /dev/asn/BDF for writing and send ASN_CMD_BOARD_OWN");
		err = -EPERM;
		goto out_put;
	}
	err = asn_check_batch(adev, info, offsets, n, true, true);
	if (err)
		goto out_put;
	if (arm) {
		blk = asn_check_arm(adev, info, offsets, n);
		if (!blk) {
			err = -EINVAL;
			goto out_put;
		}
	}

	mutex_lock(&adev->lock);
	if (!adev->regs) {
		NL_SET_ERR_MSG(info->extack, "asn device was removed");
		err = -ENODEV;
	} else {
		for (i = 0; i < n; i++)
			iowrite32(values[i], adev->regs + offsets[i]);
		if (blk)
			iowrite32(blk->desc->swap_mask,
				  adev->regs + blk->offset + blk->desc->swap_offset);
	}
	mutex_unlock(&adev->lock);

out_put:
	kref_put(&adev->ref, asn_dev_release);
	return err;
}

static int asn_nl_reg_write(struct sk_buff *skb, struct genl_info *info)
{
	return asn_do_write(skb, info, false);
}

static int asn_nl_table_write(struct sk_buff *skb, struct genl_info *info)
{
	return asn_do_write(skb, info, true);
}

static int asn_nl_board_own(struct sk_buff *skb, struct genl_info *info)
{
	struct asn_dev *adev;
	struct fd f = { };
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, ASN_ATTR_DEV_FD)) {
		NL_SET_ERR_MSG(info->extack,
			       "ASN_ATTR_DEV_FD: required (the board's node opened for writing)");
		return -EINVAL;
	}
	adev = asn_get_dev(info);
	if (IS_ERR(adev))
		return PTR_ERR(adev);
	/* genetlink runs doit in the sender's context: the fd is the sender's. */
	f = fdget(nla_get_u32(info->attrs[ASN_ATTR_DEV_FD]));
	if (!f.file || f.file->f_op != &asn_node_fops ||
	    f.file->private_data != &adev->misc || !(f.file->f_mode & FMODE_WRITE)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ASN_ATTR_DEV_FD],
				    "ASN_ATTR_DEV_FD: not this board's node (/dev/asn/BDF) opened for writing");
		err = -EPERM;
		goto out;
	}
	mutex_lock(&adev->lock);
	if (!adev->regs) {
		NL_SET_ERR_MSG(info->extack, "asn device was removed");
		err = -ENODEV;
	} else if (adev->owner_sk && !asn_owner_sent(adev, skb, info)) {
		NL_SET_ERR_MSG(info->extack,
			       "the board has another owner (another asnd?): ASN_CMD_DEV_GET gives its pid");
		err = -EBUSY;
	} else {
		adev->owner_portid = info->snd_portid;
		adev->owner_net = genl_info_net(info);
		adev->owner_sk = NETLINK_CB(skb).sk;
		adev->owner_pid = task_tgid_vnr(current);
	}
	mutex_unlock(&adev->lock);
out:
	fdput(f);
	kref_put(&adev->ref, asn_dev_release);
	return err;
}

static int asn_fill_dev(struct sk_buff *msg, struct asn_dev *adev, u32 portid,
			u32 seq, int flags)
{
	char name[16];
	u32 generation = 0;
	pid_t owner_pid;
	void *hdr;

	hdr = genlmsg_put(msg, portid, seq, &asn_genl_family, flags, ASN_CMD_DEV_GET);
	if (!hdr)
		return -EMSGSIZE;
	mutex_lock(&adev->lock);
	if (adev->regs)
		generation = ioread32(adev->regs + ASN_ID_GENERATION);
	owner_pid = adev->owner_pid;
	mutex_unlock(&adev->lock);
	snprintf(name, sizeof(name), "asn%d", adev->index);
	if (nla_put_u32(msg, ASN_ATTR_DEV_INDEX, adev->index) ||
	    nla_put_string(msg, ASN_ATTR_DEV_NAME, name) ||
	    nla_put_string(msg, ASN_ATTR_PCI_ADDR, pci_name(adev->pdev)) ||
	    nla_put_u32(msg, ASN_ATTR_BOARD_KIND, adev->board_kind) ||
	    nla_put_u32(msg, ASN_ATTR_GENERATION, generation) ||
	    nla_put_u32(msg, ASN_ATTR_REG_BYTES, adev->len) ||
	    nla_put_u32(msg, ASN_ATTR_BLOCK_COUNT, adev->nblocks) ||
	    nla_put_u64_64bit(msg, ASN_ATTR_BINDING, adev->binding, ASN_ATTR_PAD) ||
	    (owner_pid && nla_put_u32(msg, ASN_ATTR_OWNER_PID, owner_pid)) ||
	    (adev->serial &&
	     nla_put_u64_64bit(msg, ASN_ATTR_SERIAL, adev->serial, ASN_ATTR_PAD))) {
		genlmsg_cancel(msg, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return 0;
}

static int asn_nl_dev_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct asn_dev *adev;
	long skip = cb->args[0], i = 0;

	mutex_lock(&asn_devs_lock);
	list_for_each_entry(adev, &asn_devs, node) {
		if (i++ < skip)
			continue;
		if (asn_fill_dev(skb, adev, NETLINK_CB(cb->skb).portid,
				 cb->nlh->nlmsg_seq, NLM_F_MULTI)) {
			i--;
			break;
		}
	}
	mutex_unlock(&asn_devs_lock);
	cb->args[0] = i;
	return skb->len;
}

static const struct genl_small_ops asn_genl_ops[] = {
	{
		.cmd = ASN_CMD_DEV_GET,
		.dumpit = asn_nl_dev_dump,
	},
	{
		.cmd = ASN_CMD_REG_READ,
		.doit = asn_nl_reg_read,
	},
	{
		.cmd = ASN_CMD_REG_WRITE,
		.doit = asn_nl_reg_write,
	},
	{
		.cmd = ASN_CMD_TABLE_WRITE,
		.doit = asn_nl_table_write,
	},
	{
		.cmd = ASN_CMD_BOARD_OWN,
		.doit = asn_nl_board_own,
	},
};

static struct genl_family asn_genl_family __ro_after_init = {
	.name = ASN_GENL_NAME,
	.version = ASN_GENL_VERSION,
	.maxattr = ASN_ATTR_MAX,
	.policy = asn_policy,
	.netnsok = false,
	.module = THIS_MODULE,
	.small_ops = asn_genl_ops,
	.n_small_ops = ARRAY_SIZE(asn_genl_ops),
	.mcgrps = asn_mcgrps,
	.n_mcgrps = ARRAY_SIZE(asn_mcgrps),
	/* resv_start_op stays 0: every op validates the header's reserved bytes. */
};

int asn_genl_init(void)
{
	int err;

	err = netlink_register_notifier(&asn_netlink_notifier);
	if (err)
		return err;
	err = genl_register_family(&asn_genl_family);
	if (err)
		netlink_unregister_notifier(&asn_netlink_notifier);
	return err;
}

void asn_genl_exit(void)
{
	genl_unregister_family(&asn_genl_family);
	netlink_unregister_notifier(&asn_netlink_notifier);
}
