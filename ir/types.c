/* types.c — tensor element types and shapes. */
#include "ir.h"

#include <string.h>

static const struct {
	const char *name;
	int size;
} dtypes[DT_COUNT] = {
	[DT_F16] = {"f16", 2}, [DT_BF16] = {"bf16", 2},
	[DT_F32] = {"f32", 4}, [DT_F64] = {"f64", 8},
	[DT_I8] = {"i8", 1},   [DT_I16] = {"i16", 2},
	[DT_I32] = {"i32", 4}, [DT_I64] = {"i64", 8},
	[DT_U8] = {"u8", 1},   [DT_BOOL] = {"bool", 1},
};

const char *dtype_name(DType dt)
{
	return (unsigned)dt < DT_COUNT ? dtypes[dt].name : "?";
}

int dtype_size(DType dt)
{
	return (unsigned)dt < DT_COUNT ? dtypes[dt].size : 0;
}

bool dtype_parse(const char *s, size_t n, DType *out)
{
	for (int i = 0; i < DT_COUNT; i++)
		if (strlen(dtypes[i].name) == n && memcmp(dtypes[i].name, s, n) == 0) {
			*out = (DType)i;
			return true;
		}
	return false;
}

int64_t type_numel(const Type *t)
{
	int64_t n = 1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] < 0)
			return -1;
		if (t->dims[i] && n > INT64_MAX / t->dims[i])
			return -1;
		n *= t->dims[i];
	}
	return n;
}

int64_t type_bytes(const Type *t)
{
	int64_t n = type_numel(t);
	if (n < 0 || n > INT64_MAX / 8)
		return -1;
	return n * dtype_size(t->dt);
}

bool type_in_range(const Type *t)
{
	/* bytes so far, each factor <= 2^40 and the product kept <= 2^53:
	 * no step overflows */
	int64_t b = dtype_size(t->dt);
	bool known = true;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] > PCC_DIM_MAX)
			return false;
		if (t->dims[i] < 0) {
			known = false;
			continue;
		}
		if (t->dims[i] && b > PCC_BYTES_MAX / t->dims[i])
			b = PCC_BYTES_MAX + 1;
		else
			b *= t->dims[i];
	}
	return !known || b <= PCC_BYTES_MAX;
}

bool type_known(const Type *t)
{
	return type_numel(t) >= 0;
}

bool type_eq(const Type *a, const Type *b)
{
	if (a->dt != b->dt || a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

Type type_make(Arena *a, DType dt, int rank, const int64_t *dims)
{
	Type t = {dt, rank, NULL};
	if (rank > 0) {
		t.dims = arena_alloc(a, sizeof(int64_t) * (size_t)rank);
		if (dims)
			memcpy(t.dims, dims, sizeof(int64_t) * (size_t)rank);
	}
	return t;
}

char *type_str(const Type *t, char *buf, size_t n)
{
	size_t k = 0;
	int w = snprintf(buf, n, "%s[", dtype_name(t->dt));
	k = w > 0 ? (size_t)w : 0;
	for (int i = 0; i < t->rank && k < n; i++) {
		if (t->dims[i] < 0)
			w = snprintf(buf + k, n - k, "%s?", i ? "," : "");
		else
			w = snprintf(buf + k, n - k, "%s%lld", i ? "," : "",
				     (long long)t->dims[i]);
		k += w > 0 ? (size_t)w : 0;
	}
	if (k < n)
		snprintf(buf + k, n - k, "]");
	return buf;
}
