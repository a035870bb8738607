/* The same in C:  cc -std=c99 lock_example.c $(pkg-config --cflags --libs asnclient)
 *   asn_lock_example_c [ENDPOINT] */
#include <asn/client/asnclient.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  /* NULL: the default, $ASN_SOCKET when set, else unix:/run/asn/asnd.sock */
  const char* endpoint = argc > 1 ? argv[1] : NULL;
  const char* file = "example:inode-4711";
  asn_range stripe = {0, 1 << 20};
  asn_client* client = NULL;
  asn_session* session = NULL;
  asn_lock_handle* lock = NULL;
  asn_status status;

  if ((status = asn_client_open(endpoint, NULL, NULL, NULL, &client)) != ASN_OK ||
      (status = asn_session_open(client, 15, "asn_lock_example_c", &session)) != ASN_OK) {
    fprintf(stderr, "%s\n", asn_last_error());
    asn_client_close(client);
    return 1;
  }
  /* The handle remembers file and ranges; {0, ASN_TO_EOF} would be the whole file. */
  status =
      asn_lock_acquire(session, file, strlen(file), &stripe, 1, ASN_LOCK_EXCLUSIVE, 5000, &lock);
  if (status == ASN_OK) {
    printf("locked, token %llu: write tagged with it\n",
           (unsigned long long)asn_lock_handle_token(lock));
    status = asn_unlock_handle(lock);
    asn_lock_handle_free(lock);
  }
  if (status != ASN_OK) fprintf(stderr, "%s: %s\n", asn_strerror(status), asn_last_error());
  asn_session_close(session);
  asn_client_close(client);
  return status == ASN_OK ? 0 : 1;
}
