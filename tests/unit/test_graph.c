/* test_graph.c — the IR core: arena, interning, names, uses, topological
 * order, rewiring, compaction, attributes. */
#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

static Op *add(Graph *g, const char *name, const char *type, int nin, ...)
{
	Op *op = graph_add_op(g, name, type, (uint32_t)nin, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	op->out[0] = type_make(g->arena, DT_F32, 1, (int64_t[]){4});
	op->types_given = true;
	va_list ap;
	va_start(ap, nin);
	for (int i = 0; i < nin; i++)
		op->in[i] = (Input){va_arg(ap, Op *), 0, false};
	va_end(ap);
	return op;
}

static void test_arena(void)
{
	Arena *a = arena_new();
	char *p = arena_alloc(a, 10);
	for (int i = 0; i < 10; i++)
		CU_ASSERT_EQUAL(p[i], 0);
	CU_ASSERT_EQUAL((uintptr_t)p % 16, 0);
	char *q = arena_realloc(a, memcpy(p, "abcdefghi", 10), 10, 100000);
	CU_ASSERT_STRING_EQUAL(q, "abcdefghi");
	CU_ASSERT_STRING_EQUAL(arena_printf(a, "%s/%d", "x", 3), "x/3");
	arena_reset(a);
	CU_ASSERT_EQUAL(arena_bytes(a), 0);
	arena_free(a);
}

static void test_intern(void)
{
	Arena *a = arena_new();
	Interner in;
	interner_init(&in, a);
	char buf[32];
	const char *first = intern(&in, "MatMul");
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof buf, "s%d", i);
		intern(&in, buf);
	}
	CU_ASSERT_PTR_EQUAL(intern(&in, "MatMul"), first);
	CU_ASSERT_PTR_EQUAL(intern_n(&in, "MatMulXYZ", 6), first);
	CU_ASSERT_EQUAL(in.n, 5001);
	interner_free(&in);
	arena_free(a);
}

/* A base made of a device's name ("box A/gpu0") keeps only what an op
 * name may hold (gir.md), so that the plan parses back. */
static void test_fresh_name_chars(void)
{
	Graph *g = graph_new("t");
	CU_ASSERT_STRING_EQUAL(graph_fresh_name(g, "w/to/box A:1/gpu0"),
			       "w/to/box_A_1/gpu0");
	CU_ASSERT_STRING_EQUAL(graph_fresh_name(g, "a-b.c_d/e9"), "a-b.c_d/e9");
	CU_ASSERT_STRING_EQUAL(graph_fresh_name(g, ""), "_");
	graph_add_op(g, "w/to/box_A/gpu0", "Relu", 0, 0);
	CU_ASSERT_STRING_EQUAL(graph_fresh_name(g, "w/to/box\"A/gpu0"),
			       "w/to/box_A/gpu0/1");
	graph_free(g);
}

static void test_names_and_aliases(void)
{
	Graph *g = graph_new("t");
	Op *x = add(g, "x", "Placeholder", 0);
	CU_ASSERT_PTR_NULL(graph_add_op(g, "x", "Relu", 0, 0));
	Op *sm = graph_add_op(g, "loss", "SoftmaxCrossEntropyWithLogits", 0, 2);
	CU_ASSERT_TRUE(graph_name_output(g, sm, 1, "dy"));
	CU_ASSERT_FALSE(graph_name_output(g, sm, 1, "x")); /* taken */
	CU_ASSERT_FALSE(graph_name_output(g, sm, 2, "z")); /* no output 2 */
	uint32_t idx = 99;
	CU_ASSERT_PTR_EQUAL(graph_lookup(g, "dy", &idx), sm);
	CU_ASSERT_EQUAL(idx, 1);
	CU_ASSERT_PTR_EQUAL(graph_lookup(g, "x", &idx), x);
	CU_ASSERT_EQUAL(idx, 0);
	CU_ASSERT_STRING_EQUAL(graph_fresh_name(g, "x"), "x/1");
	CU_ASSERT_STRING_EQUAL(graph_fresh_name(g, "y"), "y");
	/* fresh names from one base, some taken already: 200000 of them
	 * cost linear time (the counter per base never goes back) */
	graph_add_op(g, "x/2", "Relu", 0, 0);
	CU_ASSERT_STRING_EQUAL(graph_fresh_name(g, "x"), "x/1");
	graph_add_op(g, "x/1", "Relu", 0, 0);
	CU_ASSERT_STRING_EQUAL(graph_fresh_name(g, "x"), "x/3");
	for (int i = 0; i < 200000; i++)
		graph_add_op(g, graph_fresh_name(g, "x"), "Relu", 0, 0);
	CU_ASSERT_PTR_NOT_NULL(graph_lookup(g, "x/200002", NULL));
	CU_ASSERT_STRING_EQUAL(graph_fresh_name(g, "x"), "x/200003");
	for (int i = 0; i < 100; i++) {
		char b[16];
		snprintf(b, sizeof b, "base%d", i);
		CU_ASSERT_STRING_EQUAL(graph_fresh_name(g, b), b);
	}
	graph_remove_op(g, sm);
	CU_ASSERT_PTR_NULL(graph_lookup(g, "dy", NULL));
	CU_ASSERT_PTR_NULL(graph_lookup(g, "loss", NULL));
	/* many names: the table grows and every name is still found */
	char buf[32];
	for (int i = 0; i < 20000; i++) {
		snprintf(buf, sizeof buf, "n%d", i);
		add(g, buf, "Relu", 1, x);
	}
	CU_ASSERT_PTR_NOT_NULL(graph_lookup(g, "n12345", NULL));
	CU_ASSERT_EQUAL(graph_lookup(g, "n19999", NULL)->id, 20001 + 200002);
	graph_free(g);
}

static void test_uses_topo(void)
{
	/* d <- b <- a, d <- c <- a, control: c waits for b */
	Graph *g = graph_new("t");
	Op *d = graph_add_op(g, "d", "AddN", 2, 1);
	Op *c = graph_add_op(g, "c", "Relu", 2, 1);
	Op *b = graph_add_op(g, "b", "Relu", 1, 1);
	Op *a = graph_add_op(g, "a", "Placeholder", 0, 1);
	b->in[0] = (Input){a, 0, false};
	c->in[0] = (Input){a, 0, false};
	c->in[1] = (Input){b, 0, true};
	d->in[0] = (Input){b, 0, false};
	d->in[1] = (Input){c, 0, false};
	const Uses *u = graph_uses(g);
	CU_ASSERT_EQUAL(u->start[a->id + 1] - u->start[a->id], 2);
	CU_ASSERT_EQUAL(u->start[b->id + 1] - u->start[b->id], 2);
	CU_ASSERT_EQUAL(u->start[d->id + 1] - u->start[d->id], 0);
	const uint32_t *t = graph_topo(g);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	/* a, b, c, d is the only order respecting the control edge */
	CU_ASSERT_EQUAL(t[0], a->id);
	CU_ASSERT_EQUAL(t[1], b->id);
	CU_ASSERT_EQUAL(t[2], c->id);
	CU_ASSERT_EQUAL(t[3], d->id);
	/* a cycle through the control edge: b waits for c */
	b->nin = 1;
	Input *in = arena_alloc(g->arena, sizeof(Input) * 2);
	in[0] = b->in[0];
	in[1] = (Input){c, 0, true};
	b->in = in;
	b->nin = 2;
	graph_invalidate(g);
	CU_ASSERT_PTR_NULL(graph_topo(g));
	graph_free(g);
}

static void test_replace_compact(void)
{
	Graph *g = graph_new("t");
	Op *a = add(g, "a", "Placeholder", 0);
	Op *i = add(g, "i", "Identity", 1, a);
	Op *r = add(g, "r", "Relu", 1, i);
	Op *s = graph_add_op(g, "s", "NoOp", 1, 0);
	s->in[0] = (Input){i, 0, true};
	graph_replace_uses(g, i, 0, a, 0);
	CU_ASSERT_PTR_EQUAL(r->in[0].src, a);
	CU_ASSERT_PTR_EQUAL(s->in[0].src, a);
	CU_ASSERT_TRUE(s->in[0].ctrl);
	graph_remove_op(g, i);
	graph_compact(g);
	CU_ASSERT_EQUAL(g->nops, 3);
	CU_ASSERT_EQUAL(r->id, 1);
	CU_ASSERT_EQUAL(s->id, 2);
	CU_ASSERT_PTR_EQUAL(g->ops[1], r);
	graph_free(g);
}

static void test_attrs(void)
{
	Graph *g = graph_new("t");
	Op *m = add(g, "m", "MatMul", 0);
	op_set(g, m, "transpose_a", val_bool(g->arena, true));
	op_set_ann(g, m, ANN_DEVICE, val_str(g->arena, "m0/gpu1"));
	op_set(g, m, "transpose_a", val_bool(g->arena, false)); /* replaces */
	CU_ASSERT_EQUAL(m->nattr, 2);
	CU_ASSERT_FALSE(op_get_bool(g, m, "transpose_a", true));
	CU_ASSERT_TRUE(op_get_bool(g, m, "transpose_b", true));
	CU_ASSERT_STRING_EQUAL(op_ann_str(g, m, ANN_DEVICE), "m0/gpu1");
	CU_ASSERT_PTR_EQUAL(op_ann(g, m, ANN_DEVICE), op_get(g, m, "@device"));
	CU_ASSERT_TRUE(op_unset(g, m, "transpose_a"));
	CU_ASSERT_FALSE(op_unset(g, m, "transpose_a"));
	CU_ASSERT_EQUAL(m->nattr, 1);
	CU_ASSERT_EQUAL(op_ann_num(g, m, ANN_FLOPS, -1), -1);
	op_set_ann(g, m, ANN_FLOPS, val_int(g->arena, 1000));
	CU_ASSERT_EQUAL(op_ann_num(g, m, ANN_FLOPS, -1), 1000);
	graph_set_attr(g, "batch", val_int(g->arena, 64));
	CU_ASSERT_EQUAL(graph_attr(g, "batch")->i, 64);
	graph_free(g);
}

static void test_types(void)
{
	Arena *a = arena_new();
	Type t = type_make(a, DT_F32, 2, (int64_t[]){64, 784});
	char buf[64];
	CU_ASSERT_STRING_EQUAL(type_str(&t, buf, sizeof buf), "f32[64,784]");
	CU_ASSERT_EQUAL(type_bytes(&t), 64 * 784 * 4);
	Type s = type_make(a, DT_BF16, 0, NULL);
	CU_ASSERT_STRING_EQUAL(type_str(&s, buf, sizeof buf), "bf16[]");
	CU_ASSERT_EQUAL(type_bytes(&s), 2);
	Type u = type_make(a, DT_I64, 2, (int64_t[]){DIM_UNKNOWN, 3});
	CU_ASSERT_STRING_EQUAL(type_str(&u, buf, sizeof buf), "i64[?,3]");
	CU_ASSERT_EQUAL(type_numel(&u), -1);
	CU_ASSERT_FALSE(type_eq(&t, &u));
	DType dt;
	CU_ASSERT_TRUE(dtype_parse("bool", 4, &dt));
	CU_ASSERT_EQUAL(dt, DT_BOOL);
	CU_ASSERT_FALSE(dtype_parse("f128", 4, &dt));
	arena_free(a);
}

void suite_graph(void)
{
	CU_pSuite s = CU_add_suite("graph", NULL, NULL);
	CU_add_test(s, "arena", test_arena);
	CU_add_test(s, "intern", test_intern);
	CU_add_test(s, "names and aliases", test_names_and_aliases);
	CU_add_test(s, "fresh names hold only name characters", test_fresh_name_chars);
	CU_add_test(s, "uses and topological order", test_uses_topo);
	CU_add_test(s, "replace uses and compact", test_replace_compact);
	CU_add_test(s, "attributes", test_attrs);
	CU_add_test(s, "types", test_types);
}
