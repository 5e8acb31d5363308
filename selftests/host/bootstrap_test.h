/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the test_bootstrap_* programs: ranks run as forked processes with their
 * results in shared memory, the environment cleared of every launcher variable, and the
 * bootstrap wire format written by hand for fake peers.  None of them use the harness.
 */
#ifndef _BOOTSTRAP_TEST_H
#define _BOOTSTRAP_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../lib/libkcoll_internal.h"

#define MAXR		16
#define LOOPBACK	"127.0.0.1"

struct rank_result {
	int done;
	int err;
	uint64_t comm_id;
	unsigned char secret[KCOLL_SECRET_LEN];
	int64_t elapsed_ms;
	struct kcoll_sockaddr table[MAXR];
	char msg[KCOLL_ERRMSG_MAX];
	struct kcoll_env_conf conf;
};

int64_t now_ms(void);
/* Results written by forked ranks, read by the test. */
struct rank_result *shared_results(int n);
/* Fills @res (and frees @table): the outcome of one rank's bootstrap call. */
void record(struct rank_result *res, int err, uint64_t comm_id,
	    struct kcoll_sockaddr *table, int nranks, int64_t start);
/* One rank of a unique-id rendezvous, in this process. */
void run_uid_rank(const struct kcoll_unique_id *id, int nranks, int rank,
		  const struct kcoll_comm_opts *opts, struct rank_result *res);
/* The same in a child process; @distinct: advertise "127.0.0.<rank+1>", port 1000 + rank. */
pid_t spawn_uid_rank(const struct kcoll_unique_id *id, int nranks, int rank,
		     unsigned int timeout_ms, bool distinct, struct rank_result *res);
/* Waits for the children in @pids (<= 0: none); the number that did not exit with 0. */
int wait_all(pid_t *pids, int n);
int get_uid(struct kcoll_unique_id *id, const char *addr, unsigned int timeout_ms,
	    struct kcoll_uid_info *info);
/* Unsets every variable a launcher or the library's environment table reads. */
void clear_env(void);
/* A port nobody listens on right now (the kernel's choice, then released). */
int free_port(void);
int connect_port(int port);

/* The wire format, big endian (lib/boot_codec.c). */
void put32(unsigned char *p, uint32_t v);
void put16(unsigned char *p, uint16_t v);
void put64(unsigned char *p, uint64_t v);
uint32_t get32(const unsigned char *p);
void make_hdr(unsigned char *p, uint16_t version, uint16_t type, uint32_t len);
/* A well-formed hello from 127.0.0.1. */
void make_hello(unsigned char *p, uint64_t comm_id, uint32_t rank, uint32_t nranks);
/*
 * Bytes until EOF or reset (the root closes with our unread bytes queued: RST after its
 * answer); the count, -1 on timeout.
 */
int drain(int fd, unsigned char *buf, size_t len);
/*
 * A fake peer: connect to @port, send @len bytes of @buf, read what comes back (into @reply,
 * up to @cap bytes, if not NULL) until the root closes.  Returns the bytes read, or -1 when
 * it could not connect or the root neither answered nor closed.
 */
int fake_peer(int port, const unsigned char *buf, size_t len, unsigned char *reply,
	      size_t cap);
/* Every rank of @res received the same table. */
bool all_same_table(struct rank_result *res, int n);

#endif /* _BOOTSTRAP_TEST_H */
