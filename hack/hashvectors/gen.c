/*
 * Reference vectors for pkg/routecore's block hashing, computed with the official
 * xxHash C library (libxxhash, XXH3_64bits_withSeed) — an implementation
 * independent of the Go XXH3 package the plugin uses.
 *
 * Build and run with hack/hashvectors/generate.sh; it writes
 * pkg/routecore/testdata/hashvectors.json.
 *
 * Inputs are generated deterministically (a 64-bit LCG), so the file can be
 * regenerated and diffed.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

static uint64_t lcg_state = 0x9E3779B97F4A7C15ull;
static uint32_t next_u32(void) {
	lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(lcg_state >> 32);
}

static void le32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void le64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }

/* Raw XXH3-64 with seed over byte strings of many lengths, covering every internal
 * code path (0, 1-3, 4-8, 9-16, 17-128, 129-240, >240 with 1 and several stripes
 * and blocks). */
static void raw_vectors(void) {
	static const size_t lens[] = {0, 1, 3, 4, 8, 9, 16, 17, 64, 128, 129, 200, 240, 241, 255, 256, 1000, 1024, 2048, 4099, 16384};
	static const uint64_t seeds[] = {0, 1, 1337, 0xFFFFFFFFFFFFFFFFull, 0x8000000000000000ull};
	static uint8_t buf[16384];
	printf("  \"raw\": [\n");
	int first = 1;
	for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
		for (size_t i = 0; i < lens[li]; i++) buf[i] = (uint8_t)(next_u32() & 0xFF);
		for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++) {
			uint64_t h = XXH3_64bits_withSeed(buf, lens[li], seeds[si]);
			printf("%s    {\"hex\": \"", first ? "" : ",\n");
			for (size_t i = 0; i < lens[li]; i++) printf("%02x", buf[i]);
			printf("\", \"seed\": \"%llu\", \"hash\": \"%llu\"}", (unsigned long long)seeds[si], (unsigned long long)h);
			first = 0;
		}
	}
	printf("\n  ],\n");
}

static uint64_t salt_seed(const char *lora, const char *ns) {
	uint64_t seed = 1337;
	if (lora && *lora) seed += XXH3_64bits_withSeed(lora, strlen(lora), 0);
	if (ns && *ns) seed += XXH3_64bits_withSeed(ns, strlen(ns), 1);
	return seed;
}

/* Whole-request block hashes: local hash per full block (or eagle window) and the
 * sequence chain seq0 = local0, seqi = XXH3(le64(seq_{i-1}) || le64(local_i), 1337). */
static void block_case(int first, size_t ntok, size_t bs, const char *lora, const char *ns, int eagle) {
	static uint32_t toks[8192];
	static uint8_t bytes[4 * 8192];
	for (size_t i = 0; i < ntok; i++) toks[i] = next_u32() % 200000u;
	if (ntok > 0 && ntok % 7 == 0) toks[0] = 0xFFFFFFFFu; /* exercise the top of the u32 range */
	uint64_t seed = salt_seed(lora, ns);
	size_t width = bs + (eagle ? 1 : 0);
	size_t nblocks = eagle ? (ntok == 0 ? 0 : (ntok - 1) / bs) : ntok / bs;
	printf("%s    {\"blockSize\": %zu, \"lora\": \"%s\", \"namespace\": \"%s\", \"eagle\": %s, \"seed\": \"%llu\", \"tokens\": [",
	       first ? "" : ",\n", bs, lora, ns, eagle ? "true" : "false", (unsigned long long)seed);
	for (size_t i = 0; i < ntok; i++) printf("%s%u", i ? "," : "", toks[i]);
	printf("], \"blocks\": [");
	uint64_t parent = 0;
	for (size_t b = 0; b < nblocks; b++) {
		for (size_t i = 0; i < width; i++) le32(bytes + 4 * i, toks[b * bs + i]);
		uint64_t local = XXH3_64bits_withSeed(bytes, 4 * width, seed);
		uint64_t seq = local;
		if (b > 0) {
			uint8_t pair[16];
			le64(pair, parent);
			le64(pair + 8, local);
			seq = XXH3_64bits_withSeed(pair, 16, 1337);
		}
		parent = seq;
		printf("%s[\"%llu\",\"%llu\"]", b ? "," : "", (unsigned long long)local, (unsigned long long)seq);
	}
	printf("]}");
}

int main(void) {
	printf("{\n  \"generator\": \"hack/hashvectors/gen.c with libxxhash %d.%d.%d\",\n",
	       XXH_VERSION_MAJOR, XXH_VERSION_MINOR, XXH_VERSION_RELEASE);
	raw_vectors();
	printf("  \"blocks\": [\n");
	static const size_t bss[] = {1, 2, 4, 16, 32, 60, 61, 64, 128};
	static const char *loras[] = {"", "my-adapter", "", "llama-3-8b-instruct-lora-finance"};
	static const char *nss[] = {"", "", "tenant-a", "team/ns:1"};
	int first = 1;
	for (size_t bi = 0; bi < sizeof bss / sizeof bss[0]; bi++) {
		for (size_t si = 0; si < 4; si++) {
			for (int eagle = 0; eagle < 2; eagle++) {
				size_t ntok = bss[bi] * 5 + (bi + si) % 3;
				block_case(first, ntok, bss[bi], loras[si], nss[si], eagle);
				first = 0;
			}
		}
	}
	printf("\n  ]\n}\n");
	return 0;
}
