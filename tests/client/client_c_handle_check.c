/* The C API's lock handles and to-the-end-of-the-file ranges, compiled as C99 with -pedantic,
 * against a real asnd (client_c_api_test). Returns 0, or the number of the failed step with
 * its message in `error`. */
#include <stdio.h>
#include <string.h>

#include "asn/client/asnclient.h"

#define STEP(n, cond)                                                 \
  do {                                                                \
    if (!(cond)) {                                                    \
      snprintf(error, error_len, "step %d: %s", n, asn_last_error()); \
      return n;                                                       \
    }                                                                 \
  } while (0)

int asn_client_c_handles(asn_session* a, asn_session* b, char* error, unsigned long error_len);

int asn_client_c_handles(asn_session* a, asn_session* b, char* error, unsigned long error_len) {
  const char file[] = "c-handles";
  asn_range whole = {0, ASN_TO_EOF};
  asn_range tail = {(uint64_t)1 << 40, ASN_TO_EOF};
  asn_range last = {UINT64_MAX, 1};
  asn_range low = {0, 4096};
  asn_range two[2] = {{0, 10}, {100, 10}};
  asn_lock_handle* held = NULL;
  asn_lock_handle* refused = (asn_lock_handle*)&held; /* must come back NULL */
  asn_status status;
  uint64_t token = 0;

  /* The whole file, held by a handle: the last byte of the space is in it. */
  STEP(1, asn_lock_acquire(a, file, sizeof file - 1, &whole, 1, ASN_LOCK_EXCLUSIVE, 1000, &held) ==
              ASN_OK);
  STEP(2, held != NULL && asn_lock_handle_token(held) > 0);
  status = asn_try_lock_acquire(b, file, sizeof file - 1, &last, 1, ASN_LOCK_SHARED, &refused);
  STEP(3, status == ASN_CONFLICT && refused == NULL);
  STEP(4, asn_downgrade_handle(held) == ASN_OK);
  STEP(5, asn_try_lock(b, file, sizeof file - 1, &last, 1, ASN_LOCK_SHARED, &token) == ASN_OK);
  STEP(6, asn_unlock(b, file, sizeof file - 1, &last, 1) == ASN_OK);
  STEP(7, asn_unlock_handle(held) == ASN_OK);
  STEP(8, asn_unlock_handle(held) == ASN_FAILED_PRECONDITION);
  asn_lock_handle_free(held);
  held = NULL;

  /* From 2^40 to the end: bytes below are free, the last byte is not. */
  STEP(9, asn_lock_acquire(a, file, sizeof file - 1, &tail, 1, ASN_LOCK_EXCLUSIVE, 1000, &held) ==
              ASN_OK);
  STEP(10, asn_try_lock(b, file, sizeof file - 1, &low, 1, ASN_LOCK_EXCLUSIVE, NULL) == ASN_OK);
  STEP(11, asn_try_lock(b, file, sizeof file - 1, &last, 1, ASN_LOCK_SHARED, NULL) == ASN_CONFLICT);
  STEP(12, asn_unlock(a, file, sizeof file - 1, &tail, 1) == ASN_OK); /* the same bytes by hand */
  STEP(13, asn_try_lock(b, file, sizeof file - 1, &last, 1, ASN_LOCK_SHARED, NULL) == ASN_OK);
  asn_lock_handle_free(held);

  /* Two ranges remembered. */
  STEP(14, asn_lock_acquire(a, "other", 5, two, 2, ASN_LOCK_EXCLUSIVE, 1000, &held) == ASN_OK);
  STEP(15, asn_try_lock(b, "other", 5, &two[1], 1, ASN_LOCK_SHARED, NULL) == ASN_CONFLICT);
  STEP(16, asn_unlock_handle(held) == ASN_OK);
  STEP(17, asn_try_lock(b, "other", 5, two, 2, ASN_LOCK_SHARED, NULL) == ASN_OK);
  asn_lock_handle_free(held);
  asn_lock_handle_free(NULL);
  STEP(18, asn_lock_acquire(a, file, sizeof file - 1, &low, 1, ASN_LOCK_SHARED, 0, NULL) ==
               ASN_INVALID_ARGUMENT);
  STEP(19, asn_lock_cancel(NULL) == ASN_INVALID_ARGUMENT);
  return 0;
}
