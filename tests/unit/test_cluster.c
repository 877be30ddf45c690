/* test_cluster.c — the cluster builder, the YAML reader (every example
 * file and every bad input in tests/bad-cluster/), link lookup, the
 * default cluster, cloning and the printer.  Runs with cwd = tests/. */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

#define NEAR(x, y) CU_ASSERT_DOUBLE_EQUAL((x), (y), fabs(y) * 1e-12)

/* Parses YAML text; *msgs receives the diagnostics (malloc'd). */
static Cluster *parse(Arena *a, const char *text, char **msgs)
{
	size_t n;
	FILE *f = open_memstream(msgs, &n);
	Diag d;
	diag_init(&d, f, "t.yaml", text, strlen(text));
	Cluster *c = cluster_parse_yaml(a, "t.yaml", text, strlen(text), &d);
	fclose(f);
	return c;
}

static Cluster *load(Arena *a, const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "../examples/clusters/%s", name);
	char *msgs;
	size_t n;
	FILE *f = open_memstream(&msgs, &n);
	Diag d;
	diag_init(&d, f, path, NULL, 0);
	Cluster *c = cluster_read_yaml(a, path, &d);
	fclose(f);
	if (!c || d.nerrors)
		fprintf(stderr, "%s: %s\n", name, msgs);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_STRING_EQUAL(msgs, "");
	free(msgs);
	return c;
}

static char *print_str(const Cluster *c)
{
	char *s;
	size_t n;
	FILE *f = open_memstream(&s, &n);
	cluster_print(f, c);
	fclose(f);
	return s;
}

static int dev(const Cluster *c, const char *name)
{
	int d = cluster_find_device(c, name);
	CU_ASSERT_FATAL(d >= 0);
	return d;
}

static void test_examples(void)
{
	static const struct {
		const char *file;
		int nmachines, ndevs;
		const char *last;
	} ex[] = {
		{"tag-testbed.yaml", 7, 16, "m6/gpu1"},
		{"tag-cloud.yaml", 6, 32, "t3/gpu3"},
		{"heterog.yaml", 2, 4, "gtx/gpu1"},
		{"fastt-8v100.yaml", 1, 8, "s0/gpu7"},
		{"fastt-2x4.yaml", 2, 8, "s1/gpu3"},
		{"celeritas-4v100.yaml", 1, 4, "s0/gpu3"},
		{"fddps-8p100.yaml", 1, 8, "s0/gpu7"},
		{"homo-2gpu.yaml", 1, 2, "m0/gpu1"},
		{"hetero-4.yaml", 2, 4, "t/gpu1"},
	};
	for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
		Arena *a = arena_new();
		Cluster *c = load(a, ex[i].file);
		CU_ASSERT_PTR_NOT_NULL_FATAL(c);
		CU_ASSERT_EQUAL(c->nmachines, ex[i].nmachines);
		CU_ASSERT_EQUAL(c->ndevs, ex[i].ndevs);
		CU_ASSERT_STRING_EQUAL(c->devs[c->ndevs - 1].name, ex[i].last);
		CU_ASSERT_EQUAL(dev(c, ex[i].last), ex[i].ndevs - 1);
		CU_ASSERT_FALSE(c->is_default);
		arena_free(a);
	}
}

static void test_tag_testbed(void)
{
	Arena *a = arena_new();
	Cluster *c = load(a, "tag-testbed.yaml");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_STRING_EQUAL(c->name, "tag-testbed");
	CU_ASSERT_EQUAL(c->ntypes, 3);
	CU_ASSERT_EQUAL(c->ndevs, 4 + 8 + 4);
	/* 4 V100s on m0 come first, then m1's two 1080Tis */
	CU_ASSERT_STRING_EQUAL(c->devs[3].name, "m0/gpu3");
	CU_ASSERT_STRING_EQUAL(c->devs[4].name, "m1/gpu0");
	CU_ASSERT_EQUAL(c->devs[4].machine, 1);
	CU_ASSERT_EQUAL(c->devs[5].local, 1);
	CU_ASSERT_STRING_EQUAL(c->types[c->devs[4].type].name, "1080Ti");
	CU_ASSERT_STRING_EQUAL(c->types[c->devs[15].type].name, "P100");
	CU_ASSERT_EQUAL(dev(c, "m5/gpu0"), 12);
	/* units: 100 Gbps = 100e9 / 8 bytes/s, 32 GiB = 32 * 2^30 bytes */
	CU_ASSERT_EQUAL(c->net_bw, 12.5e9);
	NEAR(c->net_lat, 10e-6);
	CU_ASSERT_EQUAL(c->types[0].memory, 34359738368.0);
	NEAR(c->types[0].flops, 15.7e12);
	NEAR(c->types[1].mem_bw, 484e9);
	CU_ASSERT_FALSE(c->types[0].eff_given);
	CU_ASSERT_EQUAL(c->types[0].eff[OC_MATMUL], 1.0);
	double bw, lat;
	cluster_link(c, dev(c, "m0/gpu0"), dev(c, "m0/gpu3"), &bw, &lat);
	NEAR(bw, 25e9);
	NEAR(lat, 2e-6);
	cluster_link(c, dev(c, "m3/gpu1"), dev(c, "m3/gpu0"), &bw, &lat);
	NEAR(bw, 12e9);
	NEAR(lat, 5e-6);
	cluster_link(c, dev(c, "m0/gpu0"), dev(c, "m6/gpu1"), &bw, &lat);
	CU_ASSERT_EQUAL(bw, 12.5e9);
	NEAR(lat, 10e-6);
	cluster_link(c, 7, 7, &bw, &lat);
	CU_ASSERT_TRUE(isinf(bw));
	CU_ASSERT_EQUAL(lat, 0);
	arena_free(a);
}

static void test_hetero4_links(void)
{
	Arena *a = arena_new();
	Cluster *c = load(a, "hetero-4.yaml");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	int v0 = dev(c, "v/gpu0"), v1 = dev(c, "v/gpu1");
	int t0 = dev(c, "t/gpu0"), t1 = dev(c, "t/gpu1");
	CU_ASSERT_EQUAL(v0, 0);
	CU_ASSERT_EQUAL(t1, 3);
	double bw, lat;
	cluster_link(c, v0, v1, &bw, &lat);      /* intra-machine, NVLink */
	NEAR(bw, 25e9);
	NEAR(lat, 2e-6);
	cluster_link(c, v0, t0, &bw, &lat);      /* network: 10 Gbps */
	CU_ASSERT_EQUAL(bw, 1.25e9);
	NEAR(lat, 20e-6);
	cluster_link(c, v1, t0, &bw, &lat);      /* override, inherits latency */
	NEAR(bw, 5e9);
	NEAR(lat, 20e-6);
	cluster_link(c, t0, v1, &bw, &lat);      /* either order */
	NEAR(bw, 5e9);
	cluster_link(c, v0, t1, &bw, &lat);      /* override with latency */
	NEAR(bw, 2e9);
	NEAR(lat, 1e-6);
	CU_ASSERT_EQUAL(c->nlinks, 2);
	CU_ASSERT(c->links[1].a == t1 && c->links[1].b == v0);
	CU_ASSERT(c->links[0].lat < 0);
	/* efficiency map with a default */
	const DevType *t4 = &c->types[cluster_find_type(c, "T4")];
	CU_ASSERT_TRUE(t4->eff_given);
	CU_ASSERT_EQUAL(t4->eff[OC_MATMUL], 0.5);
	CU_ASSERT_EQUAL(t4->eff[OC_CONV], 0.4);
	CU_ASSERT_EQUAL(t4->eff[OC_ELEMWISE], 0.8);
	CU_ASSERT_EQUAL(t4->eff[OC_OTHER], 0.8);
	NEAR(t4->flops, 8.1e12);
	CU_ASSERT_EQUAL(t4->memory, 16.0 * 1073741824.0);
	/* device names that are not there */
	CU_ASSERT_EQUAL(cluster_find_device(c, "v/gpu2"), -1);
	CU_ASSERT_EQUAL(cluster_find_device(c, "v/gpu01"), -1);
	CU_ASSERT_EQUAL(cluster_find_device(c, "v/gpu"), -1);
	CU_ASSERT_EQUAL(cluster_find_device(c, "v/gpu-1"), -1);
	CU_ASSERT_EQUAL(cluster_find_device(c, "x/gpu0"), -1);
	CU_ASSERT_EQUAL(cluster_find_device(c, "v"), -1);
	CU_ASSERT_EQUAL(cluster_find_device(c, ""), -1);
	CU_ASSERT_EQUAL(cluster_find_type(c, "P100"), -1);
	arena_free(a);
}

static const char hetero4_gir[] =
	"cluster \"hetero-4\" {\n"
	"  type \"V100-16G\" {flops = 15.7TFLOPS, memory = 16GiB, "
	"mem_bw = 900GB/s}\n"
	"  type \"T4\" {flops = 8.1TFLOPS, memory = 16GiB, mem_bw = 320GB/s, "
	"sms = 40, efficiency = {matmul = 0.5, conv = 0.4, elementwise = 0.8, "
	"reduce = 0.8, data = 0.8, other = 0.8}}\n"
	"  machine \"v\" {type = \"V100-16G\", count = 2, bandwidth = 25GB/s, "
	"latency = 2us}\n"
	"  machine \"t\" {type = \"T4\", count = 2, bandwidth = 12GB/s, "
	"latency = 5us}\n"
	"  network {bandwidth = 1.25GB/s, latency = 20us}\n"
	"  link \"v/gpu1\" \"t/gpu0\" {bandwidth = 5GB/s}\n"
	"  link \"t/gpu1\" \"v/gpu0\" {bandwidth = 2GB/s, latency = 1us}\n"
	"}\n";

static void test_print_and_clone(void)
{
	Arena *a = arena_new();
	Cluster *c = load(a, "hetero-4.yaml");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	char *s = print_str(c);
	CU_ASSERT_STRING_EQUAL(s, hetero4_gir);
	Arena *b = arena_new();
	Cluster *k = cluster_clone(b, c);
	arena_free(a); /* the clone shares nothing with the original */
	char *s2 = print_str(k);
	CU_ASSERT_STRING_EQUAL(s2, hetero4_gir);
	CU_ASSERT_EQUAL(k->ndevs, 4);
	CU_ASSERT_STRING_EQUAL(k->devs[2].name, "t/gpu0");
	double bw, lat;
	cluster_link(k, 1, 2, &bw, &lat);
	NEAR(bw, 5e9);
	NEAR(lat, 20e-6);
	/* a clone can still grow and be finalized again */
	cluster_add_link(k, b, "v/gpu0", "v/gpu1", 40e9, -1, (Loc){0});
	Diag d;
	diag_init(&d, stderr, "t", NULL, 0);
	CU_ASSERT_EQUAL(cluster_finalize(k, b, &d), 0);
	cluster_link(k, 0, 1, &bw, &lat);
	NEAR(bw, 40e9);
	NEAR(lat, 2e-6);
	free(s);
	free(s2);
	arena_free(b);
}

/* Named device types: a machine may name one without defining it; a
 * definition under a catalog name takes the catalog's figures for what
 * it leaves out; the cost-model keys print and read back. */
/* The names nvidia-smi prints (and people write) for the catalog's GPUs,
 * and ones that must stay unknown: a spelling that does not say which
 * entry (an A100 PCIe has 40 or 80 GB; an H100 PCIe is no SXM5 H100; a
 * GTX 1080 no 1080 Ti). */
static void test_spellings(void)
{
	static const char *const t[][2] = {
		{"Tesla K80", "K80"},
		{"Tesla P100-SXM2-16GB", "P100"},
		{"Tesla P100-PCIE-16GB", "P100-PCIe"},
		{"Tesla P100-PCIE-12GB", NULL},
		{"P100-16G", "P100"},
		{"GeForce GTX 1080 Ti", "1080Ti"},
		{"GeForce GTX 1080", NULL},
		{"Tesla V100-SXM2-16GB", "V100"},
		{"V100-16G", "V100"},
		{"v100", "V100"},
		{"Tesla V100-SXM2-32GB", "V100-32G"},
		{"Tesla V100-PCIE-16GB", "V100-PCIe"},
		{"Tesla V100-PCIE-32GB", NULL},
		{"Tesla T4", "T4"},
		{"NVIDIA GeForce RTX 2080 Ti", "2080Ti"},
		{"NVIDIA A100-SXM4-40GB", "A100"},
		{"NVIDIA A100-PCIE-40GB", "A100"},
		{"NVIDIA A100-SXM4-80GB", "A100-80G"},
		{"NVIDIA A100 80GB PCIe", NULL},
		{"NVIDIA H100 80GB HBM3", "H100"},
		{"NVIDIA H100 PCIe", NULL},
		{"h100-tf32", "H100-TF32"},
		{"NVIDIA", NULL},
		{"", NULL},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		const DevType *d = devtype_spelled(t[i][0]);
		if (!t[i][1]) {
			CU_ASSERT_PTR_NULL(d);
		} else if (d) {
			CU_ASSERT_STRING_EQUAL(d->name, t[i][1]);
		} else {
			CU_FAIL(t[i][0]);
		}
	}
}

static void test_named_types(void)
{
	Arena *a = arena_new();
	char *msgs;
	Cluster *c = parse(a,
		"device_types:\n"
		"  V100: {memory: 32 GiB}\n"
		"  mine: {flops: 1 TFLOPS, memory: 1 GiB, overhead: 12 us, "
		"mem_efficiency: 0.5, kernel_efficiency: 0.9, "
		"gemm_efficiency: 1.5, collectives: blocking}\n"
		"machines:\n"
		"  - {name: a, type: K80, count: 2, link: {bandwidth: 6 GB/s}}\n"
		"  - {name: b, type: V100}\n"
		"  - {name: c, type: mine}\n"
		"network: {bandwidth: 10 GB/s}\n", &msgs);
	CU_ASSERT_STRING_EQUAL(msgs, "");
	free(msgs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->ntypes, 3);
	char *s = print_str(c);
	/* K80: one GK210 at boost clock, 12 GiB, 240 GB/s; its two factors
	 * fitted by bench/fit.py (docs/cost-model.md). */
	CU_ASSERT_PTR_NOT_NULL(strstr(s,
		"  type \"V100\" {flops = 15.7TFLOPS, memory = 32GiB, "
		"mem_bw = 900GB/s, sms = 80}\n"
		"  type \"mine\" {flops = 1TFLOPS, memory = 1GiB, overhead = 12us, "
		"mem_efficiency = 0.5, kernel_efficiency = 0.9, "
		"gemm_efficiency = 1.5, collectives = \"blocking\"}\n"
		"  type \"K80\" {flops = 4.37TFLOPS, memory = 12GiB, "
		"mem_bw = 240GB/s, mem_efficiency = 0.44, kernel_efficiency = 0.6, "
		"sms = 13}\n"));
	free(s);
	CU_ASSERT_PTR_NOT_NULL(devtype_named("H100"));
	/* other spellings: nvidia-smi's names, case, GB (test_spellings) */
	CU_ASSERT_PTR_NULL(devtype_named("V100-32GB"));   /* exact */
	CU_ASSERT_PTR_EQUAL(devtype_spelled("V100-32GB"), devtype_named("V100-32G"));
	CU_ASSERT_PTR_NULL(devtype_spelled("V100-64GB"));
	/* Tensor-core peaks: the -TF32 types say so, the FP32 ones not. */
	CU_ASSERT_TRUE(devtype_named("A100-TF32")->tensor_cores);
	CU_ASSERT_TRUE(devtype_named("H100-TF32")->tensor_cores);
	CU_ASSERT_FALSE(devtype_named("A100")->tensor_cores);
	c = parse(a,
		"device_types:\n"
		"  A100-TF32: {tensor_cores: false}\n"
		"  tc: {flops: 100 TFLOPS, memory: 1 GiB, tensor_cores: true}\n"
		"machines:\n"
		"  - {name: a, type: A100-TF32}\n"
		"  - {name: b, type: tc}\n"
		"network: {bandwidth: 10 GB/s}\n", &msgs);
	CU_ASSERT_STRING_EQUAL(msgs, "");
	free(msgs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_FALSE(c->types[0].tensor_cores);
	CU_ASSERT_TRUE(c->types[1].tensor_cores);
	s = print_str(c);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "  type \"tc\" {flops = 100TFLOPS, "
		"memory = 1GiB, tensor_cores = true}\n"));
	free(s);
	c = parse(a,
		"device_types: {tc: {flops: 1 TFLOPS, memory: 1 GiB, "
		"tensor_cores: maybe}}\n"
		"machines: [{name: a, type: tc}]\n", &msgs);
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "tensor_cores must be 'false' or "
		"'true', got 'maybe'"));
	free(msgs);
	c = parse(a,
		"device_types: {g: {flops: 1 TFLOPS, memory: 1 GiB, "
		"gemm_efficiency: 0}}\n"
		"machines: [{name: a, type: g}]\n", &msgs);
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "gemm_efficiency must be positive, "
		"got '0'"));
	free(msgs);
	arena_free(a);
}

static void test_print_small(void)
{
	Arena *a = arena_new();
	Cluster *c = cluster_new(a, "tiny \"one\"");
	DevType t = {.name = "G", .flops = 1e12, .memory = 1e9};
	CU_ASSERT_EQUAL(cluster_add_type(c, a, &t), 0);
	CU_ASSERT_EQUAL(cluster_add_type(c, a, &t), -1); /* duplicate */
	DevType u = {.name = "H", .flops = 2.5e12, .memory = 3 * 1073741824.0,
		     .mem_bw = 1.5e11, .eff_given = true};
	for (int i = 0; i < OC_COUNT; i++)
		u.eff[i] = 0.75;
	CU_ASSERT_EQUAL(cluster_add_type(c, a, &u), 1);
	Machine m = {.name = "box", .type = 1, .count = 1};
	CU_ASSERT_EQUAL(cluster_add_machine(c, a, &m), 0);
	CU_ASSERT_EQUAL(cluster_add_machine(c, a, &m), -1); /* duplicate */
	Diag d;
	diag_init(&d, stderr, "t", NULL, 0);
	CU_ASSERT_EQUAL(cluster_finalize(c, a, &d), 0);
	/* G has no mem_bw and default efficiencies; one machine, no network */
	CU_ASSERT_EQUAL(c->types[0].eff[OC_DATA], 1.0);
	char *s = print_str(c);
	CU_ASSERT_STRING_EQUAL(s,
		"cluster \"tiny \\\"one\\\"\" {\n"
		"  type \"G\" {flops = 1TFLOPS, memory = 1GB}\n"
		"  type \"H\" {flops = 2.5TFLOPS, memory = 3GiB, "
		"mem_bw = 150GB/s, efficiency = 0.75}\n"
		"  machine \"box\" {type = \"H\", count = 1, bandwidth = 0B/s, "
		"latency = 0s}\n"
		"}\n");
	free(s);
	arena_free(a);
}

static void test_default(void)
{
	Arena *a = arena_new();
	Cluster *c = cluster_default(a);
	CU_ASSERT_TRUE(c->is_default);
	CU_ASSERT_EQUAL(c->ndevs, 2);
	CU_ASSERT_STRING_EQUAL(c->devs[1].name, "m0/gpu1");
	double bw, lat;
	cluster_link(c, 0, 1, &bw, &lat);
	CU_ASSERT_EQUAL(bw, 25e9);
	CU_ASSERT_EQUAL(lat, 2e-6);
	char *s = print_str(c);
	CU_ASSERT_STRING_EQUAL(s,
		"cluster \"default: 1 machine, 2x V100-16G, NVLink\" {\n"
		"  type \"V100-16G\" {flops = 15.7TFLOPS, memory = 16GiB, "
		"mem_bw = 900GB/s}\n"
		"  machine \"m0\" {type = \"V100-16G\", count = 2, "
		"bandwidth = 25GB/s, latency = 2us}\n"
		"  network {bandwidth = 12.5GB/s, latency = 10us}\n"
		"}\n");
	free(s);
	arena_free(a);
}

static int count_errors(const char *msgs)
{
	int n = 0;
	for (const char *p = msgs; (p = strstr(p, ": error: ")); p++)
		n++;
	return n;
}

static void test_finalize_errors(void)
{
	Arena *a = arena_new();
	Cluster *c = cluster_new(a, "bad");
	c->loc = (Loc){"b.gir", 1, 1};
	DevType t = {.name = "G", .flops = 0, .memory = 1e9,
		     .loc = {"b.gir", 2, 3}};
	cluster_add_type(c, a, &t);
	Machine m = {.name = "a", .type = 0, .count = 2, .bw = 1e9,
		     .loc = {"b.gir", 3, 3}};
	cluster_add_machine(c, a, &m);
	m = (Machine){.name = "b", .type = 5, .count = 0, .bw = 1e9,
		      .loc = {"b.gir", 4, 3}};
	cluster_add_machine(c, a, &m);
	cluster_add_link(c, a, "a/gpu0", "a/gpu2", 1e9, -1,
			 (Loc){"b.gir", 5, 3});
	cluster_add_link(c, a, "a/gpu1", "a/gpu1", 1e9, -1,
			 (Loc){"b.gir", 6, 3});
	char *msgs;
	size_t n;
	FILE *f = open_memstream(&msgs, &n);
	Diag d;
	diag_init(&d, f, "b.gir", NULL, 0);
	int e = cluster_finalize(c, a, &d);
	fclose(f);
	CU_ASSERT_EQUAL(e, 6);
	CU_ASSERT_EQUAL(count_errors(msgs), 6);
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "b.gir:2:3: error: device type "
					    "'G': flops must be positive"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "b.gir:4:3: error: machine 'b': "
					    "unknown device type"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "b.gir:4:3: error: machine 'b': "
					    "count must be"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "b.gir:1:1: error: network "
					    "required"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "b.gir:5:3: error: link to "
					    "unknown device 'a/gpu2'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "b.gir:6:3: error: link from "
					    "device 'a/gpu1' to itself"));
	free(msgs);
	arena_free(a);
}

static void test_yaml_errors_inline(void)
{
	Arena *a = arena_new();
	char *msgs;
	Cluster *c = parse(a,
		"device_types:\n"
		"  A: {flops: 1 TFLOPS, memory: 5 us}\n"
		"machines:\n"
		"  - {name: m, type: B}\n", &msgs);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_EQUAL(count_errors(msgs), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs,
		"t.yaml:2:32: error: memory must be a size such as 32 GiB, "
		"got '5 us' (seconds)\n"
		"  " "  A: {flops: 1 TFLOPS, memory: 5 us}\n"
		"  " "                               ^\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs,
		"t.yaml:4:21: error: unknown device type 'B' "
		"(known: A; named: K80, P100, "));
	free(msgs);

	/* units without a space, bare numbers in base units, default name */
	c = parse(a,
		"device_types: {A: {flops: 2e12, memory: 1024, mem_bw: 3GB/s,"
		" efficiency: 0.5}}\n"
		"machines: [{name: m, type: A}]\n", &msgs);
	CU_ASSERT_STRING_EQUAL(msgs, "");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_STRING_EQUAL(c->name, "t");
	CU_ASSERT_EQUAL(c->types[0].flops, 2e12);
	CU_ASSERT_EQUAL(c->types[0].memory, 1024);
	CU_ASSERT_EQUAL(c->types[0].mem_bw, 3e9);
	CU_ASSERT_EQUAL(c->types[0].eff[OC_REDUCE], 0.5);
	CU_ASSERT_EQUAL(c->ndevs, 1);
	CU_ASSERT_EQUAL(c->machines[0].count, 1);
	free(msgs);

	/* a syntax error */
	c = parse(a, "name: [x\n", &msgs);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_EQUAL(count_errors(msgs), 1);
	/* at the unclosed '[' (1:7), with a note where libyaml noticed */
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "t.yaml:1:7: error: YAML syntax "
					    "error"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "t.yaml:2:1: note: where the parser "
					    "noticed"));
	free(msgs);

	/* garbage that is valid YAML, and an empty file */
	c = parse(a, "- 1\n- 2\n", &msgs);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "t.yaml:1:1: error: a cluster "
					    "description must be a mapping, "
					    "got a list"));
	free(msgs);
	c = parse(a, "", &msgs);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "t.yaml:1:1: error: empty"));
	free(msgs);
	arena_free(a);
}

/* Every tests/bad-cluster/NAME.yaml opens with one or more lines
 * '# ERROR: LINE:COL: SUBSTRING'; the reader must report exactly those
 * errors, each on a line starting 'FILE:LINE:COL: error: ' that contains
 * SUBSTRING. */
static void check_bad(const char *path)
{
	size_t len;
	char *text = read_file(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	Arena *a = arena_new();
	char *msgs;
	size_t n;
	FILE *f = open_memstream(&msgs, &n);
	Diag d;
	diag_init(&d, f, path, text, len);
	Cluster *c = cluster_read_yaml(a, path, &d);
	fclose(f);
	CU_ASSERT_PTR_NULL(c);
	int expected = 0;
	bool all_found = true;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		unsigned l, col;
		int off = 0;
		if (sscanf(line, "# ERROR: %u:%u: %n", &l, &col, &off) == 2 &&
		    off > 0) {
			expected++;
			char head[400];
			snprintf(head, sizeof head, "%s:%u:%u: error: ", path, l,
				 col);
			bool found = false;
			for (char *p = msgs; (p = strstr(p, head)); p++) {
				char *e = strchr(p, '\n');
				size_t m = e ? (size_t)(e - p) : strlen(p);
				char *sub = strstr(p, line + off);
				if (sub && (size_t)(sub - p) < m) {
					found = true;
					break;
				}
			}
			if (!found) {
				fprintf(stderr, "\n%s: expected '%s%s'\n", path,
					head, line + off);
				all_found = false;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	CU_ASSERT(expected > 0);
	CU_ASSERT_TRUE(all_found);
	CU_ASSERT_EQUAL(count_errors(msgs), expected);
	CU_ASSERT_EQUAL(d.nerrors, expected);
	if (!all_found || count_errors(msgs) != expected)
		fprintf(stderr, "%s: got:\n%s", path, msgs);
	free(msgs);
	free(text);
	arena_free(a);
}

static void test_bad_files(void)
{
	DIR *dir = opendir("bad-cluster");
	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	int nfiles = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".yaml") != 0)
			continue;
		char path[300];
		snprintf(path, sizeof path, "bad-cluster/%s", e->d_name);
		check_bad(path);
		nfiles++;
	}
	closedir(dir);
	CU_ASSERT(nfiles >= 12);
}

static void test_opclass(void)
{
	OpClass k;
	CU_ASSERT_TRUE(opclass_parse("elementwise", &k));
	CU_ASSERT_EQUAL(k, OC_ELEMWISE);
	CU_ASSERT_FALSE(opclass_parse("default", &k));
	CU_ASSERT_STRING_EQUAL(opclass_name(OC_DATA), "data");
	for (int i = 0; i < OC_COUNT; i++) {
		CU_ASSERT_TRUE(opclass_parse(opclass_name((OpClass)i), &k));
		CU_ASSERT_EQUAL(k, (OpClass)i);
	}
}

/* Routes worked by hand on two machines of two devices with one link
 * override m0/gpu1 <-> m1/gpu0: the same device moves nothing; the
 * override either way (dir 0 from its first device); m0/gpu0 -> gpu1 a
 * machine pair; m0/gpu0 -> m1/gpu1 the network, out of m0 into m1.
 * cluster_link agrees: the override's bandwidth, the machine's, the
 * network's; and plan_coll_devices keeps the listed devices c has. */
static void test_route(void)
{
	Arena *a = arena_new();
	char *msgs = NULL;
	Cluster *c = parse(a,
		"device_types:\n"
		"  G: {flops: 10 TFLOPS, memory: 1 GiB, mem_bw: 500 GB/s}\n"
		"machines:\n"
		"  - {name: m0, type: G, count: 2, link: {bandwidth: 50 GB/s, latency: 2 us}}\n"
		"  - {name: m1, type: G, count: 2, link: {bandwidth: 40 GB/s, latency: 2 us}}\n"
		"network: {bandwidth: 5 GB/s, latency: 10 us}\n"
		"links:\n"
		"  - {between: [m0/gpu1, m1/gpu0], bandwidth: 7 GB/s}\n", &msgs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	int m00 = cluster_find_device(c, "m0/gpu0"), m01 = cluster_find_device(c, "m0/gpu1");
	int m10 = cluster_find_device(c, "m1/gpu0"), m11 = cluster_find_device(c, "m1/gpu1");
	Route r = cluster_route(c, m01, m01);
	CU_ASSERT_EQUAL(r.kind, ROUTE_LOCAL);
	r = cluster_route(c, m01, m10);
	CU_ASSERT_EQUAL(r.kind, ROUTE_LINK);
	CU_ASSERT_EQUAL(r.link, 0);
	CU_ASSERT_EQUAL(r.dir, 0);
	r = cluster_route(c, m10, m01);
	CU_ASSERT_EQUAL(r.kind, ROUTE_LINK);
	CU_ASSERT_EQUAL(r.dir, 1);
	r = cluster_route(c, m00, m01);
	CU_ASSERT_EQUAL(r.kind, ROUTE_PAIR);
	CU_ASSERT_EQUAL(r.ma, 0);
	r = cluster_route(c, m00, m11);
	CU_ASSERT_EQUAL(r.kind, ROUTE_NET);
	CU_ASSERT_EQUAL(r.ma, 0);
	CU_ASSERT_EQUAL(r.mb, 1);
	double bw, lat;
	cluster_link(c, m10, m01, &bw, &lat);
	NEAR(bw, 7e9);
	NEAR(lat, 10e-6);     /* across machines: the network's latency */
	cluster_link(c, m00, m01, &bw, &lat);
	NEAR(bw, 50e9);
	NEAR(lat, 2e-6);
	cluster_link(c, m00, m11, &bw, &lat);
	NEAR(bw, 5e9);
	cluster_link(c, m00, m00, &bw, &lat);
	CU_ASSERT(isinf(bw));
	Value *items[] = {val_str(a, "m1/gpu1"), val_str(a, "m9/gpu0"),
			  val_ident(a, "m0/gpu0"), val_int(a, 3)};
	Value list = {.kind = V_LIST, .list = {items, 4}};
	int devs[4];
	CU_ASSERT_EQUAL(plan_coll_devices(c, &list, devs, 4), 2);
	CU_ASSERT_EQUAL(devs[0], m11);
	CU_ASSERT_EQUAL(devs[1], m00);
	CU_ASSERT_EQUAL(plan_coll_devices(c, &list, devs, 1), 1);
	CU_ASSERT_EQUAL(plan_coll_devices(c, NULL, devs, 4), 0);
	free(msgs);
	arena_free(a);
}

void suite_cluster(void)
{
	CU_pSuite s = CU_add_suite("cluster", NULL, NULL);
	CU_add_test(s, "examples load", test_examples);
	CU_add_test(s, "tag testbed: devices, units, links", test_tag_testbed);
	CU_add_test(s, "hetero-4: overrides, efficiency", test_hetero4_links);
	CU_add_test(s, "print and clone", test_print_and_clone);
	CU_add_test(s, "named device types", test_named_types);
	CU_add_test(s, "named types by other spellings", test_spellings);
	CU_add_test(s, "print small cluster", test_print_small);
	CU_add_test(s, "default cluster", test_default);
	CU_add_test(s, "finalize errors", test_finalize_errors);
	CU_add_test(s, "YAML errors with line:col", test_yaml_errors_inline);
	CU_add_test(s, "tests/bad-cluster", test_bad_files);
	CU_add_test(s, "op classes", test_opclass);
	CU_add_test(s, "routes", test_route);
}
