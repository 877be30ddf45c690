/* fuzz_pipeline.c — libFuzzer target: the whole of pcc on arbitrary bytes.
 * gir -> infer + verify -> -O1 under --verify-each -> every backend.
 * A plan as input (as pcc's -O refuses it) runs -passes=order instead.
 * It must never crash, hang, leak or trip UBSan; user errors go to
 * /dev/null (backends that refuse say why on stderr).  Oracles, each a
 * trap when it fails:
 *   - no pass is an internal error (EXIT_INTERNAL: a pass failed, or left
 *     IR that the verifier, plan checks included, refuses);
 *   - the plan prints as gir that reads back, verifies and prints to the
 *     same bytes;
 *   - every backend either emits or refuses with a message (its own
 *     EXIT_BADINPUT), never crashes; the simulator runs on every plan.
 * Inputs without a cluster get a four-GPU one of two machines, so that
 * placement, collectives and transfers happen.  Seeds:
 * tests/fuzz/corpus-pipeline/; dictionary: tests/fuzz/gir.dict. */
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "gir_target.h"

static const char cluster4[] =
	"name: fuzz-4\n"
	"device_types:\n"
	"  G: {flops: 10 TFLOPS, memory: 1 GiB, mem_bw: 500 GB/s}\n"
	"machines:\n"
	"  - {name: m0, type: G, count: 2, link: {bandwidth: 50 GB/s, latency: 2 us}}\n"
	"  - {name: m1, type: G, count: 2, link: {bandwidth: 50 GB/s, latency: 2 us}}\n"
	"network: {bandwidth: 5 GB/s, latency: 10 us}\n";

static void emit_all(Graph *g, const CostModel *cm, FILE *null)
{
	SimResult sim = {0};
	Diag d;
	diag_init(&d, null, "plan.gir", NULL, 0);
	bool simulated = sim_run(g, cm, &sim, &d) == EXIT_OK;
	int n;
	const Backend *b = backend_table(&n);
	for (int i = 0; i < n; i++) {
		if (b[i].needs_sim && !simulated)
			continue;
		/* tf-json writes its weights beside -o: not here */
		const char *given[] = {"weights_file=none"};
		int ng = strcmp(b[i].name, "tf-json") == 0;
		Arena *a = arena_new();
		char err[256];
		int nopts = 0;
		const char **opts = backend_resolve_opts(&b[i], given, ng, a, &nopts,
							 err, sizeof err);
		if (!opts)
			__builtin_trap();
		EmitCtx ctx = {g, cm, simulated ? &sim : NULL, opts, nopts, "-"};
		b[i].emit(null, &ctx);
		arena_free(a);
	}
	if (simulated)
		sim_free(&sim);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		return 0;
	Diag d;
	Graph *g = parse_input(data, size, null, &d);
	if (!g)
		goto out;
	if (!g->cluster) {
		Diag cd;
		diag_init(&cd, null, "c.yaml", cluster4, sizeof cluster4 - 1);
		g->cluster = cluster_parse_yaml(g->arena, "c.yaml", cluster4,
						sizeof cluster4 - 1, &cd);
		if (!g->cluster)
			__builtin_trap();
	}
	if (graph_infer_types(g, &d) || graph_verify(g, &d))
		goto out;
	/* a search budget of 0: the hybrid placer's time-bounded search
	 * must not make the fuzzer's runs depend on the clock */
	RunOptions ro = {.verify_each = true, .search_budget = 0, .seed = 1,
			 .best_effort = true};
	CostModel cm = {g, g->cluster, NULL, NULL, 0};
	if (run_pipeline(g, plan_op(g) ? "order" : pipeline_named("O1"), &ro,
			 &cm, &d) == EXIT_OK) {
		round_trip(g, null);
		/* the plan reads back and verifies */
		size_t n = 0;
		char *text = print_graph(g, &n);
		Diag pd;
		diag_init(&pd, null, "plan.gir", text, n);
		Graph *h = gir_parse("plan.gir", text, n, &pd);
		if (!h || graph_infer_types(h, &pd) || graph_verify(h, &pd))
			__builtin_trap();
		graph_free(h);
		free(text);
		emit_all(g, &cm, null);
	}
out:
	graph_free(g);
	fclose(null);
	return 0;
}
