/* SPDX-License-Identifier: GPL-2.0 */
/*
 * asn.ko's own declarations, shared by its two halves: asn_main.c (the PCI
 * driver, the board's node, the event poll) and asn_genl.c (the generic
 * netlink family "asn": register access, events, the board's owner).
 */
#ifndef ASN_H
#define ASN_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/workqueue.h>
#include <net/devlink.h>
#include <net/genetlink.h>

#include "asn_regs.h"
#include "asn_access.h"
#include "asn_genl.h"

#define ASN_MAX_BLOCKS	512

struct asn_block {
	u32 offset;
	const struct asn_block_desc *desc;
};

struct asn_dev {
	struct kref ref;
	struct list_head node;		/* on asn_devs, under asn_devs_lock */
	struct pci_dev *pdev;		/* referenced until release: messages name it */
	int index;
	u64 serial;			/* PCIe Device Serial Number, 0 if none */
	u64 binding;			/* new at every probe: ASN_ATTR_BINDING */
	/* /dev/asn/BDF: who may open it for writing may own the board. */
	struct miscdevice misc;
	char misc_name[40], misc_nodename[40];
	/* The owner's socket (ASN_CMD_BOARD_OWN), under lock; portid 0: none. */
	u32 owner_portid;
	struct net *owner_net;		/* compared only, never dereferenced */
	/*
	 * The owner's socket, compared only: netlink frees a closed socket's portid
	 * before it tells us (NETLINK_URELEASE), and another socket bound to it in
	 * between must not pass for the owner.
	 */
	const struct sock *owner_sk;
	pid_t owner_pid;
	/* Serialises every register access; regs is NULL once removed. */
	struct mutex lock;
	void __iomem *regs;
	u32 len;
	u32 board_kind;
	/* The event poller's view of the board, under lock. */
	struct delayed_work poll;
	u32 generation;
	u32 irq_seen;
	u32 nblocks;
	struct asn_block blocks[ASN_MAX_BLOCKS];
	/* devlink (asn_devlink.c); the counts the poll saw last (READ_ONCE) */
	struct devlink *devlink;
	struct devlink_region *region;
	struct devlink_health_reporter *health;
	u32 bus_errors_seen;
	u32 ro_writes_seen;
};

extern struct list_head asn_devs;	/* under asn_devs_lock */
extern struct mutex asn_devs_lock;
extern const struct file_operations asn_node_fops;

void asn_dev_release(struct kref *ref);

static inline bool asn_in_ranges(const struct asn_range *r, unsigned int n, u32 rel)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (rel >= r[i].offset && rel - r[i].offset < r[i].bytes)
			return true;
	return false;
}

/* asn_genl.c */
void asn_notify(struct asn_dev *adev, u32 event, u32 block_type, u32 generation);
int asn_genl_init(void);
void asn_genl_exit(void);

/* asn_devlink.c */
int asn_devlink_create(struct asn_dev *adev);
void asn_devlink_destroy(struct asn_dev *adev);
void asn_devlink_check_bus(struct asn_dev *adev, u32 bus_errors, u32 ro_writes);

#endif /* ASN_H */
