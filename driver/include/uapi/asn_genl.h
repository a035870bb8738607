/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The generic netlink family "asn": asn.ko's interface to user space (asnd's
 * kernel backend, the QEMU kernel test). Shared by the driver and its clients.
 */
#ifndef _UAPI_ASN_GENL_H
#define _UAPI_ASN_GENL_H

#define ASN_GENL_NAME		"asn"
#define ASN_GENL_VERSION	2	/* 2: PCI_ADDR, BINDING, the board owner */

/* Operations in one batch (read or write): the policy refuses more. */
#define ASN_MAX_BATCH		256

enum asn_cmd {
	ASN_CMD_UNSPEC,
	ASN_CMD_DEV_GET,	/* dump: one ASN_CMD_DEV_GET message per device */
	/*
	 * Requests name the board by PCI_ADDR (what asnd does: an index is handed
	 * out lowest-free and names another board after a re-bind) or by
	 * DEV_INDEX; with both, they must name the same board. With BINDING too,
	 * a board bound again since the caller looked it up is refused (ESTALE).
	 */
	ASN_CMD_REG_READ,	/* PCI_ADDR | DEV_INDEX + OFFSETS -> VALUES */
	ASN_CMD_REG_WRITE,	/* PCI_ADDR | DEV_INDEX + OFFSETS + VALUES; the owner only */
	/*
	 * PCI_ADDR | DEV_INDEX + OFFSETS + VALUES + ARM_OFFSET + ARM_VALUE; the owner only.
	 * Writes the batch (shadow bank words and any other writable register of
	 * one banked block), then ARM_VALUE to the block's swap/arm register, as
	 * one transaction.
	 */
	ASN_CMD_TABLE_WRITE,
	/*
	 * Notification on the "events" group: DEV_INDEX, PCI_ADDR, EVENT,
	 * BLOCK_TYPE, GENERATION
	 */
	ASN_CMD_EVENT,
	/*
	 * board + DEV_FD: makes the sending socket the board's owner. DEV_FD is the
	 * sender's fd of the board's node /dev/asn/BDF opened for writing (the node's
	 * group and mode, set by udev, say who may); it may be closed afterwards.
	 * One owner at a time (EBUSY; ASN_CMD_DEV_GET names its OWNER_PID); the
	 * ownership ends with the socket. Writes, and reads of clients' data (lock
	 * rings and data windows), come only from the owner's socket (EPERM).
	 */
	ASN_CMD_BOARD_OWN,
	__ASN_CMD_MAX,
};

#define ASN_CMD_MAX (__ASN_CMD_MAX - 1)

enum asn_attr {
	ASN_ATTR_UNSPEC,
	ASN_ATTR_DEV_INDEX,	/* u32: the device, as ASN_CMD_DEV_GET lists it */
	ASN_ATTR_DEV_NAME,	/* string, reply only: "asn0" */
	ASN_ATTR_PCI_ADDR,	/* string: "0000:00:04.0", the board's lasting name */
	ASN_ATTR_BOARD_KIND,	/* u32, reply only: id.board_kind */
	ASN_ATTR_GENERATION,	/* u32, reply only: id.generation */
	ASN_ATTR_REG_BYTES,	/* u32, reply only: size of the register space */
	ASN_ATTR_BLOCK_COUNT,	/* u32, reply only: blocks found at probe */
	ASN_ATTR_OFFSETS,	/* binary: array of u32 byte offsets, host order */
	ASN_ATTR_VALUES,	/* binary: array of u32 values, host order */
	ASN_ATTR_ARM_OFFSET,	/* u32: the block's swap/arm register */
	ASN_ATTR_ARM_VALUE,	/* u32: exactly its swap/arm field set */
	ASN_ATTR_EVENT,		/* u32, notification only: enum asn_event */
	ASN_ATTR_BLOCK_TYPE,	/* u32, notification only: the block the event is about */
	ASN_ATTR_SERIAL,	/* u64, reply only: the PCIe Device Serial Number, if any */
	ASN_ATTR_PAD,
	/*
	 * u64: this binding of the board to asn.ko, new at every probe. In a
	 * request it must match (else ESTALE): the board was unbound and bound
	 * again since the caller looked it up, and may be another one.
	 */
	ASN_ATTR_BINDING,
	ASN_ATTR_DEV_FD,	/* u32: the sender's fd of /dev/asn/BDF (ASN_CMD_BOARD_OWN) */
	ASN_ATTR_OWNER_PID,	/* u32, reply only: the process that owns the board */
	__ASN_ATTR_MAX,
};

#define ASN_ATTR_MAX (__ASN_ATTR_MAX - 1)

#define ASN_GENL_MCGRP_EVENTS	"events"

enum asn_event {
	ASN_EVENT_UNSPEC,
	ASN_EVENT_BANK_SWAPPED,		/* tdm armed swap or route commit happened */
	ASN_EVENT_COMPLETIONS,		/* a from-board ring has new entries */
	ASN_EVENT_LINK_CHANGE,		/* a port's link went up or down */
	ASN_EVENT_GENERATION_CHANGED,	/* the board was reset (GENERATION: the new one) */
};

#endif /* _UAPI_ASN_GENL_H */
