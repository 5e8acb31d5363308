// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll bootstrap: randomness, addresses and the unique id's encoding (lib/bootstrap.c
 * has the overview).
 */
#include "bootstrap.h"

int kcoll_random_bytes(void *buf, size_t len)
{
	ssize_t n;

	do {
		n = getrandom(buf, len, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* A random 64-bit value that is not 0. */
int kcoll_random_u64(uint64_t *v)
{
	int err;

	do {
		err = kcoll_random_bytes(v, sizeof(*v));
	} while (!err && *v == 0);
	return err;
}

/* Addresses ------------------------------------------------------------------------------ */

int kcoll_ksa_from_sockaddr(const struct sockaddr *sa, struct kcoll_sockaddr *k)
{
	memset(k, 0, sizeof(*k));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		k->family = AF_INET;
		k->port = ntohs(sin->sin_port);
		memcpy(k->addr, &sin->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

		k->port = ntohs(sin6->sin6_port);
		/* A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d. */
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			k->family = AF_INET;
			memcpy(k->addr, &sin6->sin6_addr.s6_addr[12], 4);
			return 0;
		}
		k->family = AF_INET6;
		k->scope_id = sin6->sin6_scope_id;
		memcpy(k->addr, &sin6->sin6_addr, 16);
		return 0;
	}
	return -EAFNOSUPPORT;
}

socklen_t kcoll_ksa_to_sockaddr(const struct kcoll_sockaddr *k,
				struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (k->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(k->port);
		memcpy(&sin->sin_addr, k->addr, 4);
		return sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(k->port);
		sin6->sin6_scope_id = k->scope_id;
		memcpy(&sin6->sin6_addr, k->addr, 16);
		return sizeof(*sin6);
	}
}

const char *kcoll_sockaddr_str(const struct kcoll_sockaddr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (a->family == AF_INET && inet_ntop(AF_INET, a->addr, ip, sizeof(ip)))
		snprintf(buf, len, "%s:%u", ip, a->port);
	else if (a->family == AF_INET6 && inet_ntop(AF_INET6, a->addr, ip, sizeof(ip)) &&
		 a->scope_id)
		snprintf(buf, len, "[%s%%%u]:%u", ip, a->scope_id, a->port);
	else if (a->family == AF_INET6 && inet_ntop(AF_INET6, a->addr, ip, sizeof(ip)))
		snprintf(buf, len, "[%s]:%u", ip, a->port);
	else
		snprintf(buf, len, "(address family %u)", a->family);
	return buf;
}

/* An IP literal, IPv6 optionally with %scope (interface name or index); port 0. */
int kcoll_parse_ip(const char *s, struct kcoll_sockaddr *k)
{
	char tmp[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	char *pct;

	memset(k, 0, sizeof(*k));
	if (inet_pton(AF_INET, s, k->addr) == 1) {
		k->family = AF_INET;
		return 0;
	}
	if (strlen(s) >= sizeof(tmp))
		return -EINVAL;
	strcpy(tmp, s);
	pct = strchr(tmp, '%');
	if (pct)
		*pct++ = '\0';
	if (inet_pton(AF_INET6, tmp, k->addr) != 1)
		return -EINVAL;
	k->family = AF_INET6;
	if (pct) {
		char *end;
		unsigned long idx = strtoul(pct, &end, 10);

		if (!*pct)
			return -EINVAL;
		if (*end)
			idx = if_nametoindex(pct);
		if (!idx || idx > UINT32_MAX)
			return -EINVAL;
		k->scope_id = idx;
	}
	return 0;
}

/* struct kcoll_sockaddr on the wire: family 4 or 6, never the host's AF_* values. */
void kcoll_wire_put_addr(unsigned char *p, const struct kcoll_sockaddr *k)
{
	memset(p, 0, KCOLL_BOOT_ADDR_LEN);
	put_be16(p, k->family == AF_INET ? 4 : 6);
	put_be16(p + 2, k->port);
	if (k->family == AF_INET) {
		memcpy(p + 8, k->addr, 4);
	} else {
		put_be32(p + 4, k->scope_id);
		memcpy(p + 8, k->addr, 16);
	}
}

int kcoll_wire_get_addr(const unsigned char *p, struct kcoll_sockaddr *k)
{
	static const unsigned char zero[12];
	uint16_t fam = get_be16(p);

	memset(k, 0, sizeof(*k));
	k->port = get_be16(p + 2);
	if (fam == 4) {
		/* Exactly one encoding per address: scope and padding must be zero. */
		if (get_be32(p + 4) || memcmp(p + 12, zero, sizeof(zero)))
			return -EINVAL;
		k->family = AF_INET;
		memcpy(k->addr, p + 8, 4);
		return 0;
	}
	if (fam == 6) {
		k->family = AF_INET6;
		k->scope_id = get_be32(p + 4);
		memcpy(k->addr, p + 8, 16);
		return 0;
	}
	return -EINVAL;
}

bool kcoll_ksa_equal(const struct kcoll_sockaddr *a, const struct kcoll_sockaddr *b)
{
	return a->family == b->family && a->port == b->port && a->scope_id == b->scope_id &&
	       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
}

/* The unique id ---------------------------------------------------------------------------- */

int kcoll_uid_encode(const struct kcoll_uid_info *info, struct kcoll_unique_id *id)
{
	unsigned char *p = id->internal;

	if (!info->comm_id || !info->root.port ||
	    (info->root.family != AF_INET && info->root.family != AF_INET6))
		return -EINVAL;
	memset(id, 0, sizeof(*id));
	memcpy(p, KCOLL_UID_MAGIC, 8);
	put_be16(p + 8, KCOLL_UID_VERSION);
	put_be16(p + 10, info->root.family == AF_INET ? 4 : 6);
	put_be16(p + 12, info->root.port);
	put_be64(p + 16, info->comm_id);
	memcpy(p + KCOLL_UID_SECRET_OFF, info->secret, KCOLL_SECRET_LEN);
	if (info->root.family == AF_INET) {
		memcpy(p + 24, info->root.addr, 4);
	} else {
		memcpy(p + 24, info->root.addr, 16);
		put_be32(p + 40, info->root.scope_id);
	}
	put_be64(p + KCOLL_UID_CSUM_OFF, kcoll_fnv1a(KCOLL_FNV_BASIS, p, KCOLL_UID_CSUM_OFF));
	return 0;
}

int kcoll_uid_decode(const struct kcoll_unique_id *id, struct kcoll_uid_info *info)
{
	static const unsigned char zero[KCOLL_UID_CSUM_OFF];
	const unsigned char *p = id->internal;
	unsigned int ver, fam;

	memset(info, 0, sizeof(*info));
	if (memcmp(p, KCOLL_UID_MAGIC, 8))
		return kcoll_fail(-EINVAL, "not a kcoll unique id (bad magic)");
	ver = get_be16(p + 8);
	if (ver != KCOLL_UID_VERSION)
		return kcoll_fail(-EINVAL, "kcoll unique id version %u is not supported (this "
				  "libkcoll reads version %u)", ver, KCOLL_UID_VERSION);
	if (get_be64(p + KCOLL_UID_CSUM_OFF) !=
	    kcoll_fnv1a(KCOLL_FNV_BASIS, p, KCOLL_UID_CSUM_OFF))
		return kcoll_fail(-EINVAL, "kcoll unique id is corrupted (checksum mismatch)");
	fam = get_be16(p + 10);
	info->comm_id = get_be64(p + 16);
	memcpy(info->secret, p + KCOLL_UID_SECRET_OFF, KCOLL_SECRET_LEN);
	info->root.port = get_be16(p + 12);
	if (fam == 4) {
		info->root.family = AF_INET;
		memcpy(info->root.addr, p + 24, 4);
		if (memcmp(p + 28, zero, 44 - 28))
			fam = 0;
	} else if (fam == 6) {
		info->root.family = AF_INET6;
		memcpy(info->root.addr, p + 24, 16);
		info->root.scope_id = get_be32(p + 40);
	}
	/* A valid checksum over invalid fields: made by a buggy or newer writer. */
	if ((fam != 4 && fam != 6) || !info->root.port || !info->comm_id || get_be16(p + 14) ||
	    memcmp(p + KCOLL_UID_SECRET_OFF + KCOLL_SECRET_LEN, zero,
		   KCOLL_UID_CSUM_OFF - KCOLL_UID_SECRET_OFF - KCOLL_SECRET_LEN)) {
		memset(info, 0, sizeof(*info));
		return kcoll_fail(-EINVAL, "kcoll unique id is malformed");
	}
	return 0;
}
