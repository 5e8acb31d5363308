// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll bootstrap: the environment (rank, size, root address, interface,
 * timeouts) (lib/bootstrap.c has the overview).
 */
#include "bootstrap.h"

/* The environment ---------------------------------------------------------------------------- */

/* getenv(), with an empty value taken as unset (launchers export empty variables). */
const char *kcoll_getenv(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* A decimal number in [min, max]: digits only, no sign, no blanks. */
static int kcoll_parse_ulong(const char *s, unsigned long min, unsigned long max,
			     unsigned long *out)
{
	unsigned long v = 0;
	const char *p;

	if (!*s || strlen(s) > 10)
		return -EINVAL;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int kcoll_env_ulong(const char *name, unsigned long min, unsigned long max,
		    unsigned long *out, bool *set)
{
	const char *v = kcoll_getenv(name);

	if (set)
		*set = v != NULL;
	if (!v)
		return 0;
	if (kcoll_parse_ulong(v, min, max, out))
		return kcoll_fail(-EINVAL, "%s=\"%.64s\" is not a whole number from %lu to %lu",
				  name, v, min, max);
	return 0;
}

/*
 * Where the rank and size come from, in order of precedence: the innermost launcher first.
 * Slurm's come last because they leak into what runs under it: an sbatch script is task 0
 * of its step, and mpirun's daemons started by srun hand their own SLURM_PROCID to every
 * process they start.
 */
static const struct kcoll_env_source {
	const char *name;
	const char *rank;
	const char *size;
	const char *local_rank;
} kcoll_env_sources[] = {
	{ "KCOLL", "KCOLL_RANK", "KCOLL_NRANKS", "KCOLL_LOCAL_RANK" },
	{ "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK" },
	{ "Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	  "OMPI_COMM_WORLD_LOCAL_RANK" },
	{ "MPICH (PMI)", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID" },
	{ "Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID" },
};

/* The job's identity, in order of precedence: ranks of different jobs never mix. */
static const char *const kcoll_env_job_vars[] = {
	"KCOLL_JOB_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID",
};

int kcoll_env_parse(struct kcoll_env_conf *conf)
{
	const struct kcoll_env_source *src = NULL;
	unsigned long rank, size, local, port;
	const char *root, *root_var, *v;
	bool rank_set, size_set, set;
	size_t i;
	int err;

	memset(conf, 0, sizeof(*conf));
	conf->local_rank = -1;
	for (i = 0; i < sizeof(kcoll_env_sources) / sizeof(kcoll_env_sources[0]); i++) {
		rank_set = kcoll_getenv(kcoll_env_sources[i].rank) != NULL;
		size_set = kcoll_getenv(kcoll_env_sources[i].size) != NULL;
		if (rank_set || size_set) {
			src = &kcoll_env_sources[i];
			break;
		}
	}
	if (!src)
		return kcoll_fail(-EINVAL, "no rank in the environment: set KCOLL_RANK and "
				  "KCOLL_NRANKS, or start under torchrun (RANK, WORLD_SIZE), "
				  "Open MPI (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE), "
				  "MPICH (PMI_RANK, PMI_SIZE) or Slurm (SLURM_PROCID, "
				  "SLURM_NTASKS)");
	if (!rank_set || !size_set)
		return kcoll_fail(-EINVAL, "%s is set but %s is not (%s)",
				  rank_set ? src->rank : src->size,
				  rank_set ? src->size : src->rank, src->name);
	err = kcoll_env_ulong(src->size, 1, KCOLL_MAX_RANKS, &size, NULL);
	if (!err)
		err = kcoll_env_ulong(src->rank, 0, KCOLL_MAX_RANKS - 1, &rank, NULL);
	if (err)
		return err;
	if (rank >= size)
		return kcoll_fail(-EINVAL, "%s=%lu is not below %s=%lu", src->rank, rank,
				  src->size, size);
	if (src->local_rank) {
		err = kcoll_env_ulong(src->local_rank, 0, size - 1, &local, &set);
		if (err)
			return err;
		if (set)
			conf->local_rank = (int)local;
	}
	conf->rank = (int)rank;
	conf->nranks = (int)size;
	conf->source = src->name;

	root_var = "KCOLL_BOOTSTRAP_ADDR";
	root = kcoll_getenv(root_var);
	if (!root) {
		root_var = "MASTER_ADDR";
		root = kcoll_getenv(root_var);
	}
	if (!root && size == 1)
		root = "127.0.0.1";	/* alone: nobody else needs to find the root */
	if (!root)
		return kcoll_fail(-EINVAL, "no bootstrap root: set KCOLL_BOOTSTRAP_ADDR or "
				  "MASTER_ADDR to the address of rank 0 (rank %lu of %lu from %s)",
				  rank, size, src->name);
	if (strlen(root) >= sizeof(conf->root_host))
		return kcoll_fail(-EINVAL, "%s is longer than %zu characters", root_var,
				  sizeof(conf->root_host) - 1);
	strcpy(conf->root_host, root);

	/*
	 * torchrun's TCPStore listens on MASTER_PORT itself, so the bootstrap takes the port
	 * after it.
	 */
	err = kcoll_env_ulong("KCOLL_BOOTSTRAP_PORT", 1, 65535, &port, &set);
	if (!err && !set) {
		err = kcoll_env_ulong("MASTER_PORT", 1, 65534, &port, &set);
		if (set)
			port++;
	}
	if (err)
		return err;
	conf->root_port = set ? (unsigned int)port : KCOLL_BOOTSTRAP_PORT_DEFAULT;

	for (i = 0; i < sizeof(kcoll_env_job_vars) / sizeof(kcoll_env_job_vars[0]); i++) {
		v = kcoll_getenv(kcoll_env_job_vars[i]);
		if (v) {
			conf->job_tag = kcoll_fnv1a(kcoll_fnv1a(KCOLL_FNV_BASIS,
							      kcoll_env_job_vars[i],
							      strlen(kcoll_env_job_vars[i]) + 1),
						    v, strlen(v));
			if (!conf->job_tag)
				conf->job_tag = 1;
			break;
		}
	}
	return 0;
}

/* The timeout of the rendezvous: @given if non-zero, else the environment, else default. */
int kcoll_boot_timeout(unsigned int given, unsigned int *out)
{
	unsigned long v;
	bool set;
	int err;

	if (given) {
		*out = given;
		return 0;
	}
	err = kcoll_env_ulong("KCOLL_BOOTSTRAP_TIMEOUT_MS", 1, KCOLL_TIMEOUT_MAX_MS, &v, &set);
	if (err)
		return err;
	*out = set ? (unsigned int)v : KCOLL_BOOTSTRAP_TIMEOUT_MS_DEFAULT;
	return 0;
}

/*
 * The address this rank advertises.  *set false: the local end of the connection to the
 * root, once there is one (the port is already in @self).  @nranks and @local_rank (-1:
 * unknown; KCOLL_LOCAL_RANK_LOOKUP) choose the rail when the interface is a list.
 */
int kcoll_boot_self(const struct kcoll_comm_opts *opts, int nranks, int local_rank,
		    struct kcoll_sockaddr *self, bool *set)
{
	const char *addr, *ifname, *what;
	char rail[IF_NAMESIZE];
	struct ifaddrs *ifa, *i, *v6 = NULL;
	unsigned long port;
	bool port_set;
	int err;

	memset(self, 0, sizeof(*self));
	*set = false;
	port = OPTS_GET(opts, port, 0);
	if (port > 65535)
		return kcoll_fail(-EINVAL, "port %lu is not a TCP/UDP port", port);
	if (!port) {
		err = kcoll_env_ulong("KCOLL_PORT", 0, 65535, &port, &port_set);
		if (err)
			return err;
	}

	what = "addr option";
	addr = OPTS_GET(opts, addr, NULL);
	if (!addr) {
		what = "KCOLL_ADDR";
		addr = kcoll_getenv(what);
	}
	if (addr) {
		if (kcoll_parse_ip(addr, self))
			return kcoll_fail(-EINVAL, "%s \"%.64s\" is not an IP address", what, addr);
		self->port = port;
		*set = true;
		return 0;
	}

	what = "ifname option";
	ifname = OPTS_GET(opts, ifname, NULL);
	if (!ifname) {
		what = "KCOLL_IFNAME";
		ifname = kcoll_getenv(what);
	}
	if (!ifname) {
		self->port = port;
		return 0;
	}
	if (strchr(ifname, ',')) {
		err = kcoll_rail_pick(ifname, what, local_rank, nranks, rail);
		if (err)
			return err;
		ifname = rail;
	}
	if (getifaddrs(&ifa))
		return kcoll_fail(-errno, "getifaddrs: %s", strerror(errno));
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			break;
		if (i->ifa_addr->sa_family == AF_INET6 && !v6)
			v6 = i;
	}
	if (!i)
		i = v6;
	if (i)
		kcoll_ksa_from_sockaddr(i->ifa_addr, self);
	freeifaddrs(ifa);
	if (!i && !if_nametoindex(ifname))
		return kcoll_fail(-ENODEV, "cannot advertise an address of interface %.32s: "
				  "there is no such interface", ifname);
	if (!i)
		return kcoll_fail(-EADDRNOTAVAIL, "cannot advertise an address of interface "
				  "%.32s: it has no IP address", ifname);
	self->port = port;
	*set = true;
	return 0;
}
