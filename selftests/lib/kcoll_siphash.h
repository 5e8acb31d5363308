/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SipHash-2-4 for userspace test peers, computing exactly what the kernel's siphash()
 * (lib/siphash.c) does, so that a test program can speak kcoll's connect handshake: the
 * MACs of struct kcoll_wire_hello and struct kcoll_wire_accept (kmod/kcoll_wire.h).
 * Header only; checked against the kernel's test vectors by selftests/host/test_siphash.c.
 *
 * The key is the communicator's 16-byte secret, read as two little-endian u64 (what the
 * kernel does with struct kcoll_comm_create.secret), so results do not depend on the host's
 * byte order.
 */
#ifndef _KCOLL_SIPHASH_H
#define _KCOLL_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#include "../../kmod/kcoll_wire.h"

static inline uint64_t kcoll_sip_rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline uint64_t kcoll_sip_le64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

#define KCOLL_SIPROUND(v0, v1, v2, v3) do {				\
	v0 += v1; v1 = kcoll_sip_rotl(v1, 13); v1 ^= v0; v0 = kcoll_sip_rotl(v0, 32); \
	v2 += v3; v3 = kcoll_sip_rotl(v3, 16); v3 ^= v2;		\
	v0 += v3; v3 = kcoll_sip_rotl(v3, 21); v3 ^= v0;		\
	v2 += v1; v1 = kcoll_sip_rotl(v1, 17); v1 ^= v2; v2 = kcoll_sip_rotl(v2, 32); \
} while (0)

/* SipHash-2-4 of @len bytes at @data under the key (@k0, @k1): the kernel's siphash(). */
static inline uint64_t kcoll_siphash(const void *data, size_t len, uint64_t k0, uint64_t k1)
{
	const unsigned char *p = data;
	uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
	uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
	uint64_t m, b = (uint64_t)len << 56;
	size_t i, left = len & 7;

	for (i = 0; i + 8 <= len; i += 8) {
		m = kcoll_sip_le64(p + i);
		v3 ^= m;
		KCOLL_SIPROUND(v0, v1, v2, v3);
		KCOLL_SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	while (left--)
		b |= (uint64_t)p[i + left] << (8 * left);
	v3 ^= b;
	KCOLL_SIPROUND(v0, v1, v2, v3);
	KCOLL_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (i = 0; i < 4; i++)
		KCOLL_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The same, keyed with a communicator's 16-byte secret. */
static inline uint64_t kcoll_siphash_secret(const void *data, size_t len,
					    const unsigned char secret[16])
{
	return kcoll_siphash(data, len, kcoll_sip_le64(secret), kcoll_sip_le64(secret + 8));
}

/*
 * A connect MAC as the kernel computes it (kcoll_wire_mac()), in host byte order: store it
 * with htobe64() into kcoll_wire_hello.mac (@tag KCOLL_WIRE_TAG_HELLO) or compare it with
 * be64toh(kcoll_wire_accept.mac) (@tag KCOLL_WIRE_TAG_ACCEPT).
 */
static inline uint64_t kcoll_wire_mac_user(const struct kcoll_wire_hello *h, uint32_t tag,
					   const unsigned char secret[16])
{
	unsigned char in[KCOLL_WIRE_MAC_LEN];

	kcoll_wire_mac_input(h, tag, in);
	return kcoll_siphash_secret(in, sizeof(in), secret);
}

#endif /* _KCOLL_SIPHASH_H */
