// SPDX-License-Identifier: GPL-2.0-only
/*
 * selftests/lib/kcoll_siphash.h, the userspace SipHash-2-4 that test peers use to speak
 * kcoll's connect handshake, must compute what the kernel's siphash() does: the reference
 * vectors the kernel checks itself with (lib/test_siphash.c in Linux 6.1, from
 * https://github.com/veorq/SipHash: key 00..0f, input 00..len-1), and the MAC input layout
 * of kmod/kcoll_wire.h.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stddef.h>
#include <string.h>

#include "kselftest_harness.h"
#include "../lib/kcoll_siphash.h"

static const uint64_t vectors[64] = {
	0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL,
	0x85676696d7fb7e2dULL, 0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL,
	0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL, 0x93f5f5799a932462ULL,
	0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
	0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL,
	0xa129ca6149be45e5ULL, 0x3f2acc7f57c29bdbULL, 0x699ae9f52cbe4794ULL,
	0x4bc1b3f0968dd39cULL, 0xbb6dc91da77961bdULL, 0xbed65cf21aa2ee98ULL,
	0xd0f2cbb02e3b67c7ULL, 0x93536795e3a33e88ULL, 0xa80c038ccd5ccec8ULL,
	0xb8ad50c6f649af94ULL, 0xbce192de8a85b8eaULL, 0x17d835b85bbb15f3ULL,
	0x2f2e6163076bcfadULL, 0xde4daaaca71dc9a5ULL, 0xa6a2506687956571ULL,
	0xad87a3535c49ef28ULL, 0x32d892fad841c342ULL, 0x7127512f72f27cceULL,
	0xa7f32346f95978e3ULL, 0x12e0b01abb051238ULL, 0x15e034d40fa197aeULL,
	0x314dffbe0815a3b4ULL, 0x027990f029623981ULL, 0xcadcd4e59ef40c4dULL,
	0x9abfd8766a33735cULL, 0x0e3ea96b5304a7d0ULL, 0xad0c42d6fc585992ULL,
	0x187306c89bc215a9ULL, 0xd4a60abcf3792b95ULL, 0xf935451de4f21df2ULL,
	0xa9538f0419755787ULL, 0xdb9acddff56ca510ULL, 0xd06c98cd5c0975ebULL,
	0xe612a3cb9ecba951ULL, 0xc766e62cfcadaf96ULL, 0xee64435a9752fe72ULL,
	0xa192d576b245165aULL, 0x0a8787bf8ecb74b2ULL, 0x81b3e73d20b49b6fULL,
	0x7fa8220ba3b2eceaULL, 0x245731c13ca42499ULL, 0xb78dbfaf3a8d83bdULL,
	0xea1ad565322a1a0bULL, 0x60e61c23a3795013ULL, 0x6606d7e446282b93ULL,
	0x6ca4ecb15c5f91e1ULL, 0x9f626da15c9625f3ULL, 0xe51b38608ef25f57ULL,
	0x958a324ceb064572ULL
};

TEST(reference_vectors)
{
	unsigned char key[16], in[64];
	int i;

	for (i = 0; i < 16; i++)
		key[i] = i;
	for (i = 0; i < 64; i++)
		in[i] = i;
	for (i = 0; i < 64; i++)
		EXPECT_EQ(vectors[i], kcoll_siphash_secret(in, i, key)) TH_LOG("length %d", i);
}

TEST(wire_layout)
{
	EXPECT_EQ(KCOLL_WIRE_HELLO_SIZE, sizeof(struct kcoll_wire_hello));
	EXPECT_GE(56, sizeof(struct kcoll_wire_hello));	/* IB CM REQ private data */
	EXPECT_EQ(KCOLL_WIRE_MAC_LEN, offsetof(struct kcoll_wire_hello, mac));
	EXPECT_EQ(KCOLL_WIRE_MAC_LEN - 4, offsetof(struct kcoll_wire_hello, reserved1));
	EXPECT_EQ(KCOLL_WIRE_ACCEPT_SIZE, sizeof(struct kcoll_wire_accept));
	EXPECT_EQ(4, KCOLL_PROTO_VERSION);
	/* Version 4's BYE count stands where version 3 sent reserved zeros. */
	EXPECT_EQ(8, offsetof(struct kcoll_wire_bye, taken));
	EXPECT_EQ(KCOLL_WIRE_FIXED_SIZE, sizeof(struct kcoll_wire_bye));
}

/* The tag replaces reserved1, big endian; the rest of the hello is covered as sent. */
TEST(mac_input)
{
	struct kcoll_wire_hello h = {
		.magic = htonl(KCOLL_WIRE_MAGIC), .version = KCOLL_PROTO_VERSION,
		.comm_id = htobe64(0x0123456789abcdefULL), .src_rank = htonl(1),
		.dst_rank = htonl(0), .nranks = htonl(2), .mac = htobe64(~0ULL),
	};
	unsigned char in[KCOLL_WIRE_MAC_LEN], want[KCOLL_WIRE_MAC_LEN];
	unsigned char secret[16] = { 1 }, other[16] = { 2 };
	uint32_t tag = htonl(KCOLL_WIRE_TAG_ACCEPT);
	uint64_t mac;

	memcpy(want, &h, sizeof(want));
	memcpy(want + 28, &tag, 4);
	kcoll_wire_mac_input(&h, KCOLL_WIRE_TAG_ACCEPT, in);
	EXPECT_EQ(0, memcmp(want, in, sizeof(in)));
	/* Hello and accept MACs differ; so do those of two secrets, or two ranks. */
	EXPECT_NE(kcoll_wire_mac_user(&h, KCOLL_WIRE_TAG_HELLO, secret),
		  kcoll_wire_mac_user(&h, KCOLL_WIRE_TAG_ACCEPT, secret));
	EXPECT_NE(kcoll_wire_mac_user(&h, KCOLL_WIRE_TAG_HELLO, secret),
		  kcoll_wire_mac_user(&h, KCOLL_WIRE_TAG_HELLO, other));
	mac = kcoll_wire_mac_user(&h, KCOLL_WIRE_TAG_HELLO, secret);
	h.src_rank = htonl(2);
	EXPECT_NE(mac, kcoll_wire_mac_user(&h, KCOLL_WIRE_TAG_HELLO, secret));
	/* The mac field itself is not covered. */
	h.src_rank = htonl(1);
	h.mac = 0;
	EXPECT_EQ(mac, kcoll_wire_mac_user(&h, KCOLL_WIRE_TAG_HELLO, secret));
}

TEST_HARNESS_MAIN
