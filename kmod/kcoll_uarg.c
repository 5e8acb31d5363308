// SPDX-License-Identifier: GPL-2.0
/*
 * Extensible ioctl arguments: every kcoll argument struct starts with a __u32 size, and the
 * kernel and the caller may have been built with different sizes of it.  These helpers apply
 * the rules of include/uapi/linux/kcoll.h once, so no ioctl handler repeats them.
 */
#include <linux/minmax.h>
#include <linux/uaccess.h>

#include "kcoll.h"

/*
 * Larger than any argument will ever be; stops a caller from making us scan megabytes of its
 * memory for a non-zero tail.
 */
#define KCOLL_UARG_MAX	PAGE_SIZE

/**
 * kcoll_uarg_copy_in - read a size-prefixed ioctl argument
 * @karg:	kernel copy, @ksize bytes; bytes the caller did not send are zeroed
 * @ksize:	sizeof the kernel's struct
 * @min_size:	first published size of the struct (KCOLL_*_SIZE_VER0)
 * @uarg:	user pointer
 * @usize:	returns the caller's size, for kcoll_uarg_copy_out()
 *
 * Return: 0, -EFAULT, -EINVAL (size below @min_size) or -E2BIG (a non-zero byte this kernel
 * does not understand, or an absurd size).
 */
int kcoll_uarg_copy_in(void *karg, size_t ksize, size_t min_size, void __user *uarg,
		       u32 *usize)
{
	u32 size;

	if (get_user(size, (u32 __user *)uarg))
		return -EFAULT;
	if (size < min_size)
		return -EINVAL;
	if (size > KCOLL_UARG_MAX)
		return -E2BIG;
	*usize = size;
	return copy_struct_from_user(karg, ksize, uarg, size);
}

/**
 * kcoll_uarg_copy_out - write an argument back, no more than the caller's struct holds
 * @uarg:	user pointer
 * @usize:	the caller's size from kcoll_uarg_copy_in()
 * @karg:	kernel copy; every byte of it must have been set (no stack garbage leaks)
 * @ksize:	sizeof the kernel's struct
 */
int kcoll_uarg_copy_out(void __user *uarg, u32 usize, const void *karg, size_t ksize)
{
	if (copy_to_user(uarg, karg, min_t(size_t, usize, ksize)))
		return -EFAULT;
	return 0;
}
