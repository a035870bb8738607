/* Compiled as C (C99, -pedantic): proves the generated header is plain C with fixed-width
 * types, usable by the kernel driver. The C++ test compares these values with the C++
 * descriptors. */
#include "regmap_c_check.h"

#include "asn_regs.h"

uint32_t regmap_c_magic(void) { return ASN_REGMAP_MAGIC; }
uint32_t regmap_c_id_scratch(void) { return ASN_ID_SCRATCH; }
uint32_t regmap_c_port_vc_occupancy(unsigned i) { return ASN_PORT_VC_OCCUPANCY(i); }
uint32_t regmap_c_tdm_slot_table_active(void) { return ASN_TDM_SLOT_TABLE_ACTIVE; }
uint32_t regmap_c_cap_offset(unsigned index) { return ASN_ID_CAP_BASE + 4U * index; }
uint32_t regmap_c_cap_tdm_slots_index(void) { return ASN_CAP_TDM_SLOTS; }
uint32_t regmap_c_slot_out_word(unsigned i) { return ASN_TDM_SLOT_TABLE_OUT_WORD(i); }
uint32_t regmap_c_slot_out_shift(unsigned i) { return ASN_TDM_SLOT_TABLE_OUT_SHIFT(i); }
uint32_t regmap_c_prep_threshold(uint32_t packets) {
  return ASN_FIELD_PREP(ASN_PORT_ALDFB_THRESHOLD_PACKETS, packets);
}
uint32_t regmap_c_block_size(unsigned which) {
  static const uint32_t sizes[] = {ASN_ID_SIZE,  ASN_PORT_SIZE,   ASN_ROUTE_SIZE,
                                   ASN_TDM_SIZE, ASN_STRIPE_SIZE, ASN_LOCK_SIZE};
  return which < sizeof(sizes) / sizeof(sizes[0]) ? sizes[which] : 0;
}
uint32_t regmap_c_lock_op_raise_token_floor(void) { return ASN_LOCK_REQUEST_OP_RAISE_TOKEN_FLOOR; }
uint32_t regmap_c_lock_kind_end(void) { return ASN_LOCK_COMPLETION_KIND_END; }
