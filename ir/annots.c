/* annots.c — the @annotation table (annots.def) and its type checks. */
#include "ir.h"

#include <string.h>

typedef enum AnnKind {
	AK_INT, AK_BOOL, AK_NUMBER, AK_BYTES, AK_TIME, AK_STRING, AK_DEVICE,
	AK_ROLE, AK_SPLITCAT, AK_INTLIST, AK_COST, AK_DEVLIST, AK_SHARES,
	AK_SYNC, AK_PAIR,
} AnnKind;

static const struct {
	const char *key;
	AnnKind kind;
} anns[ANN_COUNT] = {
#define ANN(id, key, kind, doc) [ANN_##id] = {key, kind},
#include "annots.def"
#undef ANN
};

static const char *const roles[ROLE_COUNT] = {
	[ROLE_NONE] = "none", [ROLE_INPUT] = "input", [ROLE_PARAM] = "param",
	[ROLE_FWD] = "fwd", [ROLE_BWD] = "bwd", [ROLE_UPDATE] = "update",
	[ROLE_LOSS] = "loss",
};

const char *ann_key(AnnKey k)
{
	return anns[k].key;
}

const char *role_name(Role r)
{
	return (unsigned)r < ROLE_COUNT ? roles[r] : "?";
}

Role role_parse(const char *s)
{
	for (int r = 1; r < ROLE_COUNT; r++)
		if (strcmp(s, roles[r]) == 0)
			return (Role)r;
	return ROLE_NONE;
}

static bool is_word(const Value *v)
{
	return v->kind == V_STR || v->kind == V_IDENT;
}

static bool is_time(const Value *v)
{
	double x;
	if (v->kind == V_QTY)
		return v->unit == UNIT_SECONDS && v->f >= 0;
	return (v->kind == V_INT || v->kind == V_FLOAT) && val_number(v, &x) &&
	       x >= 0;
}

static bool check_device(const Graph *g, const Value *v, char *msg, size_t n)
{
	if (!is_word(v)) {
		snprintf(msg, n, "expected a device name string");
		return false;
	}
	if (g->cluster && cluster_find_device(g->cluster, v->s) < 0) {
		snprintf(msg, n, "unknown device '%s' (not in cluster '%s')",
			 v->s, g->cluster->name);
		return false;
	}
	return true;
}

/* A list of distinct devices, or (a pipeline's micro-batches, @micro) k
 * distinct devices repeated whole, in the same order. */
static bool check_devlist(const Graph *g, const Value *v, char *msg, size_t n)
{
	if (v->kind != V_LIST || v->list.n == 0) {
		snprintf(msg, n, "expected a non-empty list of devices");
		return false;
	}
	uint32_t k = 1;
	while (k < v->list.n && is_word(v->list.items[k]) &&
	       is_word(v->list.items[0]) &&
	       strcmp(v->list.items[k]->s, v->list.items[0]->s))
		k++;
	for (uint32_t i = 0; i < v->list.n; i++) {
		if (!check_device(g, v->list.items[i], msg, n))
			return false;
		bool ok = i < k || (v->list.n % k == 0 &&
				    strcmp(v->list.items[i - k]->s,
					   v->list.items[i]->s) == 0);
		for (uint32_t j = 0; j < i && j < k && i < k; j++)
			ok &= strcmp(v->list.items[j]->s, v->list.items[i]->s) != 0;
		if (!ok) {
			snprintf(msg, n, "device '%s' listed twice (only a "
				 "pipeline's list of devices repeats, whole)",
				 v->list.items[i]->s);
			return false;
		}
	}
	return true;
}

/* A split category, or a list of them (one per output). */
static bool check_splitcat(const Value *v, char *msg, size_t n)
{
	SplitCat sc;
	if (is_word(v) && splitcat_parse(v->s, &sc))
		return true;
	if (v->kind == V_LIST && v->list.n > 0) {
		uint32_t i = 0;
		while (i < v->list.n && is_word(v->list.items[i]) &&
		       splitcat_parse(v->list.items[i]->s, &sc))
			i++;
		if (i == v->list.n)
			return true;
	}
	snprintf(msg, n, "expected a split category (concat, sum or none), "
		 "or a list of them, one per output");
	return false;
}

/* A time, or a dict of times per device type. */
static bool check_cost(const Value *v, char *msg, size_t n)
{
	if (is_time(v))
		return true;
	if (v->kind == V_DICT) {
		for (uint32_t i = 0; i < v->dict.n; i++)
			if (!is_time(v->dict.items[i].val)) {
				snprintf(msg, n,
					 "expected a time for device type '%s'",
					 v->dict.items[i].key);
				return false;
			}
		return true;
	}
	snprintf(msg, n,
		 "expected a time or a dict of times per device type");
	return false;
}

static bool check(const Graph *g, AnnKind kind, const Value *v, char *msg,
		  size_t n)
{
	double x;
	switch (kind) {
	case AK_INT:
		if (v->kind == V_INT)
			return true;
		snprintf(msg, n, "expected an integer");
		return false;
	case AK_BOOL:
		if (v->kind == V_BOOL)
			return true;
		snprintf(msg, n, "expected true or false");
		return false;
	case AK_NUMBER:
		if ((v->kind == V_INT || v->kind == V_FLOAT) &&
		    val_number(v, &x) && x >= 0)
			return true;
		snprintf(msg, n, "expected a non-negative number");
		return false;
	case AK_BYTES:
		if ((v->kind == V_QTY && v->unit == UNIT_BYTES && v->f >= 0) ||
		    (v->kind == V_INT && v->i >= 0))
			return true;
		snprintf(msg, n, "expected a size in bytes (e.g. 4MiB)");
		return false;
	case AK_TIME:
		if (is_time(v))
			return true;
		snprintf(msg, n, "expected a time (e.g. 12us)");
		return false;
	case AK_STRING:
		if (is_word(v))
			return true;
		snprintf(msg, n, "expected a string");
		return false;
	case AK_DEVICE:
		return check_device(g, v, msg, n);
	case AK_DEVLIST:
		return check_devlist(g, v, msg, n);
	case AK_SHARES:
		if (v->kind == V_LIST && v->list.n > 0) {
			uint32_t i = 0;
			while (i < v->list.n && v->list.items[i]->kind == V_INT &&
			       v->list.items[i]->i > 0)
				i++;
			if (i == v->list.n)
				return true;
		}
		snprintf(msg, n, "expected a list of positive batch shares");
		return false;
	case AK_SYNC:
		if (is_word(v) && (strcmp(v->s, "ring") == 0 ||
				   strcmp(v->s, "hier") == 0 ||
				   strcmp(v->s, "ps") == 0 ||
				   strcmp(v->s, "sfb") == 0))
			return true;
		snprintf(msg, n, "expected ring, hier, ps or sfb");
		return false;
	case AK_PAIR:
		if (v->kind == V_LIST && v->list.n == 2 &&
		    v->list.items[0]->kind == V_INT &&
		    v->list.items[1]->kind == V_INT &&
		    v->list.items[0]->i >= 0 && v->list.items[1]->i >= 0)
			return true;
		snprintf(msg, n, "expected a pair of non-negative integers [a, b]");
		return false;
	case AK_ROLE:
		if (is_word(v) && role_parse(v->s) != ROLE_NONE)
			return true;
		snprintf(msg, n,
			 "expected a role: input, param, fwd, bwd, update or loss");
		return false;
	case AK_SPLITCAT:
		return check_splitcat(v, msg, n);
	case AK_INTLIST:
		if (v->kind == V_LIST) {
			for (uint32_t i = 0; i < v->list.n; i++)
				if (v->list.items[i]->kind != V_INT ||
				    v->list.items[i]->i < 0) {
					snprintf(msg, n,
						 "expected a list of dimension indices");
					return false;
				}
			return true;
		}
		snprintf(msg, n, "expected a list of dimension indices");
		return false;
	case AK_COST:
		return check_cost(v, msg, n);
	}
	return true;
}

bool ann_check(const Graph *g, const char *key, const Value *v, char *msg,
	       size_t n)
{
	for (int k = 0; k < ANN_COUNT; k++)
		if (strcmp(anns[k].key, key) == 0)
			return check(g, anns[k].kind, v, msg, n);
	return true; /* unknown @keys are kept as they are */
}
