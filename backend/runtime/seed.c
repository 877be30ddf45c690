/* seed.c — deterministic initial values (docs/backends.md, "Initial
 * values").
 *
 * Element i of the whole tensor named N gets the 64-bit hash
 *   splitmix64(fnv1a64(N) ^ seed·φ + (i + 1)·φ),   φ = 0x9E3779B97F4A7C15,
 * so its value depends only on the original name, the seed and the
 * element's place in the unsplit tensor.  A tensor that is rows
 * [begin, begin + size) of the whole along batch_dim maps each of its own
 * elements to the whole tensor's index first; every plan of one graph
 * therefore starts from the same numbers.
 *   INPUT    U(-1, 1): (hash >> 11)·2^-52 - 1
 *   PARAM    U(-a, a), a = sqrt(6 / (fan_in + fan_out)) (Glorot uniform,
 *            TensorFlow's default for dense and convolution kernels);
 *            fans: [in, out]; [kh, kw, in, out] → kh·kw·in, kh·kw·out;
 *            rank 1 [n] → n, n; rank 0 → 1, 1
 *   LABELS   hash mod classes
 *   ZEROS    0
 *   CONST    the given values (one value fills the tensor); none: INPUT */
#include "rt_internal.h"

#include <math.h>
#include <string.h>

#define PHI 0x9E3779B97F4A7C15ull

uint64_t pcc_seed_hash(const char *name, uint64_t seed, uint64_t index)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	uint64_t z = (h ^ seed * PHI) + (index + 1) * PHI;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double pcc_seed_uniform(const char *name, uint64_t seed, uint64_t index)
{
	return (double)(pcc_seed_hash(name, seed, index) >> 11) * 0x1.0p-52 - 1.0;
}

static double glorot(const pcc_buf *b)
{
	double fin = 1, fout = 1;
	if (b->rank == 1)
		fin = fout = (double)b->dims[0];
	else if (b->rank >= 2) {
		double rf = 1;
		for (int i = 0; i < b->rank - 2; i++)
			rf *= (double)b->dims[i];
		fin = rf * (double)b->dims[b->rank - 2];
		fout = rf * (double)b->dims[b->rank - 1];
	}
	return fin + fout > 0 ? sqrt(6.0 / (fin + fout)) : 1.0;
}

static void put(pcc_buf *b, int64_t i, double v)
{
	switch (b->dt) {
	case PCC_F32: ((float *)b->data)[i] = (float)v; break;
	case PCC_I32: ((int32_t *)b->data)[i] = (int32_t)v; break;
	case PCC_I64: ((int64_t *)b->data)[i] = (int64_t)v; break;
	case PCC_BOOL: ((uint8_t *)b->data)[i] = v != 0; break;
	}
}

void pcc_buf_init(pcc_buf *b, const pcc_seed *s, uint64_t seed)
{
	if (s->kind == PCC_INIT_NONE || s->kind == PCC_INIT_ZEROS) {
		memset(b->data, 0, (size_t)b->numel * rt_dtype_size(b->dt));
		return;
	}
	if (s->kind == PCC_INIT_CONST && s->nvalues > 0) {
		if (s->nvalues != 1 && s->nvalues != b->numel)
			rt_fatal("constant '%s' has %lld values for %lld elements",
				 b->name, (long long)s->nvalues, (long long)b->numel);
		for (int64_t i = 0; i < b->numel; i++)
			put(b, i, s->values[s->nvalues == 1 ? 0 : i]);
		return;
	}
	if (s->kind == PCC_INIT_LABELS && s->classes < 1)
		rt_fatal("labels '%s' need at least one class", b->name);
	/* outer x rows x inner, rows being this tensor's slice of the batch */
	int64_t outer = 1, rows = 1, inner = 1;
	int bd = s->batch_dim;
	if (bd >= 0 && bd < b->rank) {
		for (int i = 0; i < bd; i++)
			outer *= b->dims[i];
		rows = b->dims[bd];
		for (int i = bd + 1; i < b->rank; i++)
			inner *= b->dims[i];
		if (s->begin < 0 || (outer > 1 && s->full < s->begin + rows))
			rt_fatal("'%s': rows [%lld, %lld) outside a batch of %lld",
				 b->name, (long long)s->begin,
				 (long long)(s->begin + rows), (long long)s->full);
	} else {
		bd = -1;
		inner = b->numel;
	}
	double scale = s->kind == PCC_INIT_PARAM ? glorot(b) : 1.0;
	for (int64_t i = 0; i < b->numel; i++) {
		uint64_t whole = (uint64_t)i;
		if (bd >= 0) {
			int64_t o = i / (rows * inner), r = i / inner % rows,
				k = i % inner;
			whole = (uint64_t)((o * s->full + s->begin + r) * inner + k);
		}
		if (s->kind == PCC_INIT_LABELS)
			put(b, i, (double)(pcc_seed_hash(s->name, seed, whole) %
					   (uint64_t)s->classes));
		else
			put(b, i, scale * pcc_seed_uniform(s->name, seed, whole));
	}
}
