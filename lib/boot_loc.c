// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll bootstrap: locality, what a rank tells the others about where it runs (lib/
 * bootstrap.c has the overview).  Every rank sends its record in its hello, the root hands
 * the whole table to every rank, and each passes it to KCOLL_IOC_COMM_CREATE, which derives
 * the host, NIC and leaf groups (core/kcoll_locality.c).  Documentation/admin-guide.rst
 * describes the topology file and KCOLL_TOPO.
 *
 * The host identity is a hash of the boot id and of the network namespace: ranks in two
 * containers of one machine (two network namespaces) do not share a host as far as kcoll is
 * concerned, and peers never see the raw boot id.
 */
#include <sys/stat.h>

#include "bootstrap.h"

/* Labels: "leaf", "rack" and "pod"; values of these characters only. */
#define KCOLL_LABEL_MAX		63
#define KCOLL_TOPO_FILE_DEFAULT	"/etc/kcoll/topology"
#define KCOLL_TOPO_LINE_MAX	256

/* A non-zero 64-bit hash of @what (a domain) and @len bytes of @data. */
static uint64_t kcoll_loc_hash(const char *what, const void *data, size_t len, uint64_t salt)
{
	unsigned char s[8];
	uint64_t h;

	put_be64(s, salt);
	h = kcoll_fnv1a(KCOLL_FNV_BASIS, what, strlen(what) + 1);
	h = kcoll_fnv1a(h, s, sizeof(s));
	h = kcoll_fnv1a(h, data, len);
	return h ? h : 1;
}

void kcoll_loc_put(unsigned char *p, const struct kcoll_rank_locality *l)
{
	memset(p, 0, KCOLL_BOOT_LOC_LEN);
	put_be16(p, KCOLL_BOOT_LOC_VERSION);
	put_be16(p + 2, KCOLL_BOOT_LOC_LEN);
	put_be32(p + 4, (uint32_t)l->numa_node);
	put_be64(p + 8, l->host);
	put_be64(p + 16, l->nic);
	put_be64(p + 24, l->leaf);
	put_be64(p + 32, l->rack);
	put_be64(p + 40, l->pod);
}

int kcoll_loc_get(const unsigned char *p, size_t len, struct kcoll_rank_locality *l)
{
	static const unsigned char zero[KCOLL_BOOT_LOC_LEN - 48];

	memset(l, 0, sizeof(*l));
	if (len < 4)
		return -EPROTO;
	if (get_be16(p) != KCOLL_BOOT_LOC_VERSION)
		return -EPROTONOSUPPORT;
	if (get_be16(p + 2) != KCOLL_BOOT_LOC_LEN || len < KCOLL_BOOT_LOC_LEN ||
	    memcmp(p + 48, zero, sizeof(zero)))
		return -EPROTO;
	l->numa_node = (int32_t)get_be32(p + 4);
	l->host = get_be64(p + 8);
	l->nic = get_be64(p + 16);
	l->leaf = get_be64(p + 24);
	l->rack = get_be64(p + 32);
	l->pod = get_be64(p + 40);
	/* A NIC without a host, or a NUMA node below -1: no writer of this version makes it. */
	if (l->numa_node < -1 || (l->nic && !l->host)) {
		memset(l, 0, sizeof(*l));
		return -EPROTO;
	}
	return 0;
}

/* One "key=value" (@len bytes at @s, trimmed) into @l; @where names it for the message. */
static int kcoll_loc_label(const char *s, size_t len, struct kcoll_rank_locality *l,
			   const char *where)
{
	static const char *const keys[] = { "leaf", "rack", "pod" };
	__u64 *dst[] = { &l->leaf, &l->rack, &l->pod };
	const char *eq;
	size_t klen, vlen, i;

	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	eq = memchr(s, '=', len);
	if (!eq)
		return kcoll_fail(-EINVAL, "%s: \"%.*s\" is not key=value", where,
				  (int)(len > 64 ? 64 : len), s);
	klen = eq - s;
	vlen = len - klen - 1;
	for (i = 0; i < 3; i++) {
		if (strlen(keys[i]) == klen && !memcmp(s, keys[i], klen))
			break;
	}
	if (i == 3)
		return kcoll_fail(-EINVAL, "%s: unknown key \"%.*s\" (known: leaf, rack, pod)",
				  where, (int)(klen > 32 ? 32 : klen), s);
	if (!vlen || vlen > KCOLL_LABEL_MAX ||
	    strspn(eq + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-")
	    < vlen)
		return kcoll_fail(-EINVAL, "%s: bad %s label (1 to %d of A-Z a-z 0-9 . _ : -)",
				  where, keys[i], KCOLL_LABEL_MAX);
	*dst[i] = kcoll_loc_hash(keys[i], eq + 1, vlen, 0);
	return 0;
}

/*
 * The admin labels: the topology file (@path, a NULL @path: the default, absent is fine),
 * then @env ("leaf=a,rack=b"), whose keys win.  -EINVAL (or the file's errno) with a message.
 */
int kcoll_loc_labels(const char *path, const char *env, struct kcoll_rank_locality *l)
{
	char line[KCOLL_TOPO_LINE_MAX + 2], where[300];
	const char *file = path ? path : KCOLL_TOPO_FILE_DEFAULT, *s, *end;
	unsigned int lineno = 0;
	size_t len;
	FILE *f;
	int err;

	f = fopen(file, "re");
	if (!f && (path || errno != ENOENT))
		return kcoll_fail(-errno, "topology file %.200s: %s", file, strerror(errno));
	while (f && fgets(line, sizeof(line), f)) {
		lineno++;
		len = strlen(line);
		if (len && line[len - 1] == '\n') {
			line[--len] = '\0';
		} else if (!feof(f)) {
			fclose(f);
			return kcoll_fail(-EINVAL, "topology file %.200s:%u: line longer than %d",
					  file, lineno, KCOLL_TOPO_LINE_MAX);
		}
		s = line + strspn(line, " \t\r");
		if (!*s || *s == '#')
			continue;
		snprintf(where, sizeof(where), "topology file %.200s:%u", file, lineno);
		err = kcoll_loc_label(s, strlen(s), l, where);
		if (err) {
			fclose(f);
			return err;
		}
	}
	if (f)
		fclose(f);
	for (s = env; s && *s; s = *end ? end + 1 : end) {
		end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		err = kcoll_loc_label(s, end - s, l, "KCOLL_TOPO");
		if (err)
			return err;
	}
	return 0;
}

/* The name of the interface that holds @self's address, or "" (wildcard, not local). */
static void kcoll_loc_ifname(const struct kcoll_sockaddr *self, char *name, size_t len)
{
	struct ifaddrs *ifa, *i;
	struct kcoll_sockaddr k;

	name[0] = '\0';
	if (getifaddrs(&ifa))
		return;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || kcoll_ksa_from_sockaddr(i->ifa_addr, &k) ||
		    k.family != self->family ||
		    memcmp(k.addr, self->addr, k.family == AF_INET ? 4 : 16))
			continue;
		snprintf(name, len, "%s", i->ifa_name);
		break;
	}
	freeifaddrs(ifa);
}

/* This process's record, for the rank whose address is @self. */
int kcoll_loc_self(const struct kcoll_sockaddr *self, struct kcoll_rank_locality *l)
{
	char boot_id[64], ifname[IF_NAMESIZE + 1];
	unsigned int cpu, node;
	const char *path;
	struct stat st;
	ssize_t n = -1;
	int fd, err;

	memset(l, 0, sizeof(*l));
	path = kcoll_getenv("KCOLL_TOPO_FILE");
	err = kcoll_loc_labels(path, kcoll_getenv("KCOLL_TOPO"), l);
	if (err)
		return err;
	l->numa_node = getcpu(&cpu, &node) ? -1 : (int32_t)node;
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, boot_id, sizeof(boot_id));
		close(fd);
	}
	/* No boot id or no namespace: the host stays unknown (0), and so does the NIC. */
	if (n < 32 || stat("/proc/self/ns/net", &st))
		return 0;
	l->host = kcoll_loc_hash("host", boot_id, n, (uint64_t)st.st_ino);
	kcoll_loc_ifname(self, ifname, sizeof(ifname));
	if (ifname[0])
		l->nic = kcoll_loc_hash("nic", ifname, strlen(ifname), l->host);
	return 0;
}
