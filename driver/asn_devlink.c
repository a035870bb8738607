// SPDX-License-Identifier: GPL-2.0
/*
 * asn.ko's devlink instance, one per board (pci/<BDF>), so that operators'
 * own tools see the board: `devlink dev info` (driver, board kind, register
 * map version, serial), the health reporter "bus" (bus errors and writes to
 * read-only registers the board counted, with dump and recover), and the
 * region "registers" (a snapshot of the register space). The family "asn"
 * keeps what devlink has no word for: batched register access, the owner.
 */
#include <linux/kernel.h>
#include <linux/vmalloc.h>
#include <net/devlink.h>

#include "asn.h"

struct asn_devlink {
	struct asn_dev *adev;
};

static struct asn_dev *asn_devlink_dev(struct devlink *devlink)
{
	return ((struct asn_devlink *)devlink_priv(devlink))->adev;
}

static const char *asn_board_kind_name(u32 kind)
{
	switch (kind) {
	case ASN_BOARD_KIND_NETFPGA_1G:
		return "netfpga-1g";
	case ASN_BOARD_KIND_NETFPGA_SUME:
		return "netfpga-sume";
	case ASN_BOARD_KIND_NETFPGA_PLUS:
		return "netfpga-plus";
	case ASN_BOARD_KIND_EMULATED:
		return "emulated";
	}
	return "unknown";
}

/* Reads one id register; false once the board is gone. */
static bool asn_read_id(struct asn_dev *adev, u32 offset, u32 *value)
{
	bool ok;

	mutex_lock(&adev->lock);
	ok = adev->regs;
	if (ok)
		*value = ioread32(adev->regs + offset);
	mutex_unlock(&adev->lock);
	return ok;
}

static int asn_devlink_info_get(struct devlink *devlink, struct devlink_info_req *req,
				struct netlink_ext_ack *extack)
{
	struct asn_dev *adev = asn_devlink_dev(devlink);
	char text[32];
	u32 version;
	int err;

	err = devlink_info_driver_name_put(req, KBUILD_MODNAME);
	if (err)
		return err;
	if (adev->serial) {
		snprintf(text, sizeof(text), "%016llx", adev->serial);
		err = devlink_info_serial_number_put(req, text);
		if (err)
			return err;
	}
	err = devlink_info_version_fixed_put(req, DEVLINK_INFO_VERSION_GENERIC_BOARD_ID,
					     asn_board_kind_name(adev->board_kind));
	if (err)
		return err;
	if (!asn_read_id(adev, ASN_ID_REGMAP_VERSION, &version)) {
		NL_SET_ERR_MSG(extack, "asn device was removed");
		return -ENODEV;
	}
	/* The bitstream's register map: what the board runs, as firmware would be. */
	snprintf(text, sizeof(text), "%u.%u",
		 (version & ASN_ID_REGMAP_VERSION_MAJOR_MASK) >> ASN_ID_REGMAP_VERSION_MAJOR_SHIFT,
		 (version & ASN_ID_REGMAP_VERSION_MINOR_MASK) >> ASN_ID_REGMAP_VERSION_MINOR_SHIFT);
	return devlink_info_version_running_put(req, "asn.regmap", text);
}

static const struct devlink_ops asn_devlink_ops = {
	.info_get = asn_devlink_info_get,
};

/*
 * The region "registers": the register space as one snapshot, every register,
 * table and ring the map knows, except clients' data (the sensitive windows,
 * which only the board's owner reads) and the holes (a bus error on a board):
 * those read as zero.
 */
static int asn_region_snapshot(struct devlink *devlink, const struct devlink_region_ops *ops,
			       struct netlink_ext_ack *extack, u8 **data)
{
	struct asn_dev *adev = asn_devlink_dev(devlink);
	unsigned int b, r;
	u32 *words;

	words = vzalloc(adev->len);
	if (!words)
		return -ENOMEM;
	mutex_lock(&adev->lock);
	if (!adev->regs) {
		mutex_unlock(&adev->lock);
		vfree(words);
		NL_SET_ERR_MSG(extack, "asn device was removed");
		return -ENODEV;
	}
	for (b = 0; b < adev->nblocks; b++) {
		const struct asn_block *blk = &adev->blocks[b];
		const struct asn_block_desc *d = blk->desc;

		for (r = 0; r < d->map_count; r++) {
			u32 rel;

			for (rel = d->map[r].offset; rel - d->map[r].offset < d->map[r].bytes;
			     rel += 4) {
				u32 at = blk->offset + rel;

				if (asn_in_ranges(d->sens, d->sens_count, rel) || at >= adev->len)
					continue;
				words[at / 4] = ioread32(adev->regs + at);
			}
		}
	}
	mutex_unlock(&adev->lock);
	*data = (u8 *)words;
	return 0;
}

static const struct devlink_region_ops asn_region_ops = {
	.name = "registers",
	.destructor = vfree,
	.snapshot = asn_region_snapshot,
};

/*
 * The health reporter "bus": the board counts accesses that hit no register
 * (id.bus_error_count, the last at id.bus_error_addr) and writes to read-only
 * registers (id.ro_write_count). The poll reports a rise; recover takes the
 * counts as seen (the board keeps counting: nothing on it to reset).
 */
static int asn_health_fill(struct asn_dev *adev, struct devlink_fmsg *fmsg)
{
	u32 errors, addr, ro_writes;
	int err;

	if (!asn_read_id(adev, ASN_ID_BUS_ERROR_COUNT, &errors) ||
	    !asn_read_id(adev, ASN_ID_BUS_ERROR_ADDR, &addr) ||
	    !asn_read_id(adev, ASN_ID_RO_WRITE_COUNT, &ro_writes))
		return -ENODEV;
	err = devlink_fmsg_u32_pair_put(fmsg, "bus_errors", errors);
	if (!err)
		err = devlink_fmsg_u32_pair_put(fmsg, "last_bus_error_addr", addr);
	if (!err)
		err = devlink_fmsg_u32_pair_put(fmsg, "read_only_writes", ro_writes);
	if (!err)
		err = devlink_fmsg_u32_pair_put(fmsg, "bus_errors_reported",
						READ_ONCE(adev->bus_errors_seen));
	if (!err)
		err = devlink_fmsg_u32_pair_put(fmsg, "read_only_writes_reported",
						READ_ONCE(adev->ro_writes_seen));
	return err;
}

static int asn_health_diagnose(struct devlink_health_reporter *reporter,
			       struct devlink_fmsg *fmsg, struct netlink_ext_ack *extack)
{
	return asn_health_fill(devlink_health_reporter_priv(reporter), fmsg);
}

static int asn_health_dump(struct devlink_health_reporter *reporter,
			   struct devlink_fmsg *fmsg, void *priv_ctx,
			   struct netlink_ext_ack *extack)
{
	return asn_health_fill(devlink_health_reporter_priv(reporter), fmsg);
}

static int asn_health_recover(struct devlink_health_reporter *reporter, void *priv_ctx,
			      struct netlink_ext_ack *extack)
{
	return 0;
}

static const struct devlink_health_reporter_ops asn_health_ops = {
	.name = "bus",
	.diagnose = asn_health_diagnose,
	.dump = asn_health_dump,
	.recover = asn_health_recover,
	/*
	 * No .test: devlink calls it holding the instance lock, which a report's
	 * recovery takes again (6.1), so a report from it would never return.
	 */
};

/* From the poll: the board's counts rose since the last look. */
void asn_devlink_check_bus(struct asn_dev *adev, u32 bus_errors, u32 ro_writes)
{
	bool rose = bus_errors != READ_ONCE(adev->bus_errors_seen) ||
		    ro_writes != READ_ONCE(adev->ro_writes_seen);

	WRITE_ONCE(adev->bus_errors_seen, bus_errors);
	WRITE_ONCE(adev->ro_writes_seen, ro_writes);
	if (rose && adev->health)
		devlink_health_report(adev->health,
				      "the board counted bus errors or writes to read-only registers",
				      NULL);
}

int asn_devlink_create(struct asn_dev *adev)
{
	struct devlink *devlink;
	int err;

	devlink = devlink_alloc(&asn_devlink_ops, sizeof(struct asn_devlink), &adev->pdev->dev);
	if (!devlink)
		return -ENOMEM;
	((struct asn_devlink *)devlink_priv(devlink))->adev = adev;
	adev->region = devlink_region_create(devlink, &asn_region_ops, 2, adev->len);
	if (IS_ERR(adev->region)) {
		err = PTR_ERR(adev->region);
		goto err_free;
	}
	/* Reported once per rise; 10 s between automatic recoveries. */
	adev->health = devlink_health_reporter_create(devlink, &asn_health_ops, 10000, adev);
	if (IS_ERR(adev->health)) {
		err = PTR_ERR(adev->health);
		goto err_region;
	}
	adev->devlink = devlink;
	devlink_register(devlink);
	return 0;

err_region:
	devlink_region_destroy(adev->region);
err_free:
	adev->region = NULL;
	adev->health = NULL;
	devlink_free(devlink);
	return err;
}

void asn_devlink_destroy(struct asn_dev *adev)
{
	if (!adev->devlink)
		return;
	devlink_unregister(adev->devlink);
	devlink_health_reporter_destroy(adev->health);
	devlink_region_destroy(adev->region);
	devlink_free(adev->devlink);
	adev->devlink = NULL;
	adev->health = NULL;
	adev->region = NULL;
}
