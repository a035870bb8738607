// SPDX-License-Identifier: GPL-2.0
/*
 * asn.ko: the active storage network switch (NetFPGA boards).
 *
 * Binds the boards, walks their register block list at probe, gives each a
 * node /dev/asn/BDF and polls its events; asn_genl.c serves batched register
 * access over the generic netlink family "asn".
 */
#include <linux/idr.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>

#define ASN_ACCESS_TABLES	/* the block descriptions live here */
#include "asn.h"

static unsigned int poll_ms = 100;
module_param(poll_ms, uint, 0444);
MODULE_PARM_DESC(poll_ms,
		 "Poll id.irq_status and id.generation for events every N ms (0: never)");

static bool ivshmem;
module_param(ivshmem, bool, 0444);
MODULE_PARM_DESC(ivshmem,
		 "Also bind QEMU ivshmem-plain (1af4:1110, BAR 2): for tests only");

/* driver_data: the BAR that holds the register space. */
static const struct pci_device_id asn_pci_ids[] = {
	{ PCI_DEVICE(0xfeed, 0x0001), .driver_data = 0 },	/* NetFPGA-1G */
	{ PCI_DEVICE(0x10ee, 0x7028), .driver_data = 0 },	/* NetFPGA SUME */
	{ PCI_DEVICE(0x10ee, 0x903f), .driver_data = 2 },	/* NetFPGA PLUS */
	{ PCI_DEVICE(0x10ee, 0x913f), .driver_data = 2 },	/* NetFPGA PLUS */
	{ }
};
MODULE_DEVICE_TABLE(pci, asn_pci_ids);

#define ASN_IVSHMEM_VENDOR	0x1af4
#define ASN_IVSHMEM_DEVICE	0x1110
#define ASN_IVSHMEM_BAR		2

LIST_HEAD(asn_devs);
/* Guards asn_devs; taken before a device's lock, never after. */
DEFINE_MUTEX(asn_devs_lock);
static DEFINE_IDA(asn_ida);

void asn_dev_release(struct kref *ref)
{
	struct asn_dev *adev = container_of(ref, struct asn_dev, ref);

	ida_free(&asn_ida, adev->index);
	pci_dev_put(adev->pdev);
	mutex_destroy(&adev->lock);
	kfree(adev);
}

static const struct asn_block_desc *asn_find_desc(u32 type)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(asn_block_descs); i++)
		if (asn_block_descs[i].type == type)
			return &asn_block_descs[i];
	return NULL;
}

/* Walks the block list; one dev_err line and -ENODEV when the board is not ours. */
static int asn_walk_blocks(struct asn_dev *adev)
{
	struct device *dev = &adev->pdev->dev;
	u32 offset = 0, type, version, next, magic;
	const struct asn_block_desc *desc;

	magic = ioread32(adev->regs + ASN_ID_MAGIC);
	type = ioread32(adev->regs + ASN_BLOCK_TYPE);
	if (magic != ASN_REGMAP_MAGIC) {
		dev_err(dev, "not an asn board: magic 0x%08x at id.magic, want 0x%08x\n",
			magic, ASN_REGMAP_MAGIC);
		return -ENODEV;
	}
	if (type != ASN_ID_TYPE) {
		dev_err(dev, "not an asn board: first block type 0x%x, want id (0x%x)\n",
			type, ASN_ID_TYPE);
		return -ENODEV;
	}
	adev->board_kind = ioread32(adev->regs + ASN_ID_BOARD_KIND);

	for (;;) {
		if (adev->nblocks == ASN_MAX_BLOCKS) {
			dev_err(dev, "block list longer than %d blocks\n", ASN_MAX_BLOCKS);
			return -ENODEV;
		}
		type = ioread32(adev->regs + offset + ASN_BLOCK_TYPE);
		version = ioread32(adev->regs + offset + ASN_BLOCK_VERSION);
		next = ioread32(adev->regs + offset + ASN_BLOCK_NEXT);
		desc = asn_find_desc(type);
		if (!desc) {
			dev_err(dev, "unknown block type 0x%x at 0x%x\n", type, offset);
			return -ENODEV;
		}
		if (version < desc->min_version || version > desc->version) {
			dev_err(dev, "block %s at 0x%x: version %u unsupported (driver supports %u-%u)\n",
				desc->name, offset, version, desc->min_version, desc->version);
			return -ENODEV;
		}
		if (offset % desc->size || desc->size > adev->len - offset) {
			dev_err(dev, "block %s at 0x%x: misplaced or past the end of the BAR (0x%x bytes)\n",
				desc->name, offset, adev->len);
			return -ENODEV;
		}
		adev->blocks[adev->nblocks].offset = offset;
		adev->blocks[adev->nblocks].desc = desc;
		adev->nblocks++;
		if (!next)
			return 0;
		if (next <= offset || next % 4 || next >= adev->len) {
			dev_err(dev, "block %s at 0x%x: bad block_next 0x%x\n",
				desc->name, offset, next);
			return -ENODEV;
		}
		offset = next;
	}
}

/*
 * Polls id.generation and id.irq_status (no interrupt handling yet; ivshmem-plain
 * has none). Reports causes newly set since the last poll and writes them back,
 * which clears them on a board (W1C); plain memory keeps them, hence the edge.
 */
static void asn_poll(struct work_struct *work)
{
	struct asn_dev *adev = container_of(to_delayed_work(work), struct asn_dev, poll);
	u32 generation, status, fresh, bus_errors, ro_writes;

	mutex_lock(&adev->lock);
	if (!adev->regs) {
		mutex_unlock(&adev->lock);
		return;
	}
	generation = ioread32(adev->regs + ASN_ID_GENERATION);
	status = ioread32(adev->regs + ASN_ID_IRQ_STATUS);
	bus_errors = ioread32(adev->regs + ASN_ID_BUS_ERROR_COUNT);
	ro_writes = ioread32(adev->regs + ASN_ID_RO_WRITE_COUNT);
	fresh = status & ~adev->irq_seen;
	adev->irq_seen = status;
	if (fresh)
		iowrite32(fresh, adev->regs + ASN_ID_IRQ_STATUS);
	mutex_unlock(&adev->lock);

	if (generation != adev->generation) {
		adev->generation = generation;
		asn_notify(adev, ASN_EVENT_GENERATION_CHANGED, ASN_ID_TYPE, generation);
	}
	if (fresh & ASN_ID_IRQ_STATUS_TDM_SWAP_MASK)
		asn_notify(adev, ASN_EVENT_BANK_SWAPPED, ASN_TDM_TYPE, generation);
	if (fresh & ASN_ID_IRQ_STATUS_ROUTE_COMMIT_MASK)
		asn_notify(adev, ASN_EVENT_BANK_SWAPPED, ASN_ROUTE_TYPE, generation);
	if (fresh & ASN_ID_IRQ_STATUS_LOCK_COMPLETION_MASK)
		asn_notify(adev, ASN_EVENT_COMPLETIONS, ASN_LOCK_TYPE, generation);
	if (fresh & ASN_ID_IRQ_STATUS_LINK_CHANGE_MASK)
		asn_notify(adev, ASN_EVENT_LINK_CHANGE, ASN_PORT_TYPE, generation);
	asn_devlink_check_bus(adev, bus_errors, ro_writes);
	schedule_delayed_work(&adev->poll, msecs_to_jiffies(poll_ms));
}

/*
 * The board's node, /dev/asn/BDF. It has no read or write: opening it for
 * writing is the proof ASN_CMD_BOARD_OWN asks for, so that the node's group and
 * mode (udev) decide who may drive the board, not a capability. An open file
 * holds the device, so a stale fd never matches a board bound later at the
 * same address.
 */
static int asn_node_open(struct inode *inode, struct file *file)
{
	/* misc_open() set private_data to our miscdevice and holds misc_mtx */
	struct asn_dev *adev = container_of(file->private_data, struct asn_dev, misc);

	kref_get(&adev->ref);
	return 0;
}

static int asn_node_release(struct inode *inode, struct file *file)
{
	struct asn_dev *adev = container_of(file->private_data, struct asn_dev, misc);

	kref_put(&adev->ref, asn_dev_release);
	return 0;
}

const struct file_operations asn_node_fops = {
	.owner = THIS_MODULE,
	.open = asn_node_open,
	.release = asn_node_release,
	.llseek = noop_llseek,
};

static int asn_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct asn_dev *adev;
	int bar = id->driver_data;
	int err;

	if (pdev->vendor == ASN_IVSHMEM_VENDOR) {
		if (!ivshmem)
			return -ENODEV;
		bar = ASN_IVSHMEM_BAR;
	}

	adev = kzalloc(sizeof(*adev), GFP_KERNEL);
	if (!adev)
		return -ENOMEM;
	kref_init(&adev->ref);
	mutex_init(&adev->lock);
	adev->index = ida_alloc(&asn_ida, GFP_KERNEL);
	if (adev->index < 0) {
		err = adev->index;
		mutex_destroy(&adev->lock);
		kfree(adev);
		return err;
	}
	/*
	 * A request that found the device before removal may still name it
	 * (dev_dbg in asn_check_batch) after remove() returned.
	 */
	adev->pdev = pci_dev_get(pdev);
	adev->serial = pci_get_dsn(pdev);
	do
		adev->binding = get_random_u64();
	while (!adev->binding);

	err = pcim_enable_device(pdev);
	if (err)
		goto err_put;
	if (!(pci_resource_flags(pdev, bar) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, bar) < ASN_ID_SIZE ||
	    pci_resource_len(pdev, bar) > U32_MAX) {
		dev_err(&pdev->dev, "BAR %d is not a usable register space\n", bar);
		err = -ENODEV;
		goto err_put;
	}
	err = pcim_iomap_regions(pdev, BIT(bar), KBUILD_MODNAME);
	if (err)
		goto err_put;
	adev->regs = pcim_iomap_table(pdev)[bar];
	adev->len = pci_resource_len(pdev, bar);

	err = asn_walk_blocks(adev);
	if (err)
		goto err_put;

	adev->generation = ioread32(adev->regs + ASN_ID_GENERATION);
	adev->irq_seen = ioread32(adev->regs + ASN_ID_IRQ_STATUS);
	/* Counts from before this binding are not news. */
	adev->bus_errors_seen = ioread32(adev->regs + ASN_ID_BUS_ERROR_COUNT);
	adev->ro_writes_seen = ioread32(adev->regs + ASN_ID_RO_WRITE_COUNT);
	INIT_DELAYED_WORK(&adev->poll, asn_poll);
	snprintf(adev->misc_name, sizeof(adev->misc_name), "asn-%s", pci_name(pdev));
	snprintf(adev->misc_nodename, sizeof(adev->misc_nodename), "asn/%s", pci_name(pdev));
	adev->misc.minor = MISC_DYNAMIC_MINOR;
	adev->misc.name = adev->misc_name;
	adev->misc.nodename = adev->misc_nodename;
	adev->misc.mode = 0600;	/* udev gives the group (deploy/60-asn.rules) */
	adev->misc.fops = &asn_node_fops;
	adev->misc.parent = &pdev->dev;
	err = misc_register(&adev->misc);
	if (err)
		goto err_put;
	err = asn_devlink_create(adev);
	if (err) {
		misc_deregister(&adev->misc);
		goto err_put;
	}
	pci_set_drvdata(pdev, adev);
	mutex_lock(&asn_devs_lock);
	list_add_tail(&adev->node, &asn_devs);
	mutex_unlock(&asn_devs_lock);
	dev_info(&pdev->dev, "asn%d: board kind 0x%x, %u blocks, BAR %d (0x%x bytes)\n",
		 adev->index, adev->board_kind, adev->nblocks, bar, adev->len);
	if (poll_ms)
		schedule_delayed_work(&adev->poll, msecs_to_jiffies(poll_ms));
	return 0;

err_put:
	adev->regs = NULL;
	kref_put(&adev->ref, asn_dev_release);
	return err;
}

static void asn_remove(struct pci_dev *pdev)
{
	struct asn_dev *adev = pci_get_drvdata(pdev);

	/* No new opens; an open file keeps adev (not the board) until closed. */
	misc_deregister(&adev->misc);

	mutex_lock(&asn_devs_lock);
	list_del(&adev->node);
	mutex_unlock(&asn_devs_lock);

	cancel_delayed_work_sync(&adev->poll);
	/* After the poll, which reports to its health reporter. */
	asn_devlink_destroy(adev);
	/* Waits for a request in flight; later ones find regs NULL. */
	mutex_lock(&adev->lock);
	adev->regs = NULL;
	mutex_unlock(&adev->lock);

	dev_info(&pdev->dev, "asn%d removed\n", adev->index);
	kref_put(&adev->ref, asn_dev_release);
}

static struct pci_driver asn_pci_driver = {
	.name = KBUILD_MODNAME,
	.id_table = asn_pci_ids,
	.probe = asn_probe,
	.remove = asn_remove,
};

static int __init asn_init(void)
{
	int err;

	err = asn_genl_init();
	if (err)
		return err;
	err = pci_register_driver(&asn_pci_driver);
	if (err)
		goto err_genl;
	if (ivshmem) {
		err = pci_add_dynid(&asn_pci_driver, ASN_IVSHMEM_VENDOR, ASN_IVSHMEM_DEVICE,
				    PCI_ANY_ID, PCI_ANY_ID, 0, 0, ASN_IVSHMEM_BAR);
		if (err)
			goto err_pci;
	}
	return 0;

err_pci:
	pci_unregister_driver(&asn_pci_driver);
err_genl:
	asn_genl_exit();
	return err;
}

static void __exit asn_exit(void)
{
	pci_unregister_driver(&asn_pci_driver);
	asn_genl_exit();
}

module_init(asn_init);
module_exit(asn_exit);

MODULE_DESCRIPTION("Active storage network switch (NetFPGA boards)");
MODULE_LICENSE("GPL");
