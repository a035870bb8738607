/* The C API, compiled as C99 with -pedantic: a round trip against a (fake) asnd. Returns 0, or
 * the number of the failed step with its message in `error`. */
#include <stdio.h>
#include <string.h>

#include "asn/client/asnclient.h"

static int lost_calls;

static void on_lost(void* arg) { ++*(int*)arg; }

#define STEP(n, cond)                                                 \
  do {                                                                \
    if (!(cond)) {                                                    \
      snprintf(error, error_len, "step %d: %s", n, asn_last_error()); \
      return n;                                                       \
    }                                                                 \
  } while (0)

int asn_client_c_round_trip(const char* endpoint, char* error, unsigned long error_len);

int asn_client_c_round_trip(const char* endpoint, char* error, unsigned long error_len) {
  asn_client* client = NULL;
  asn_session* a = NULL;
  asn_session* b = NULL;
  asn_range range = {0, 4096};
  asn_range other = {4096, 10};
  asn_strided strided = {8192, 16, 64, 4};
  const char file[] = "inode\0with-a-nul";
  uint64_t token = 0, token2 = 0;
  int status;

  STEP(1, asn_client_open(endpoint, NULL, NULL, NULL, &client) == ASN_OK);
  STEP(2, asn_session_open(client, 5, "c-check", &a) == ASN_OK && a != NULL);
  STEP(3, asn_session_open(client, 5, NULL, &b) == ASN_OK && asn_session_id(b) != 0);
  asn_session_on_lost(a, on_lost, &lost_calls);

  STEP(4,
       asn_lock(a, file, sizeof file - 1, &range, 1, ASN_LOCK_EXCLUSIVE, 1000, &token) == ASN_OK &&
           token > 0);
  status = asn_try_lock(b, file, sizeof file - 1, &range, 1, ASN_LOCK_SHARED, &token2);
  STEP(5, status == ASN_CONFLICT && strstr(asn_last_error(), "FAILED_PRECONDITION") != NULL);
  STEP(6, strcmp(asn_strerror(status), "CONFLICT") == 0);
  status = asn_lock(b, file, sizeof file - 1, &range, 1, ASN_LOCK_SHARED, 100, &token2);
  STEP(7, status == ASN_DEADLINE_EXCEEDED);
  STEP(8, asn_lock(b, file, sizeof file - 1, &other, 1, ASN_LOCK_SHARED, 1000, &token2) == ASN_OK &&
              token2 > token);
  STEP(9, asn_lock_strided(b, file, sizeof file - 1, &strided, ASN_LOCK_EXCLUSIVE, -1, NULL) ==
              ASN_OK);
  STEP(10, asn_downgrade(a, file, sizeof file - 1, &range, 1) == ASN_OK);
  STEP(11, asn_unlock(a, file, sizeof file - 1, &range, 1) == ASN_OK);
  STEP(12, asn_unlock(a, file, sizeof file - 1, &range, 1) == ASN_FAILED_PRECONDITION);
  STEP(13, asn_lock(a, file, 0, &range, 1, ASN_LOCK_SHARED, 0, NULL) == ASN_INVALID_ARGUMENT);
  STEP(14, asn_session_lost(a) == 0 && lost_calls == 0);
  STEP(15, asn_session_close(a) == ASN_OK);
  STEP(16, asn_session_close(b) == ASN_OK);
  asn_client_close(client);
  STEP(17, strcmp(asn_strerror(ASN_DEADLINE_EXCEEDED), "DEADLINE_EXCEEDED") == 0);
  return 0;
}
