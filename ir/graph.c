/* graph.c — the in-memory DAG: ops in one arena, a name table, attributes,
 * and the cached analyses every pass shares (consumers, topological order). */
#include "ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

Graph *graph_new(const char *name)
{
	Graph *g = xcalloc(1, sizeof *g);
	g->arena = arena_new();
	interner_init(&g->strs, g->arena);
	g->name = graph_intern(g, name ? name : "main");
	for (int k = 0; k < ANN_COUNT; k++)
		g->ann[k] = graph_intern(g, ann_key((AnnKey)k));
	g->capops = 64;
	g->ops = xmalloc(sizeof(Op *) * g->capops);
	g->names_cap = 128;
	g->names = xcalloc(g->names_cap, sizeof *g->names);
	return g;
}

void graph_invalidate(Graph *g)
{
	g->gen++;
	if (g->uses) {
		free(g->uses->start);
		free(g->uses->use);
		free(g->uses);
		g->uses = NULL;
	}
	free(g->topo);
	g->topo = NULL;
	free(g->folded);
	g->folded = NULL;
}

void graph_free(Graph *g)
{
	if (!g)
		return;
	graph_invalidate(g);
	free(g->ops);
	free(g->names);
	free(g->fresh);
	interner_free(&g->strs);
	arena_free(g->arena);
	free(g);
}

const char *graph_intern(Graph *g, const char *s)
{
	return intern(&g->strs, s);
}

/* ---- name table -------------------------------------------------------
 * Open addressing with linear probing.  A slot holds the op and the output
 * index the name stands for (0: the op's own name, k: out_names[k]) and the
 * name's hash, so probes compare strings only on a hash match. */

#define SLOT_TOMB UINT32_MAX                /* idx of a removed entry */

uint32_t graph_name_hash(const char *s, size_t n)
{
	uint64_t h = hash_bytes(s, n);
	return (uint32_t)(h ^ (h >> 32));
}

#define name_hash graph_name_hash

void graph_prefetch_name(const Graph *g, uint32_t h)
{
	__builtin_prefetch(&g->names[h & (g->names_cap - 1)]);
}

static const char *slot_name(const struct NameSlot *s)
{
	return s->idx ? s->op->out_names[s->idx] : s->op->name;
}

static void names_put(struct NameSlot *t, uint32_t mask, Op *op, uint32_t h,
		      uint32_t idx)
{
	uint32_t j = h & mask;
	while (t[j].op || t[j].idx == SLOT_TOMB)
		j = (j + 1) & mask;
	t[j] = (struct NameSlot){op, h, idx};
}

static void names_grow(Graph *g)
{
	struct NameSlot *old = g->names;
	uint32_t oldcap = g->names_cap, live = 0;
	for (uint32_t i = 0; i < oldcap; i++)
		live += old[i].op != NULL;
	uint32_t cap = 128;
	while (cap < 4 * (uint64_t)(live + 1))
		cap *= 2;
	g->names = xmalloc_huge(sizeof *g->names * cap);
	memset(g->names, 0, sizeof *g->names * cap);
	g->names_cap = cap;
	g->names_used = live;
	for (uint32_t i = 0; i < oldcap; i++)
		if (old[i].op)
			names_put(g->names, cap - 1, old[i].op, old[i].hash,
				  old[i].idx);
	free(old);
}

static struct NameSlot *names_find(const Graph *g, const char *name, size_t n,
				   uint32_t h)
{
	uint32_t mask = g->names_cap - 1;
	for (uint32_t j = h & mask;; j = (j + 1) & mask) {
		struct NameSlot *s = &g->names[j];
		if (!s->op) {
			if (s->idx != SLOT_TOMB)
				return NULL;
			continue;
		}
		if (s->hash == h) {
			const char *t = slot_name(s);
			if (strncmp(t, name, n) == 0 && t[n] == 0)
				return s;
		}
	}
}

/* Registers output idx of op under its name (op->name or out_names[idx]),
 * which must not be taken. */
static void names_insert(Graph *g, Op *op, uint32_t idx, uint32_t h)
{
	if (2 * (uint64_t)(g->names_used + 1) > g->names_cap)
		names_grow(g);
	names_put(g->names, g->names_cap - 1, op, h, idx);
	g->names_used++;
}

Op *graph_lookup_n(const Graph *g, const char *name, size_t n, uint32_t *idx)
{
	struct NameSlot *s = names_find(g, name, n, name_hash(name, n));
	if (!s)
		return NULL;
	if (idx)
		*idx = s->idx;
	return s->op;
}

Op *graph_lookup(const Graph *g, const char *name, uint32_t *idx)
{
	return graph_lookup_n(g, name, strlen(name), idx);
}

/* ---- ops -------------------------------------------------------------- */

Op *graph_add_op_n(Graph *g, const char *name, size_t n, const char *type,
		   uint32_t nin, uint32_t nout)
{
	uint32_t h = name_hash(name, n);
	if (names_find(g, name, n, h))
		return NULL;
	Op *op = arena_alloc(g->arena, sizeof *op);
	op->name = arena_strndup(g->arena, name, n);
	op->type = graph_intern(g, type);
	op->opcode = op_lookup(op->type);
	op->nin = nin;
	op->in = nin ? arena_alloc(g->arena, sizeof(Input) * nin) : NULL;
	op->nout = nout;
	op->out = nout ? arena_alloc(g->arena, sizeof(Type) * nout) : NULL;
	if (g->nops == g->capops) {
		g->capops *= 2;
		g->ops = xrealloc(g->ops, sizeof(Op *) * g->capops);
	}
	op->id = g->nops;
	g->ops[g->nops++] = op;
	names_insert(g, op, 0, h);
	graph_invalidate(g);
	return op;
}

Op *graph_add_op(Graph *g, const char *name, const char *type, uint32_t nin,
		 uint32_t nout)
{
	return graph_add_op_n(g, name, strlen(name), type, nin, nout);
}

static uint32_t fresh_slot(const Graph *g, const char *base)
{
	uint32_t mask = g->fresh_cap - 1;
	uint32_t j = (uint32_t)(((uintptr_t)base >> 4) * 2654435761u) & mask;
	while (g->fresh[j].base && g->fresh[j].base != base)
		j = (j + 1) & mask;
	return j;
}

/* The counter of base in g->fresh (open addressing on the interned
 * pointer), created at 1. */
static uint32_t *fresh_next(Graph *g, const char *base)
{
	if (2 * (g->fresh_n + 1) > g->fresh_cap) {
		struct FreshSlot *old = g->fresh;
		uint32_t oldcap = g->fresh_cap;
		g->fresh_cap = oldcap ? 2 * oldcap : 64;
		g->fresh = xcalloc(g->fresh_cap, sizeof *g->fresh);
		for (uint32_t i = 0; i < oldcap; i++)
			if (old[i].base)
				g->fresh[fresh_slot(g, old[i].base)] = old[i];
		free(old);
	}
	uint32_t j = fresh_slot(g, base);
	if (!g->fresh[j].base) {
		g->fresh[j] = (struct FreshSlot){base, 1};
		g->fresh_n++;
	}
	return &g->fresh[j].next;
}

/* A character gir allows in an op name (gir.md: [A-Za-z0-9_.\-/]). */
static bool name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || strchr("_.-/", ch);
}

/* Suffixes count up per base and are never tried twice, so n fresh names
 * from one base cost O(n) lookups, not O(n^2).  A base built from other
 * names (a device's "box A/gpu0", a TensorFlow node's "a>b") may hold
 * characters an op name cannot: each becomes '_', so that the printed
 * plan parses back. */
const char *graph_fresh_name(Graph *g, const char *base)
{
	size_t bad = 0;
	for (const char *p = base; *p; p++)
		bad += !name_char(*p);
	if (bad || !*base) {
		char *s = arena_strdup(g->arena, *base ? base : "_");
		for (char *p = s; *p; p++)
			if (!name_char(*p))
				*p = '_';
		base = s;
	}
	if (!graph_lookup(g, base, NULL))
		return arena_strdup(g->arena, base);
	uint32_t *next = fresh_next(g, graph_intern(g, base));
	for (;; (*next)++) {
		char *s = arena_printf(g->arena, "%s/%u", base, *next);
		if (!graph_lookup(g, s, NULL))
			return s;
	}
}

bool graph_name_output(Graph *g, Op *op, uint32_t k, const char *name)
{
	size_t n = strlen(name);
	uint32_t h = name_hash(name, n);
	if (k == 0 || k >= op->nout || names_find(g, name, n, h))
		return false;
	if (k > 1 && !(op->out_names && op->out_names[k - 1]))
		return false;
	if (!op->out_names)
		op->out_names = arena_alloc(g->arena, sizeof(char *) * op->nout);
	if (op->out_names[k])
		return false;
	op->out_names[k] = arena_strndup(g->arena, name, n);
	names_insert(g, op, k, h);
	return true;
}

static void names_remove(Graph *g, Op *op, uint32_t idx)
{
	const char *name = idx ? op->out_names[idx] : op->name;
	size_t n = strlen(name);
	struct NameSlot *s = names_find(g, name, n, name_hash(name, n));
	if (s && s->op == op && s->idx == idx)
		*s = (struct NameSlot){NULL, 0, SLOT_TOMB};
}

void graph_remove_op(Graph *g, Op *op)
{
	if (op->dead)
		return;
	names_remove(g, op, 0);
	for (uint32_t k = 1; op->out_names && k < op->nout; k++)
		if (op->out_names[k])
			names_remove(g, op, k);
	op->dead = true;
	graph_invalidate(g);
}

void graph_compact(Graph *g)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		if (!g->ops[i]->dead) {
			g->ops[n] = g->ops[i];
			g->ops[n]->id = n;
			n++;
		}
	g->nops = n;
	graph_invalidate(g);
}

const Uses *graph_uses(Graph *g)
{
	if (g->uses)
		return g->uses;
	Uses *u = xmalloc(sizeof *u);
	u->start = xmalloc_huge(sizeof(uint32_t) * ((size_t)g->nops + 1));
	memset(u->start, 0, sizeof(uint32_t) * ((size_t)g->nops + 1));
	size_t total = 0;
	for (uint32_t i = 0; i < g->nops; i++) {
		Op *op = g->ops[i];
		if (op->dead)
			continue;
		for (uint32_t j = 0; j < op->nin; j++)
			u->start[op->in[j].src->id + 1]++;
		total += op->nin;
	}
	for (uint32_t i = 0; i < g->nops; i++)
		u->start[i + 1] += u->start[i];
	u->use = xmalloc_huge(sizeof(Use) * (total ? total : 1));
	uint32_t *fill = xmalloc(sizeof(uint32_t) * (g->nops + 1));
	memcpy(fill, u->start, sizeof(uint32_t) * (g->nops + 1));
	for (uint32_t i = 0; i < g->nops; i++) {
		Op *op = g->ops[i];
		if (op->dead)
			continue;
		for (uint32_t j = 0; j < op->nin; j++)
			u->use[fill[op->in[j].src->id]++] = (Use){op, j};
	}
	free(fill);
	g->uses = u;
	return u;
}

static uint32_t use_head(const void *arg, uint32_t e)
{
	return ((const Graph *)arg)->uses->use[e].op->id;
}

static bool op_live(const void *arg, uint32_t v)
{
	return !((const Graph *)arg)->ops[v]->dead;
}

void graph_dag(Graph *g, TopoDag *d)
{
	*d = (TopoDag){.n = g->nops, .start = graph_uses(g)->start,
		       .to_fn = use_head, .keep = op_live, .arg = g};
}

#define FOLD_MAX_BYTES (10 << 20)

const uint8_t *graph_folded(Graph *g)
{
	if (g->folded)
		return g->folded;
	const uint32_t *topo = graph_topo(g);
	uint8_t *f = xcalloc((size_t)g->nops + 1, 1);
	uint32_t live = 0;
	for (uint32_t i = 0; topo && i < g->nops; i++)
		live += !g->ops[i]->dead;
	for (uint32_t t = 0; topo && t < live; t++) {
		Op *op = g->ops[topo[t]];
		if (op->opcode == O_Const) {
			f[op->id] = 1;
			continue;
		}
		unsigned fl = op_flags(op);
		if (!op->nin || !op_info(op->opcode) || op->opcode == O_RandomUniform ||
		    (fl & (OPF_SOURCE | OPF_PARAM | OPF_UPDATE | OPF_COMM | OPF_LOSS)))
			continue;
		bool ok = true;
		for (uint32_t j = 0; ok && j < op->nin; j++)
			ok = f[op->in[j].src->id];
		for (uint32_t k = 0; ok && k < op->nout; k++) {
			int64_t b = type_bytes(&op->out[k]);
			ok = b >= 0 && b <= FOLD_MAX_BYTES;
		}
		f[op->id] = ok;
	}
	g->folded = f;
	return f;
}

const uint32_t *graph_topo(Graph *g)
{
	if (g->topo)
		return g->topo;
	uint32_t live = 0;
	for (uint32_t i = 0; i < g->nops; i++)
		live += !g->ops[i]->dead;
	TopoDag d;
	graph_dag(g, &d);
	uint32_t *order = xmalloc_huge(sizeof(uint32_t) * ((size_t)g->nops + 1));
	if (topo_sort(&d, order, NULL) != live) {
		free(order);
		return NULL;
	}
	g->topo = order;
	return order;
}

void graph_replace_uses(Graph *g, Op *from, uint32_t fidx, Op *to,
			uint32_t tidx)
{
	for (uint32_t i = 0; i < g->nops; i++) {
		Op *op = g->ops[i];
		if (op->dead || op == to)
			continue;
		for (uint32_t j = 0; j < op->nin; j++) {
			Input *in = &op->in[j];
			if (in->src != from)
				continue;
			if (in->ctrl)
				in->src = to;
			else if (in->idx == fidx) {
				in->src = to;
				in->idx = tidx;
			}
		}
	}
	graph_invalidate(g);
}

/* ---- attributes ------------------------------------------------------- */

static Value *attr_find(const Attr *a, uint32_t n, const char *key)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i].key == key)
			return a[i].val;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(a[i].key, key) == 0)
			return a[i].val;
	return NULL;
}

static void attr_set(Graph *g, Attr **a, uint32_t *n, uint32_t *cap,
		     const char *key, Value *v)
{
	key = graph_intern(g, key);
	for (uint32_t i = 0; i < *n; i++)
		if ((*a)[i].key == key) {
			(*a)[i].val = v;
			return;
		}
	if (*n == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 4;
		*a = arena_realloc(g->arena, *a, sizeof(Attr) * *cap,
				   sizeof(Attr) * nc);
		*cap = nc;
	}
	(*a)[(*n)++] = (Attr){key, v};
}

Value *op_attr(const Op *op, const char *ikey)
{
	for (uint32_t i = 0; i < op->nattr; i++)
		if (op->attrs[i].key == ikey)
			return op->attrs[i].val;
	return NULL;
}

Value *op_get(const Graph *g, const Op *op, const char *key)
{
	(void)g;
	return attr_find(op->attrs, op->nattr, key);
}

Value *op_ann(const Graph *g, const Op *op, AnnKey k)
{
	return op_attr(op, g->ann[k]);
}

void op_set(Graph *g, Op *op, const char *key, Value *v)
{
	attr_set(g, &op->attrs, &op->nattr, &op->capattr, key, v);
	g->gen++;
}

void op_set_ann(Graph *g, Op *op, AnnKey k, Value *v)
{
	op_set(g, op, g->ann[k], v);
}

/* Multiplies a numeric annotation (@cost, @flops) by f: a number, a
 * quantity (unit kept), or a dict of them per device type (each entry).
 * A new value: values are shared by graph_clone. */
void op_scale_ann(Graph *g, Op *op, AnnKey key, double f)
{
	Value *v = op_ann(g, op, key);
	double x;
	if (!v)
		return;
	if (v->kind == V_DICT) {
		Value *nv = val_dict(g->arena, v->dict.n);
		for (uint32_t i = 0; i < v->dict.n; i++) {
			nv->dict.items[i].key = v->dict.items[i].key;
			nv->dict.items[i].val = val_number(v->dict.items[i].val, &x)
				? val_qty(g->arena, x * f, UNIT_SECONDS)
				: v->dict.items[i].val;
		}
		op_set_ann(g, op, key, nv);
	} else if (val_number(v, &x)) {
		op_set_ann(g, op, key, v->kind == V_QTY
				     ? val_qty(g->arena, x * f, v->unit)
				     : x * f == floor(x * f) && x * f < 9e15
				     ? val_int(g->arena, (int64_t)(x * f))
				     : val_float(g->arena, x * f));
	}
}

bool op_unset(Graph *g, Op *op, const char *key)
{
	key = graph_intern(g, key);
	for (uint32_t i = 0; i < op->nattr; i++)
		if (op->attrs[i].key == key) {
			memmove(&op->attrs[i], &op->attrs[i + 1],
				sizeof(Attr) * (op->nattr - i - 1));
			op->nattr--;
			g->gen++;
			return true;
		}
	return false;
}

Value *graph_attr(const Graph *g, const char *key)
{
	return attr_find(g->attrs, g->nattr, key);
}

void graph_set_attr(Graph *g, const char *key, Value *v)
{
	attr_set(g, &g->attrs, &g->nattr, &g->capattr, key, v);
	g->gen++;
}

int64_t op_get_int(const Graph *g, const Op *op, const char *key, int64_t dflt)
{
	Value *v = op_get(g, op, key);
	if (v && v->kind == V_INT)
		return v->i;
	if (v && (v->kind == V_FLOAT || v->kind == V_QTY))
		return (int64_t)v->f;
	if (v && v->kind == V_BOOL)
		return v->b;
	return dflt;
}

bool op_get_bool(const Graph *g, const Op *op, const char *key, bool dflt)
{
	Value *v = op_get(g, op, key);
	if (v && v->kind == V_BOOL)
		return v->b;
	if (v && v->kind == V_INT)
		return v->i != 0;
	return dflt;
}

const char *op_get_str(const Graph *g, const Op *op, const char *key)
{
	Value *v = op_get(g, op, key);
	if (v && (v->kind == V_STR || v->kind == V_IDENT))
		return v->s;
	return NULL;
}

const char *op_ann_str(const Graph *g, const Op *op, AnnKey k)
{
	Value *v = op_ann(g, op, k);
	if (v && (v->kind == V_STR || v->kind == V_IDENT))
		return v->s;
	return NULL;
}

double op_ann_num(const Graph *g, const Op *op, AnnKey k, double dflt)
{
	double x;
	return val_number(op_ann(g, op, k), &x) ? x : dflt;
}

Graph *graph_clone(const Graph *g)
{
	Graph *h = graph_new(g->name);
	h->src_file = g->src_file ? graph_intern(h, g->src_file) : NULL;
	for (uint32_t i = 0; i < g->nattr; i++)
		graph_set_attr(h, g->attrs[i].key, g->attrs[i].val);
	h->cluster = g->cluster;
	h->comments = g->comments;
	h->ncomments = g->ncomments;
	Op **map = xcalloc((size_t)g->nops + 1, sizeof(Op *));
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		Op *o = graph_add_op(h, op->name, op->type, op->nin, op->nout);
		for (uint32_t k = 0; k < op->nout; k++) {
			o->out[k] = op->out[k];
			if (op->out_names && op->out_names[k] && k)
				graph_name_output(h, o, k, op->out_names[k]);
		}
		o->types_given = op->types_given;
		o->loc = op->loc;
		for (uint32_t a = 0; a < op->nattr; a++)
			op_set(h, o, op->attrs[a].key, op->attrs[a].val);
		map[i] = o;
	}
	for (uint32_t i = 0; i < g->nops; i++) {
		const Op *op = g->ops[i];
		if (op->dead)
			continue;
		for (uint32_t k = 0; k < op->nin; k++)
			map[i]->in[k] = (Input){map[op->in[k].src->id],
						op->in[k].idx, op->in[k].ctrl};
	}
	free(map);
	return h;
}
