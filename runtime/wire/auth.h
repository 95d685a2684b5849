/* Job keys and the challenge–response every TCP connection starts with
 * (DESIGN §9). A site key (a file only its owner can read) authorizes jobs:
 * job_key = HMAC-SHA-256(site_key, "msg-job-key-v1" || job id). The server
 * sends a nonce; the client answers with its own nonce and a MAC over both,
 * its role, host and job; the server proves the key back. libsodium. */
#ifndef MSG_WIRE_AUTH_H
#define MSG_WIRE_AUTH_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/frame.h"

#define AUTH_KEY_LEN 32

int auth_init(void); /* sodium_init; 0 on success */
void auth_random(void *buf, size_t len);
/* Reads a key file: exactly 32 raw bytes or 64 hex digits, owned by the
 * caller and not readable by group or others. On error returns -1 and puts
 * the reason in why. */
int auth_load_key(const char *path, uint8_t key[AUTH_KEY_LEN], char *why, size_t whylen);
/* Writes a fresh random key file with mode 0600. */
int auth_write_key(const char *path, const uint8_t key[AUTH_KEY_LEN]);
void auth_job_key(uint8_t out[AUTH_KEY_LEN], const uint8_t site[AUTH_KEY_LEN], uint64_t job);

/* Client side: fill a->mac for challenge `srv_nonce` (a->role, host, job,
 * nonce set by the caller). */
void auth_client_mac(struct f_auth *a, const uint8_t key[AUTH_KEY_LEN],
		     const uint8_t srv_nonce[FRAME_NONCE_LEN]);
bool auth_check_client(const struct f_auth *a, const uint8_t key[AUTH_KEY_LEN],
		       const uint8_t srv_nonce[FRAME_NONCE_LEN]);
void auth_server_mac(uint8_t mac[FRAME_MAC_LEN], const uint8_t key[AUTH_KEY_LEN],
		     const uint8_t cli_nonce[FRAME_NONCE_LEN], const uint8_t srv_nonce[FRAME_NONCE_LEN]);
bool auth_check_server(const uint8_t mac[FRAME_MAC_LEN], const uint8_t key[AUTH_KEY_LEN],
		       const uint8_t cli_nonce[FRAME_NONCE_LEN], const uint8_t srv_nonce[FRAME_NONCE_LEN]);

#endif
