#include "wire/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int auth_init(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

void auth_random(void *buf, size_t len)
{
	randombytes_buf(buf, len);
}

static int parse_key(const char *txt, size_t n, uint8_t key[AUTH_KEY_LEN])
{
	size_t bin_len = 0;

	while (n && (txt[n - 1] == '\n' || txt[n - 1] == '\r' || txt[n - 1] == ' '))
		n--;
	if (n == AUTH_KEY_LEN) {
		memcpy(key, txt, AUTH_KEY_LEN);
		return 0;
	}
	if (n == 2 * AUTH_KEY_LEN &&
	    !sodium_hex2bin(key, AUTH_KEY_LEN, txt, n, NULL, &bin_len, NULL) &&
	    bin_len == AUTH_KEY_LEN)
		return 0;
	return -1;
}

int auth_load_key(const char *path, uint8_t key[AUTH_KEY_LEN], char *why, size_t whylen)
{
	char buf[2 * AUTH_KEY_LEN + 4];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		snprintf(why, whylen, "cannot open key file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		snprintf(why, whylen, "key file %s must be a regular file owned by uid %d "
			 "with mode 0600 (it has mode %03o, owner %d)", path, (int)geteuid(),
			 (unsigned)(st.st_mode & 0777), (int)st.st_uid);
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0 || parse_key(buf, (size_t)n, key)) {
		snprintf(why, whylen, "key file %s must hold 32 raw bytes or 64 hex digits", path);
		return -1;
	}
	return 0;
}

int auth_write_key(const char *path, const uint8_t key[AUTH_KEY_LEN])
{
	char hex[2 * AUTH_KEY_LEN + 2];
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	size_t len;

	if (fd < 0)
		return -1;
	sodium_bin2hex(hex, sizeof(hex), key, AUTH_KEY_LEN);
	len = strlen(hex);
	hex[len++] = '\n';
	if (write(fd, hex, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

void auth_job_key(uint8_t out[AUTH_KEY_LEN], const uint8_t site[AUTH_KEY_LEN], uint64_t job)
{
	uint8_t msg[14 + 8];

	memcpy(msg, "msg-job-key-v1", 14);
	memcpy(msg + 14, &job, 8);
	crypto_auth_hmacsha256(out, msg, sizeof(msg), site);
}

static void client_mac(uint8_t mac[FRAME_MAC_LEN], const struct f_auth *a,
		       const uint8_t key[AUTH_KEY_LEN], const uint8_t srv[FRAME_NONCE_LEN])
{
	uint8_t msg[11 + 1 + 4 + 8 + 2 * FRAME_NONCE_LEN], *p = msg;

	memcpy(p, "msg-auth-v1", 11), p += 11;
	*p++ = a->role;
	memcpy(p, &a->host, 4), p += 4;
	memcpy(p, &a->job, 8), p += 8;
	memcpy(p, srv, FRAME_NONCE_LEN), p += FRAME_NONCE_LEN;
	memcpy(p, a->nonce, FRAME_NONCE_LEN);
	crypto_auth_hmacsha256(mac, msg, sizeof(msg), key);
}

void auth_client_mac(struct f_auth *a, const uint8_t key[AUTH_KEY_LEN],
		     const uint8_t srv_nonce[FRAME_NONCE_LEN])
{
	client_mac(a->mac, a, key, srv_nonce);
}

bool auth_check_client(const struct f_auth *a, const uint8_t key[AUTH_KEY_LEN],
		       const uint8_t srv_nonce[FRAME_NONCE_LEN])
{
	uint8_t mac[FRAME_MAC_LEN];

	client_mac(mac, a, key, srv_nonce);
	return sodium_memcmp(mac, a->mac, FRAME_MAC_LEN) == 0;
}

void auth_server_mac(uint8_t mac[FRAME_MAC_LEN], const uint8_t key[AUTH_KEY_LEN],
		     const uint8_t cli[FRAME_NONCE_LEN], const uint8_t srv[FRAME_NONCE_LEN])
{
	uint8_t msg[14 + 2 * FRAME_NONCE_LEN];

	memcpy(msg, "msg-auth-ok-v1", 14);
	memcpy(msg + 14, cli, FRAME_NONCE_LEN);
	memcpy(msg + 14 + FRAME_NONCE_LEN, srv, FRAME_NONCE_LEN);
	crypto_auth_hmacsha256(mac, msg, sizeof(msg), key);
}

bool auth_check_server(const uint8_t mac[FRAME_MAC_LEN], const uint8_t key[AUTH_KEY_LEN],
		       const uint8_t cli[FRAME_NONCE_LEN], const uint8_t srv[FRAME_NONCE_LEN])
{
	uint8_t want[FRAME_MAC_LEN];

	auth_server_mac(want, key, cli, srv);
	return sodium_memcmp(want, mac, FRAME_MAC_LEN) == 0;
}
