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

/* As text "    LABEL name name..." ("none" when empty); a JSON array of the names. */
static void kcoll_ctl_info_bits(struct kcoll_ctl *ctl, const char *label, uint64_t mask,
				kcoll_ctl_bit_str_fn str)
{
	char buf[16];
	unsigned int bit;

	kcoll_ctl_text(ctl, "    %s", label);
	if (!mask)
		kcoll_ctl_text(ctl, " none");
	kcoll_ctl_arr_begin(ctl, label);
	for (bit = 0; bit < 64; bit++) {
		if (mask & (1ULL << bit))
			kcoll_ctl_str(ctl, KCOLL_CTL_ANY, NULL, " %s",
				      kcoll_ctl_bit_name(str, bit, buf, sizeof(buf)));
	}
	kcoll_ctl_arr_end(ctl);
	kcoll_ctl_nl(ctl);
}

static int kcoll_ctl_info_print(struct kcoll_ctl *ctl, const struct kcoll_info *info)
{
	kcoll_ctl_doc_begin(ctl, false);
	kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "version", "kcoll %s", info->version);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "abi_version", " abi %" PRIu64, info->abi_version);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "ndevices", " ndevices %" PRIu64, info->ndevices);
	kcoll_ctl_nl(ctl);
	kcoll_ctl_info_bits(ctl, "features", info->features, kcoll_feature_str);
	kcoll_ctl_info_bits(ctl, "ioctls", info->ioctls, kcoll_ioctl_str);
	kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "library_version", "    library %s\n", kcoll_version());
	return kcoll_ctl_doc_end(ctl);
}

static int kcoll_ctl_info_show(struct kcoll_ctl *ctl, int argc, char **argv)
{
	struct kcoll_info info;
	int ret;

	if (argc)
		return kcoll_ctl_extra_arg(&kcoll_ctl_info_obj, "info show", argv[0]);
	ret = kcoll_ctl_info_get(ctl, &info);
	if (ret)
		return ret;
	return kcoll_ctl_info_print(ctl, &info);
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
