// SPDX-License-Identifier: GPL-2.0-only
/*
 * Helpers shared by the host tests; see kcoll_test.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kcoll_test.h"

#ifndef KCOLLCTL_BUILD_PATH
#error "KCOLLCTL_BUILD_PATH must name the kcollctl binary of this tree"
#endif

int kcoll_test_mkdtemp(char *buf, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(buf, len, "%s/kcoll-host.XXXXXX", tmp) >= len)
		return -ENAMETOOLONG;
	return mkdtemp(buf) ? 0 : -errno;
}

static int kcoll_test_rm_one(const char *path, const struct stat *st, int type,
			     struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

int kcoll_test_rmtree(const char *dir)
{
	/* FTW_DEPTH: children first; FTW_PHYS: never follow a link out of the tree. */
	return nftw(dir, kcoll_test_rm_one, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

/* mkdir -p of @root/@rel, @root itself must exist. */
int kcoll_test_mkdir(const char *root, const char *rel)
{
	char path[PATH_MAX], *p;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	for (p = path + strlen(root) + 1; ; p++) {
		if (*p != '/' && *p)
			continue;
		if (p[-1] != '/') {
			char c = *p;

			*p = '\0';
			if (mkdir(path, 0755) && errno != EEXIST)
				return -errno;
			*p = c;
		}
		if (!*p)
			return 0;
	}
}

int kcoll_test_write(const char *root, const char *rel, const char *content)
{
	char path[PATH_MAX], dir[PATH_MAX], *slash;
	size_t len = strlen(content);
	int fd, err = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	strcpy(dir, rel);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		err = kcoll_test_mkdir(root, dir);
		if (err)
			return err;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, content, len) != (ssize_t)len)
		err = -EIO;
	close(fd);
	return err;
}

static int kcoll_test_dev_attr(const char *root, const char *dev, const char *attr,
			       const char *val)
{
	char rel[PATH_MAX];

	if (!val)
		return 0;
	snprintf(rel, sizeof(rel), "devices/%s/%s", dev, attr);
	return kcoll_test_write(root, rel, val);
}

int kcoll_test_add_dev(const char *root, const struct kcoll_test_dev *d)
{
	char rel[PATH_MAX];
	int err;

	snprintf(rel, sizeof(rel), "devices/%s", d->name);
	err = kcoll_test_mkdir(root, rel);
	if (!err)
		err = kcoll_test_dev_attr(root, d->name, "node_type", d->node_type);
	if (!err)
		err = kcoll_test_dev_attr(root, d->name, "ports", d->ports);
	if (!err)
		err = kcoll_test_dev_attr(root, d->name, "allowed", d->allowed);
	if (!err)
		err = kcoll_test_dev_attr(root, d->name, "node_guid", d->node_guid);
	return err;
}

/* An anonymous file holding @data, rewound: the child's stdin. */
static int kcoll_test_memfd(const char *name, const char *data)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	size_t len = data ? strlen(data) : 0;

	if (fd < 0)
		return -errno;
	if (len && write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void kcoll_test_child_env(const char *const *env)
{
	for (; env && *env; env++) {
		if (strchr(*env, '='))
			putenv((char *)*env);
		else
			unsetenv(*env);
	}
}

/* In the child: wire up fds 0-2 and exec; never returns. */
static void kcoll_test_child(const struct kcoll_test_cmd *cmd, int in, int out, int err)
{
	if (cmd->stdout_path) {
		close(out);
		out = open(cmd->stdout_path, O_WRONLY);
		if (out < 0)
			_exit(126);
	}
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(126);
	kcoll_test_child_env(cmd->env);
	execvp(cmd->argv[0], (char *const *)cmd->argv);
	_exit(127);
}

/* Read what the child wrote to memfd @fd into @buf, NUL terminated. */
static void kcoll_test_slurp(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
}

static int kcoll_test_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int kcoll_test_run(const struct kcoll_test_cmd *cmd, struct kcoll_test_proc *proc)
{
	int in, out, err, status, ret = 0;
	pid_t pid;

	memset(proc, 0, sizeof(*proc));
	/* memfds rather than pipes: no deadlock however much the child writes. */
	in = kcoll_test_memfd("kcoll-in", cmd->input);
	out = kcoll_test_memfd("kcoll-out", NULL);
	err = kcoll_test_memfd("kcoll-err", NULL);
	if (in < 0 || out < 0 || err < 0) {
		ret = -EMFILE;
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto out;
	}
	if (!pid)
		kcoll_test_child(cmd, in, out, err);
	if (waitpid(pid, &status, 0) < 0) {
		ret = -errno;
		goto out;
	}
	proc->status = kcoll_test_status(status);
	kcoll_test_slurp(out, proc->out, sizeof(proc->out));
	kcoll_test_slurp(err, proc->err, sizeof(proc->err));
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	return ret;
}

const char *kcoll_test_kcollctl(void)
{
	const char *path = getenv("KCOLLCTL");

	return path && *path ? path : KCOLLCTL_BUILD_PATH;
}
