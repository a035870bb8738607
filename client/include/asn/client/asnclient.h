/* libasnclient, the C API: byte-range file locks from asnd for parallel file system
 * clients. C99; implemented over the C++ API (asn/client/locks.hpp), with the same
 * semantics (docs/client-library.md).
 *
 * Every function that can fail returns an asn_status: ASN_OK (0), one of the gRPC codes
 * (1..16, same numbers), ASN_SESSION_LOST or ASN_CONFLICT (an enum: storing it in an int
 * still works). After a failure,
 * asn_last_error() gives the message of that failure: it belongs to the calling thread and
 * stays valid until that thread's next call into the library.
 *
 *   asn_client* client;  asn_session* session;  uint64_t token;
 *   asn_range range = {0, 1 << 20};
 *   if (asn_client_open(NULL, NULL, NULL, NULL, &client) != ASN_OK ||
 *       asn_session_open(client, 15, "io-node-7", &session) != ASN_OK) { ... }
 *   if (asn_lock(session, "inode:4711", 10, &range, 1, ASN_LOCK_EXCLUSIVE, 5000, &token)
 *       == ASN_OK) { write_tagged(token); asn_unlock(session, "inode:4711", 10, &range, 1); }
 *   asn_session_close(session);  asn_client_close(client);
 */
#ifndef ASN_CLIENT_ASNCLIENT_H
#define ASN_CLIENT_ASNCLIENT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define ASN_C_API __attribute__((visibility("default")))
#else
#define ASN_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum asn_status {
  ASN_OK = 0,
  ASN_CANCELLED = 1, /* asn_lock: asn_lock_cancel withdrew the waiting request */
  ASN_UNKNOWN = 2,
  ASN_INVALID_ARGUMENT = 3,
  ASN_DEADLINE_EXCEEDED = 4, /* asn_lock: the timeout passed before the lock was granted */
  ASN_NOT_FOUND = 5,
  ASN_ALREADY_EXISTS = 6,
  ASN_PERMISSION_DENIED = 7,
  ASN_RESOURCE_EXHAUSTED = 8,  /* e.g. the lock table is full */
  ASN_FAILED_PRECONDITION = 9, /* e.g. unlocking bytes the session does not hold */
  ASN_ABORTED = 10,
  ASN_OUT_OF_RANGE = 11,
  ASN_UNIMPLEMENTED = 12,
  ASN_INTERNAL = 13,
  ASN_UNAVAILABLE = 14, /* asnd cannot be reached */
  ASN_DATA_LOSS = 15,
  ASN_UNAUTHENTICATED = 16,
  /* The session is gone (expired, or not re-attached after an asnd restart): its locks are
   * gone. Stop writing under them; close it and open a new session. */
  ASN_SESSION_LOST = 100,
  /* asn_try_lock: another holder has a conflicting lock. */
  ASN_CONFLICT = 101
} asn_status;

typedef enum asn_lock_mode { ASN_LOCK_SHARED = 1, ASN_LOCK_EXCLUSIVE = 2 } asn_lock_mode;

/* Bytes [offset, offset + length) of a file. A length of 0 (ASN_TO_EOF) means to the end of
 * the file, as fcntl's l_len = 0: the range covers every byte from offset on, so it also
 * covers bytes the file grows into; {0, ASN_TO_EOF} is the whole file. (The file is a 64-bit
 * byte space: the range ends at 2^64.) Strided blocks have no such rule. */
#define ASN_TO_EOF 0
typedef struct asn_range {
  uint64_t offset;
  uint64_t length;
} asn_range;

/* count blocks of block_length bytes, stride bytes apart. */
typedef struct asn_strided {
  uint64_t offset;
  uint64_t block_length;
  uint64_t stride;
  uint64_t count;
} asn_strided;

typedef struct asn_client asn_client;
typedef struct asn_session asn_session;

/* "DEADLINE_EXCEEDED", "SESSION_LOST", ... (static strings). */
ASN_C_API const char* asn_strerror(int status);
/* The message of this thread's last failed call ("" if none). */
ASN_C_API const char* asn_last_error(void);

/* endpoint: NULL for the default (the socket $ASN_SOCKET names when set and not empty, else
 * "unix:/run/asn/asnd.sock"), a socket path, or "host:port". tls_ca, tls_cert, tls_key: PEM
 * files for mutual TLS over TCP, or NULL. */
ASN_C_API asn_status asn_client_open(const char* endpoint, const char* tls_ca, const char* tls_cert,
                                     const char* tls_key, asn_client** client);
/* Sessions opened from the client stay usable after it is closed. */
ASN_C_API void asn_client_close(asn_client* client);

/* ttl_seconds: the lease (0: asnd's default); name: for people, or NULL. The session keeps
 * itself alive from a background thread and re-attaches after an asnd restart. */
ASN_C_API asn_status asn_session_open(asn_client* client, unsigned ttl_seconds, const char* name,
                                      asn_session** session);
/* Releases the session's locks, ends it and frees the handle (also when it fails). */
ASN_C_API asn_status asn_session_close(asn_session* session);
ASN_C_API uint64_t asn_session_id(const asn_session* session);
/* 1 when asnd said the session is gone. */
ASN_C_API int asn_session_lost(const asn_session* session);
/* How many times asnd said the session's switch locks were lost (a board reset emptied the
 * switch's lock table; the session lives on and took its locks back where it could). */
ASN_C_API uint64_t asn_session_locks_lost(const asn_session* session);
/* Called from the keepalive thread when asnd said the session's switch locks were lost, once
 * it took back what it could. */
ASN_C_API void asn_session_on_locks_lost(asn_session* session, void (*callback)(void* arg),
                                         void* arg);
/* Called once (from the library's keepalive thread or the thread that found out) when the
 * session is lost. */
ASN_C_API void asn_session_on_lost(asn_session* session, void (*callback)(void* arg), void* arg);

/* Waits for the lock: timeout_ms < 0 waits without a deadline. *token receives the fencing
 * token (may be NULL). */
ASN_C_API asn_status asn_lock(asn_session* session, const void* file, size_t file_len,
                              const asn_range* ranges, size_t n_ranges, asn_lock_mode mode,
                              int64_t timeout_ms, uint64_t* token);
ASN_C_API asn_status asn_lock_strided(asn_session* session, const void* file, size_t file_len,
                                      const asn_strided* strided, asn_lock_mode mode,
                                      int64_t timeout_ms, uint64_t* token);
/* Grants now or fails with ASN_CONFLICT. */
ASN_C_API asn_status asn_try_lock(asn_session* session, const void* file, size_t file_len,
                                  const asn_range* ranges, size_t n_ranges, asn_lock_mode mode,
                                  uint64_t* token);
ASN_C_API asn_status asn_unlock(asn_session* session, const void* file, size_t file_len,
                                const asn_range* ranges, size_t n_ranges);
ASN_C_API asn_status asn_downgrade(asn_session* session, const void* file, size_t file_len,
                                   const asn_range* ranges, size_t n_ranges);

/* Cancels every asn_lock, asn_lock_strided and asn_lock_acquire of this session that is
 * waiting when it is called (from any other thread): each returns ASN_CANCELLED promptly and
 * its request is withdrawn from asnd (nothing granted, nothing left waiting). Calls that start
 * waiting afterwards are not affected. Not concurrently with asn_session_close. */
ASN_C_API asn_status asn_lock_cancel(asn_session* session);

/* A lock handle: a granted lock that remembers its file, ranges and fencing token, so that it
 * is unlocked or downgraded without repeating them.
 *
 *   asn_lock_handle* lock;
 *   asn_range whole = {0, ASN_TO_EOF};
 *   if (asn_lock_acquire(session, "inode:4711", 10, &whole, 1, ASN_LOCK_EXCLUSIVE, 5000, &lock)
 *       == ASN_OK) {
 *     write_tagged(asn_lock_handle_token(lock));
 *     asn_unlock_handle(lock);
 *     asn_lock_handle_free(lock);
 *   }
 *
 * Ownership: the caller owns the handle and frees it with asn_lock_handle_free, which frees
 * memory only: a lock still held stays held until asn_unlock_handle, or until its session
 * closes or is lost. The handle keeps the session's state alive, so freeing it after
 * asn_session_close is fine (its calls then fail with ASN_SESSION_LOST or
 * ASN_FAILED_PRECONDITION). Threads: a handle is used by one thread at a time (as a FILE*
 * without locking); different handles of one session may be used from different threads. */
typedef struct asn_lock_handle asn_lock_handle;

/* As asn_lock / asn_try_lock; on ASN_OK *handle is the lock, else NULL. */
ASN_C_API asn_status asn_lock_acquire(asn_session* session, const void* file, size_t file_len,
                                      const asn_range* ranges, size_t n_ranges, asn_lock_mode mode,
                                      int64_t timeout_ms, asn_lock_handle** handle);
ASN_C_API asn_status asn_try_lock_acquire(asn_session* session, const void* file, size_t file_len,
                                          const asn_range* ranges, size_t n_ranges,
                                          asn_lock_mode mode, asn_lock_handle** handle);
/* Unlocks the handle's ranges. A second unlock fails with ASN_FAILED_PRECONDITION. */
ASN_C_API asn_status asn_unlock_handle(asn_lock_handle* handle);
/* Exclusive -> shared on the handle's ranges, same token. */
ASN_C_API asn_status asn_downgrade_handle(asn_lock_handle* handle);
/* The fencing token of the grant (0 for NULL). */
ASN_C_API uint64_t asn_lock_handle_token(const asn_lock_handle* handle);
/* Frees the handle (NULL: nothing); does not unlock. */
ASN_C_API void asn_lock_handle_free(asn_lock_handle* handle);

#ifdef __cplusplus
}
#endif

#endif /* ASN_CLIENT_ASNCLIENT_H */
