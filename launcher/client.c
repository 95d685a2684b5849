#include "client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int dial(const char *hostport, char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	char host[256];
	const char *colon = strrchr(hostport, ':');
	int fd, one = 1, err;

	if (!colon || colon == hostport || colon - hostport >= (long)sizeof(host)) {
		snprintf(why, whylen, "'%s' is not HOST:PORT", hostport);
		return -1;
	}
	memcpy(host, hostport, colon - hostport);
	host[colon - hostport] = 0;
	err = getaddrinfo(host, colon + 1, &hints, &ai);
	if (err) {
		snprintf(why, whylen, "cannot resolve %s: %s", hostport, gai_strerror(err));
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		snprintf(why, whylen, "cannot connect to msgd at %s: %s", hostport, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int client_send(struct client *c, const struct frame *f)
{
	size_t len;
	uint8_t *buf = frame_encode_alloc(f, &len), *p = buf;

	if (!buf)
		return -1;
	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	free(buf);
	return 0;
}

int client_fill(struct client *c)
{
	ssize_t n;

	if (c->used) {
		memmove(c->buf, c->buf + c->used, c->len - c->used);
		c->len -= c->used;
		c->used = 0;
	}
	if (c->cap - c->len < 65536) {
		size_t cap = c->cap ? c->cap * 2 : 262144;
		uint8_t *b = realloc(c->buf, cap);

		if (!b)
			return -1;
		c->buf = b;
		c->cap = cap;
	}
	n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0)
		return -1;
	c->len += (size_t)n;
	return 0;
}

int client_next(struct client *c, struct frame *f, char *why, size_t whylen)
{
	struct frame_hdr h;
	int err;

	if (c->used) {
		memmove(c->buf, c->buf + c->used, c->len - c->used);
		c->len -= c->used;
		c->used = 0;
	}
	err = frame_decode_hdr(c->buf, c->len, &h);
	if (err == FE_SHORT)
		return 0;
	if (!err && c->len < FRAME_HDR_LEN + (size_t)h.len)
		return 0;
	if (!err)
		err = frame_decode_body(&h, c->buf + FRAME_HDR_LEN, f);
	if (err) {
		snprintf(why, whylen, "malformed frame from msgd: %s", frame_strerror(err));
		return -1;
	}
	c->used = FRAME_HDR_LEN + h.len;
	return 1;
}

int client_wait(struct client *c, struct frame *f, int timeout_ms, char *why, size_t whylen)
{
	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int ret = client_next(c, f, why, whylen);

		if (ret)
			return ret;
		ret = poll(&p, 1, timeout_ms);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret == 0)
			return 0;
		if (ret < 0 || client_fill(c)) {
			snprintf(why, whylen, "connection to msgd lost");
			return -1;
		}
	}
}

int client_open(struct client *c, const char *hostport, uint64_t job,
		const uint8_t key[AUTH_KEY_LEN], char *why, size_t whylen)
{
	struct frame f, a = { .h.type = F_AUTH };

	memset(c, 0, sizeof(*c));
	c->fd = dial(hostport, why, whylen);
	if (c->fd < 0)
		return -1;
	if (client_wait(c, &f, 10000, why, whylen) != 1 || f.h.type != F_CHALLENGE) {
		snprintf(why, whylen, "msgd at %s sent no challenge", hostport);
		goto fail;
	}
	a.u.auth.role = ROLE_CONTROL;
	a.u.auth.job = job;
	auth_random(a.u.auth.nonce, FRAME_NONCE_LEN);
	auth_client_mac(&a.u.auth, key, f.u.challenge.nonce);
	if (client_send(c, &a)) {
		snprintf(why, whylen, "cannot send to msgd at %s", hostport);
		goto fail;
	}
	{
		uint8_t srv[FRAME_NONCE_LEN];

		memcpy(srv, f.u.challenge.nonce, sizeof(srv));
		if (client_wait(c, &f, 10000, why, whylen) != 1 || f.h.type != F_AUTH_OK ||
		    !auth_check_server(f.u.auth_ok.mac, key, a.u.auth.nonce, srv)) {
			snprintf(why, whylen, "msgd at %s refused the job key (wrong site key?)",
				 hostport);
			goto fail;
		}
	}
	return 0;
fail:
	client_close(c);
	return -1;
}

void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = c->used = 0;
}
