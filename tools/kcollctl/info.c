// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl info: what the loaded module is and what it can do (KCOLL_IOC_GET_INFO).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <libkcoll.h>

#include "kcollctl.h"

typedef const char *(*kcoll_ctl_bit_str_fn)(unsigned int bit);

static void kcoll_ctl_info_usage(FILE *f)
{
	fputs("Usage: kcollctl info [ show ]\n"
	      "       kcollctl info help\n", f);
}

/* Why GET_INFO itself failed, beyond strerror(): the likely misconfiguration. */
static const char *kcoll_ctl_info_hint(int err)
{
	switch (err) {
	case ENOTTY:
		return " (is it the kcoll device?)";
	case EINVAL:
	case E2BIG:
		return " (kcollctl and the module disagree on the uAPI)";
	default:
		return "";
	}
}

static int kcoll_ctl_info_get(struct kcoll_ctl *ctl, struct kcoll_info *info)
{
	KCOLL_OPTS(kcoll_open_opts, opts, .dev_path = ctl->dev_path);
	struct kcoll_handle *h;
	int err;

	err = kcoll_open(&opts, &h);
	if (err)
		return kcoll_ctl_err("cannot open %s: %s%s", ctl->dev_path, strerror(-err),
				     kcoll_ctl_hint(-err));
	err = kcoll_get_info(h, info);
	kcoll_close(h);
	if (err)
		return kcoll_ctl_err("%s: KCOLL_IOC_GET_INFO failed: %s%s", ctl->dev_path,
				     strerror(-err), kcoll_ctl_info_hint(-err));
	return KCOLL_CTL_OK;
}

/* Name of bit @bit, or "bitN" for one this kcollctl does not know (a newer module). */
static const char *kcoll_ctl_bit_name(kcoll_ctl_bit_str_fn str, unsigned int bit,
				      char *buf, size_t len)
{
	const char *name = str(bit);

	if (name)
		return name;
	snprintf(buf, len, "bit%u", bit);
	return buf;
}

static void kcoll_ctl_info_bits_plain(const char *label, uint64_t mask,
				      kcoll_ctl_bit_str_fn str)
{
	char buf[16];
	unsigned int bit;

	printf("    %s", label);
	if (!mask)
		fputs(" none", stdout);
	for (bit = 0; bit < 64; bit++) {
		if (mask & (1ULL << bit))
			printf(" %s", kcoll_ctl_bit_name(str, bit, buf, sizeof(buf)));
	}
	putchar('\n');
}

static void kcoll_ctl_info_bits_json(struct kcoll_jw *jw, const char *key, uint64_t mask,
				     kcoll_ctl_bit_str_fn str)
{
	char buf[16];
	unsigned int bit;

	kcoll_jw_key(jw, key);
	kcoll_jw_arr_open(jw);
	for (bit = 0; bit < 64; bit++) {
		if (mask & (1ULL << bit))
			kcoll_jw_str(jw, kcoll_ctl_bit_name(str, bit, buf, sizeof(buf)));
	}
	kcoll_jw_arr_close(jw);
}

static int kcoll_ctl_info_json(struct kcoll_ctl *ctl, const struct kcoll_info *info)
{
	struct kcoll_jw *jw = &ctl->jw;

	kcoll_ctl_json_begin(ctl);
	kcoll_jw_obj_open(jw);
	kcoll_jw_kv_str(jw, "version", info->version);
	kcoll_jw_kv_uint(jw, "abi_version", info->abi_version);
	kcoll_jw_kv_uint(jw, "ndevices", info->ndevices);
	kcoll_ctl_info_bits_json(jw, "features", info->features, kcoll_feature_str);
	kcoll_ctl_info_bits_json(jw, "ioctls", info->ioctls, kcoll_ioctl_str);
	kcoll_jw_kv_str(jw, "library_version", kcoll_version());
	kcoll_jw_obj_close(jw);
	return kcoll_ctl_json_end(ctl);
}

static void kcoll_ctl_info_plain(const struct kcoll_info *info)
{
	printf("kcoll %s abi %u ndevices %u\n", info->version, info->abi_version,
	       info->ndevices);
	kcoll_ctl_info_bits_plain("features", info->features, kcoll_feature_str);
	kcoll_ctl_info_bits_plain("ioctls", info->ioctls, kcoll_ioctl_str);
	printf("    library %s\n", kcoll_version());
}

static int kcoll_ctl_info_show(struct kcoll_ctl *ctl, int argc, char **argv)
{
	struct kcoll_info info;
	int ret;

	if (argc)
		return kcoll_ctl_usage_err(&kcoll_ctl_info_obj,
					   "info show: unexpected argument \"%s\"", argv[0]);
	ret = kcoll_ctl_info_get(ctl, &info);
	if (ret)
		return ret;
	if (ctl->json)
		return kcoll_ctl_info_json(ctl, &info);
	kcoll_ctl_info_plain(&info);
	return KCOLL_CTL_OK;
}

static const struct kcoll_ctl_cmd kcoll_ctl_info_cmds[] = {
	{ "show",	kcoll_ctl_info_show },
	{ NULL,		NULL },
};

const struct kcoll_ctl_obj kcoll_ctl_info_obj = {
	.name		= "info",
	.summary	= "module version, ABI and capabilities",
	.cmds		= kcoll_ctl_info_cmds,
	.usage		= kcoll_ctl_info_usage,
};
