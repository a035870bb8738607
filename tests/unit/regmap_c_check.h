#ifndef REGMAP_C_CHECK_H
#define REGMAP_C_CHECK_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
uint32_t regmap_c_magic(void);
uint32_t regmap_c_id_scratch(void);
uint32_t regmap_c_port_vc_occupancy(unsigned i);
uint32_t regmap_c_tdm_slot_table_active(void);
uint32_t regmap_c_cap_offset(unsigned index);
uint32_t regmap_c_cap_tdm_slots_index(void);
uint32_t regmap_c_slot_out_word(unsigned i);
uint32_t regmap_c_slot_out_shift(unsigned i);
uint32_t regmap_c_prep_threshold(uint32_t packets);
uint32_t regmap_c_block_size(unsigned which);
uint32_t regmap_c_lock_op_raise_token_floor(void);
uint32_t regmap_c_lock_kind_end(void);
#ifdef __cplusplus
}
#endif
#endif
