/* cluster.c — the cluster: device types, machines, links, and the builder
 * shared by the YAML reader (cluster_yaml.c) and the gir parser's
 * 'cluster { }' block; link lookup; the built-in default; the printer.
 * The link model (docs/cluster.md): an explicit link entry for the pair,
 * else the machine's internal link for two devices of one machine, else
 * the network.  Devices are named MACHINE/gpuK, in machine order. */
#include "ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COUNT 4096                      /* devices per machine */
#define MAX_DEVS 65536                      /* devices per cluster */

static const char *const opclass_names[OC_COUNT] = {
	"matmul", "conv", "elementwise", "reduce", "data", "other",
};

const char *opclass_name(OpClass c)
{
	return (unsigned)c < OC_COUNT ? opclass_names[c] : "?";
}

bool opclass_parse(const char *s, OpClass *out)
{
	for (int i = 0; i < OC_COUNT; i++)
		if (strcmp(s, opclass_names[i]) == 0) {
			*out = (OpClass)i;
			return true;
		}
	return false;
}

/* Arrays grow by doubling from 4; the capacity follows from the count, so
 * an array of n entries made here always has room for cap(n). */
static size_t cap_for(size_t n)
{
	size_t c = 4;
	while (c < n)
		c *= 2;
	return c;
}

static void *grow(Arena *a, void *p, size_t n, size_t sz)
{
	if (n == 0)
		return arena_alloc(a, cap_for(1) * sz);
	if (n >= 4 && (n & (n - 1)) == 0)
		return arena_realloc(a, p, n * sz, 2 * n * sz);
	return p;
}

/* ---- indexes ------------------------------------------------------------
 * Open addressing, linear probing, at most half full.  Slots hold an index
 * + 1 into types, machines or links; a key is a name or a device pair. */

typedef struct Key {
	const char *s;                      /* a name of n bytes, or NULL */
	size_t n;
	int a, b;                           /* a device pair, a < b */
} Key;

static uint32_t key_hash(Key k)
{
	if (k.s)
		return (uint32_t)hash_bytes(k.s, k.n);
	int ab[2] = {k.a, k.b};
	return (uint32_t)hash_bytes(ab, sizeof ab);
}

/* A link's key: its two ends, smaller first. */
static Key link_key(const Cluster *c, int i)
{
	int a = c->links[i].a, b = c->links[i].b;
	return a < b ? (Key){NULL, 0, a, b} : (Key){NULL, 0, b, a};
}

static bool key_is(const Cluster *c, const struct ClusterIx *ix, int i, Key k)
{
	const char *name = NULL;
	if (ix == &c->type_ix)
		name = c->types[i].name;
	else if (ix == &c->mach_ix)
		name = c->machines[i].name;
	else
		return link_key(c, i).a == k.a && link_key(c, i).b == k.b;
	return strncmp(name, k.s, k.n) == 0 && name[k.n] == 0;
}

static int ix_find(const Cluster *c, const struct ClusterIx *ix, Key k)
{
	if (!ix->cap)
		return -1;
	uint32_t mask = ix->cap - 1;
	for (uint32_t j = key_hash(k) & mask; ix->slot[j]; j = (j + 1) & mask)
		if (key_is(c, ix, ix->slot[j] - 1, k))
			return ix->slot[j] - 1;
	return -1;
}

static Key ix_key(const Cluster *c, const struct ClusterIx *ix, int i)
{
	if (ix == &c->type_ix)
		return (Key){c->types[i].name, strlen(c->types[i].name), 0, 0};
	if (ix == &c->mach_ix)
		return (Key){c->machines[i].name, strlen(c->machines[i].name),
			     0, 0};
	return link_key(c, i);
}

static void ix_put(const Cluster *c, struct ClusterIx *ix, int i)
{
	uint32_t mask = ix->cap - 1;
	uint32_t j = key_hash(ix_key(c, ix, i)) & mask;
	while (ix->slot[j])
		j = (j + 1) & mask;
	ix->slot[j] = i + 1;
}

/* Adds entry i to ix, which then holds n entries; grows it (into a) when
 * it would be more than half full. */
static void ix_add(Cluster *c, Arena *a, struct ClusterIx *ix, int i, int n)
{
	if (2 * (uint32_t)n > ix->cap) {
		struct ClusterIx old = *ix;
		uint32_t cap = 16;
		while (cap < 4 * (uint32_t)n)
			cap *= 2;
		*ix = (struct ClusterIx){arena_alloc(a, sizeof(int) * cap), cap};
		for (uint32_t j = 0; j < old.cap; j++)
			if (old.slot[j])
				ix_put(c, ix, old.slot[j] - 1);
	}
	ix_put(c, ix, i);
}

Cluster *cluster_new(Arena *a, const char *name)
{
	Cluster *c = arena_alloc(a, sizeof *c);
	c->name = arena_strdup(a, name ? name : "");
	return c;
}

int cluster_find_type(const Cluster *c, const char *name)
{
	return ix_find(c, &c->type_ix, (Key){name, strlen(name), 0, 0});
}

int cluster_add_type(Cluster *c, Arena *a, const DevType *t)
{
	if (!t->name || cluster_find_type(c, t->name) >= 0)
		return -1;
	c->types = grow(a, c->types, (size_t)c->ntypes, sizeof *c->types);
	DevType *n = &c->types[c->ntypes];
	*n = *t;
	n->name = arena_strdup(a, t->name);
	const DevType *g = devtype_spelled(n->name);
	n->gpu = g ? g->name : n->name;
	if (!t->eff_given)
		for (int i = 0; i < OC_COUNT; i++)
			n->eff[i] = 1.0;
	c->ntypes++;
	ix_add(c, a, &c->type_ix, c->ntypes - 1, c->ntypes);
	return c->ntypes - 1;
}

/* Named device types: data-sheet FP32 peak (or TF32 tensor-core peak
 * where the name says so), memory and memory bandwidth, per GPU as
 * frameworks see it (a K80 board is two GK210 GPUs; this is one of them).
 * Sources in docs/cluster.md. */
#define GiB 1073741824.0
static const DevType catalog[] = {
	{.name = "K80", .flops = 4.37e12, .memory = 12 * GiB, .mem_bw = 240e9,
	 .sms = 13,
	 .kern_eff = 0.60, .kern_eff_given = true,
	 .mem_eff = 0.44, .mem_eff_given = true},  /* bench/fit.py K80 */
	{.name = "P100", .flops = 10.6e12, .memory = 16 * GiB, .mem_bw = 732e9,
	 .sms = 56},
	{.name = "P100-PCIe", .flops = 9.3e12, .memory = 16 * GiB, .mem_bw = 732e9,
	 .sms = 56},
	{.name = "1080Ti", .flops = 11.3e12, .memory = 11 * GiB, .mem_bw = 484e9,
	 .sms = 28},
	{.name = "V100", .flops = 15.7e12, .memory = 16 * GiB, .mem_bw = 900e9,
	 .sms = 80},
	{.name = "V100-32G", .flops = 15.7e12, .memory = 32 * GiB, .mem_bw = 900e9,
	 .sms = 80},
	{.name = "V100-PCIe", .flops = 14e12, .memory = 16 * GiB, .mem_bw = 900e9,
	 .sms = 80},
	{.name = "T4", .flops = 8.1e12, .memory = 16 * GiB, .mem_bw = 320e9,
	 .sms = 40},
	{.name = "2080Ti", .flops = 13.4e12, .memory = 11 * GiB, .mem_bw = 616e9,
	 .sms = 68},
	{.name = "A100", .flops = 19.5e12, .memory = 40 * GiB, .mem_bw = 1555e9,
	 .sms = 108},
	{.name = "A100-80G", .flops = 19.5e12, .memory = 80 * GiB, .mem_bw = 2039e9,
	 .sms = 108},
	{.name = "A100-TF32", .flops = 156e12, .memory = 40 * GiB, .mem_bw = 1555e9,
	 .sms = 108, .cuda_flops = 19.5e12,
	 .tensor_cores = true},
	/* Measured on lent H100s (docs/cost-model.md, "Calibration"):
	 * 'overhead' is the median cost of an empty op on three of them,
	 * mem_efficiency what streaming ops reached there (--mem),
	 * gemm_efficiency fitted on GEMMs alone (bench/fit.py --gemm),
	 * kernel_efficiency on bench/measured-h100.csv's fit rows
	 * (bench/fit.py).  'sms' everywhere: the data sheets' counts. */
	{.name = "H100", .flops = 67e12, .memory = 80 * GiB, .mem_bw = 3.35e12,
	 .sms = 132,
	 .overhead = 10e-6, .overhead_given = true,
	 .kern_eff = 0.64, .kern_eff_given = true,
	 .gemm_eff = 1.24, .gemm_eff_given = true,
	 .mem_eff = 0.90, .mem_eff_given = true},
	{.name = "H100-TF32", .flops = 494.7e12, .memory = 80 * GiB, .mem_bw = 3.35e12,
	 .sms = 132, .cuda_flops = 67e12,
	 .tensor_cores = true, .overhead = 10e-6, .overhead_given = true,
	 .kern_eff = 0.48, .kern_eff_given = true,
	 .gemm_eff = 0.94, .gemm_eff_given = true,
	 .mem_eff = 0.90, .mem_eff_given = true},
};
#undef GiB
#define NCATALOG (sizeof catalog / sizeof catalog[0])

/* name as a key: lower case, letters and digits only, a vendor's and a
 * brand's leading words dropped ("NVIDIA", "Tesla", "GeForce", "RTX",
 * "GTX"), "GB" after a digit written "g": "Tesla V100-SXM2-16GB" is
 * "v100sxm216g", "NVIDIA GeForce RTX 2080 Ti" is "2080ti".  False if the
 * key would not fit in out. */
static bool devtype_key(const char *name, char *out, size_t cap)
{
	size_t n = 0;
	for (const char *p = name; *p; p++) {
		char ch = *p;
		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
			continue;
		if (ch == 'b' && n >= 2 && out[n - 1] == 'g' &&
		    out[n - 2] >= '0' && out[n - 2] <= '9')
			continue;
		if (n + 1 >= cap)
			return false;
		out[n++] = ch;
	}
	out[n] = 0;
	static const char *const drop[] = {"nvidia", "tesla", "geforce",
					   "rtx", "gtx"};
	for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++) {
		size_t l = strlen(drop[i]);
		if (strncmp(out, drop[i], l) == 0 && out[l]) {
			memmove(out, out + l, strlen(out + l) + 1);
			i = (size_t)-1;      /* "NVIDIA GeForce RTX": all three */
		}
	}
	return true;
}

/* Other spellings of the catalog's GPUs, as keys (devtype_key): the names
 * nvidia-smi and cloud consoles give them.  Only a spelling that says
 * which entry it is: an "A100 PCIe" may have 40 or 80 GB, an "H100
 * PCIe" is no SXM5 H100, so neither is here. */
static const struct {
	const char *key, *name;
} spellings[] = {
	{"v10016g", "V100"}, {"v100sxm2", "V100"}, {"v100sxm216g", "V100"},
	{"v100sxm232g", "V100-32G"},
	{"v100pcie16g", "V100-PCIe"},
	{"p10016g", "P100"}, {"p100sxm2", "P100"}, {"p100sxm216g", "P100"},
	{"p100pcie16g", "P100-PCIe"},
	{"a10040g", "A100"}, {"a100sxm4", "A100"}, {"a100sxm440g", "A100"},
	{"a100pcie40g", "A100"},
	{"a100sxm480g", "A100-80G"},
	{"h10080ghbm3", "H100"}, {"h100sxm", "H100"}, {"h100sxm5", "H100"},
	{"h100sxm580g", "H100"},
};

const DevType *devtype_named(const char *name)
{
	for (size_t i = 0; i < NCATALOG; i++)
		if (strcmp(catalog[i].name, name) == 0)
			return &catalog[i];
	return NULL;
}

/* The catalog entry called name: exactly, then by key (devtype_key), so
 * that "Tesla V100-SXM2-16GB", "V100-16GB", "v100" and "GeForce GTX 1080
 * Ti" all name one (test_cluster.c "named types by other spellings"). */
const DevType *devtype_spelled(const char *name)
{
	const DevType *t = devtype_named(name);
	if (t)
		return t;
	char key[64], k2[64];
	if (!devtype_key(name, key, sizeof key) || !*key)
		return NULL;
	for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++)
		if (strcmp(spellings[i].key, key) == 0)
			return devtype_named(spellings[i].name);
	for (size_t i = 0; i < NCATALOG; i++)
		if (devtype_key(catalog[i].name, k2, sizeof k2) &&
		    strcmp(k2, key) == 0)
			return &catalog[i];
	return NULL;
}

const char *devtype_names(void)
{
	return "K80, P100, P100-PCIe, 1080Ti, V100, V100-32G, V100-PCIe, T4, "
	       "2080Ti, A100, A100-80G, A100-TF32, H100, H100-TF32";
}

static int find_machine_n(const Cluster *c, const char *name, size_t n)
{
	return ix_find(c, &c->mach_ix, (Key){name, n, 0, 0});
}

static int find_machine(const Cluster *c, const char *name)
{
	return find_machine_n(c, name, strlen(name));
}

int cluster_add_machine(Cluster *c, Arena *a, const Machine *m)
{
	if (!m->name || find_machine(c, m->name) >= 0)
		return -1;
	c->machines = grow(a, c->machines, (size_t)c->nmachines,
			   sizeof *c->machines);
	Machine *n = &c->machines[c->nmachines];
	*n = *m;
	n->first = 0;
	if (c->nmachines) {
		const Machine *p = &c->machines[c->nmachines - 1];
		n->first = p->first + (p->count > 0 && p->count <= MAX_COUNT
					       ? p->count : 0);
		if (n->first > 2 * MAX_DEVS)    /* too many: finalize says so */
			n->first = 2 * MAX_DEVS;
	}
	n->name = arena_strdup(a, m->name);
	c->nmachines++;
	ix_add(c, a, &c->mach_ix, c->nmachines - 1, c->nmachines);
	return c->nmachines - 1;
}

void cluster_add_link(Cluster *c, Arena *a, const char *dev_a,
		      const char *dev_b, double bw, double lat, Loc loc)
{
	size_t n = (size_t)c->nlinks;
	c->links = grow(a, c->links, n, sizeof *c->links);
	/* link_ends holds 2 names per link: grow it in step with links */
	if (n == 0)
		c->link_ends = arena_alloc(a, 2 * cap_for(1) * sizeof(char *));
	else if (n >= 4 && (n & (n - 1)) == 0)
		c->link_ends = arena_realloc(a, c->link_ends,
					     2 * n * sizeof(char *),
					     4 * n * sizeof(char *));
	c->links[n] = (LinkOverride){-1, -1, bw, lat, loc};
	c->link_ends[2 * n] = arena_strdup(a, dev_a ? dev_a : "");
	c->link_ends[2 * n + 1] = arena_strdup(a, dev_b ? dev_b : "");
	c->nlinks++;
}

int cluster_mem_report(FILE *f, const Cluster *c, const int *devs, int n,
		       const double *need)
{
	int over = 0;
	for (int i = 0; i < n; i++) {
		const Device *dv = &c->devs[devs ? devs[i] : i];
		double cap = (double)c->types[dv->type].memory;
		/* in the unit of the capacity: a 1-byte card's need is not
		 * "0.00 GiB of 0.00 GiB" */
		double unit = 1024.0 * 1024 * 1024;
		const char *u = "GiB";
		if (cap < unit) {
			unit = cap < 1024.0 * 1024 ? 1 : 1024.0 * 1024;
			u = cap < 1024.0 * 1024 ? "B" : "MiB";
		}
		over += need[i] > cap;
		int dec = unit == 1 ? 0 : 2;
		fprintf(f, "  %-16s %-12s needs %8.*f %s of %8.*f %s%s\n",
			dv->name, c->types[dv->type].name, dec, need[i] / unit,
			u, dec, cap / unit, u, need[i] > cap ? "  (over)" : "");
	}
	return over;
}

/* Index of device NAME ("MACHINE/gpuK") from the machines alone, so it
 * works before cluster_finalize has expanded devs.  K follows the last
 * "/gpu" (machine names may contain "/gpu" themselves): digits, no
 * leading zero. */
int cluster_find_device(const Cluster *c, const char *name)
{
	const char *sep = NULL;
	for (const char *p = strstr(name, "/gpu"); p; p = strstr(p + 1, "/gpu"))
		sep = p;
	if (!sep)
		return -1;
	const char *p = sep + 4, *q = p;
	long k = 0;
	while (*q >= '0' && *q <= '9' && k <= MAX_COUNT)
		k = k * 10 + (*q++ - '0');
	if (q == p || *q || (p[0] == '0' && q - p > 1))
		return -1;
	int m = find_machine_n(c, name, (size_t)(sep - name));
	if (m < 0 || k >= c->machines[m].count)
		return -1;
	return c->machines[m].first + (int)k;
}

int cluster_index_link(Cluster *c, Arena *a, int i)
{
	int j = cluster_find_link(c, c->links[i].a, c->links[i].b);
	if (j < 0)
		ix_add(c, a, &c->link_ix, i, ++c->nlinked);
	return j;
}

int cluster_find_link(const Cluster *c, int a, int b)
{
	if (a > b) {
		int t = a;
		a = b;
		b = t;
	}
	return ix_find(c, &c->link_ix, (Key){NULL, 0, a, b});
}

static bool pos(double x)
{
	return x > 0 && !isinf(x);
}

static bool nonneg(double x)
{
	return x >= 0 && !isinf(x);
}

int cluster_finalize(Cluster *c, Arena *a, Diag *d)
{
	int nerr = 0;
#define ERR(loc, ...) (diag_error(d, (loc), __VA_ARGS__), nerr++)
	for (int i = 0; i < c->ntypes; i++) {
		const DevType *t = &c->types[i];
		if (!pos(t->flops))
			ERR(t->loc, "device type '%s': flops must be positive",
			    t->name);
		if (!pos(t->memory))
			ERR(t->loc, "device type '%s': memory must be positive",
			    t->name);
		if (!nonneg(t->mem_bw))
			ERR(t->loc, "device type '%s': mem_bw must be positive",
			    t->name);
		if (t->overhead_given && !nonneg(t->overhead))
			ERR(t->loc, "device type '%s': overhead must not be "
			    "negative", t->name);
		if (!nonneg(t->cuda_flops))
			ERR(t->loc, "device type '%s': cuda_core_flops must be "
			    "positive", t->name);
		if (!nonneg(t->launch))
			ERR(t->loc, "device type '%s': launch must not be "
			    "negative", t->name);
		if (!(t->sms == 0 || (t->sms >= 1 && t->sms <= 1e6 &&
				      t->sms == (double)(long)t->sms)))
			ERR(t->loc, "device type '%s': sms must be a whole "
			    "number, 1 or more", t->name);
		if (t->mem_eff_given && !(t->mem_eff > 0 && t->mem_eff <= 1))
			ERR(t->loc, "device type '%s': mem_efficiency must be "
			    "in (0, 1]", t->name);
		if (t->kern_eff_given && !pos(t->kern_eff))
			ERR(t->loc, "device type '%s': kernel_efficiency must "
			    "be positive", t->name);
		if (t->gemm_eff_given && !pos(t->gemm_eff))
			ERR(t->loc, "device type '%s': gemm_efficiency must "
			    "be positive", t->name);
		for (int k = 0; t->eff_given && k < OC_COUNT; k++)
			if (!(t->eff[k] > 0 && t->eff[k] <= 1)) {
				ERR(t->loc, "device type '%s': efficiency must be "
				    "in (0, 1]", t->name);
				break;
			}
	}
	if (c->nmachines == 0)
		ERR(c->loc, "the cluster has no machines");
	long ndevs = 0;
	for (int i = 0; i < c->nmachines; i++) {
		const Machine *m = &c->machines[i];
		if (m->type < 0 || m->type >= c->ntypes)
			ERR(m->loc, "machine '%s': unknown device type", m->name);
		if (m->count < 1 || m->count > MAX_COUNT)
			ERR(m->loc, "machine '%s': count must be between 1 and %d",
			    m->name, MAX_COUNT);
		else
			ndevs += m->count;
		if (m->count > 1 ? !pos(m->bw) : !nonneg(m->bw))
			ERR(m->loc, "machine '%s': link bandwidth must be positive",
			    m->name);
		if (!nonneg(m->lat))
			ERR(m->loc, "machine '%s': link latency must not be "
			    "negative", m->name);
	}
	if (ndevs > MAX_DEVS)
		ERR(c->loc, "too many devices (%ld, at most %d)", ndevs, MAX_DEVS);
	bool net_given = c->net_bw != 0 || c->net_lat != 0;
	if (c->nmachines > 1 && !net_given)
		ERR(c->loc, "network required: the cluster has %d machines",
		    c->nmachines);
	else if (net_given && !pos(c->net_bw))
		ERR(c->loc, "network bandwidth must be positive");
	else if (net_given && !nonneg(c->net_lat))
		ERR(c->loc, "network latency must not be negative");
	else if (c->coll_bw != 0 && !pos(c->coll_bw))
		ERR(c->loc, "network collective_bandwidth must be positive");
	else if (c->coll_bw != 0 && !nonneg(c->coll_lat))
		ERR(c->loc, "network collective_latency must not be negative");
	else if (!nonneg(c->dispatch))
		ERR(c->loc, "network dispatch_latency must not be negative");
	c->link_ix = (struct ClusterIx){0};
	c->nlinked = 0;
	for (int i = 0; i < c->nlinks; i++) {
		LinkOverride *l = &c->links[i];
		const char *na = c->link_ends[2 * i], *nb = c->link_ends[2 * i + 1];
		l->a = cluster_find_device(c, na);
		l->b = cluster_find_device(c, nb);
		if (l->a < 0)
			ERR(l->loc, "link to unknown device '%s'", na);
		if (l->b < 0)
			ERR(l->loc, "link to unknown device '%s'", nb);
		if (l->a >= 0 && l->a == l->b)
			ERR(l->loc, "link from device '%s' to itself", na);
		if (!pos(l->bw))
			ERR(l->loc, "link bandwidth must be positive");
		if (isnan(l->lat) || isinf(l->lat))
			ERR(l->loc, "link latency must be a finite number");
		if (l->a >= 0 && l->b >= 0 && l->a != l->b &&
		    cluster_index_link(c, a, i) >= 0)
			ERR(l->loc, "duplicate link between '%s' and '%s'", na, nb);
	}
#undef ERR
	if (nerr)
		return nerr;
	c->ndevs = (int)ndevs;
	c->devs = arena_alloc(a, sizeof *c->devs * (size_t)(ndevs ? ndevs : 1));
	int k = 0;
	for (int i = 0; i < c->nmachines; i++)
		for (int j = 0; j < c->machines[i].count; j++, k++)
			c->devs[k] = (Device){
				arena_printf(a, "%s/gpu%d", c->machines[i].name, j),
				c->machines[i].type, i, j};
	return 0;
}

Route cluster_route(const Cluster *c, int a, int b)
{
	Route r = {ROUTE_LOCAL, -1, 0, c->devs[a].machine, c->devs[b].machine};
	if (a == b)
		return r;
	int l = cluster_find_link(c, a, b);
	if (l >= 0) {
		r.kind = ROUTE_LINK;
		r.link = l;
		r.dir = c->links[l].a == a ? 0 : 1;
	} else {
		r.kind = r.ma == r.mb ? ROUTE_PAIR : ROUTE_NET;
	}
	return r;
}

void cluster_link(const Cluster *c, int a, int b, double *bw, double *lat)
{
	if (a < 0 || b < 0 || a >= c->ndevs || b >= c->ndevs)
		pcc_die("cluster_link: device %d or %d out of range", a, b);
	Route r = cluster_route(c, a, b);
	const Machine *m = &c->machines[r.ma];
	/* a link override's latency defaults to its devices' (machine or
	 * network) latency */
	double dlat = r.ma == r.mb ? m->lat : c->net_lat;
	switch (r.kind) {
	case ROUTE_LOCAL:
		*bw = INFINITY;
		*lat = 0;
		break;
	case ROUTE_LINK:
		*bw = c->links[r.link].bw;
		*lat = c->links[r.link].lat >= 0 ? c->links[r.link].lat : dlat;
		break;
	case ROUTE_PAIR:
		*bw = m->bw;
		*lat = dlat;
		break;
	case ROUTE_NET:
		*bw = c->net_bw;
		*lat = dlat;
		break;
	}
}

void cluster_coll_link(const Cluster *c, int a, int b, double *bw,
		       double *lat)
{
	cluster_link(c, a, b, bw, lat);
	if (c->coll_bw > 0 && cluster_route(c, a, b).kind == ROUTE_NET) {
		*bw = c->coll_bw;
		*lat = c->coll_lat;
	}
}

Cluster *cluster_default(Arena *a)
{
	Cluster *c = cluster_new(a, "default: 1 machine, 2x V100-16G, NVLink");
	DevType t = {.name = "V100-16G", .flops = 15.7e12,
		     .memory = 16.0 * 1073741824.0, .mem_bw = 900e9};
	cluster_add_type(c, a, &t);
	Machine m = {.name = "m0", .type = 0, .count = 2, .bw = 25e9,
		     .lat = 2e-6};
	cluster_add_machine(c, a, &m);
	c->net_bw = 12.5e9;
	c->net_lat = 10e-6;
	c->is_default = true;
	Diag d;
	diag_init(&d, stderr, "<default cluster>", NULL, 0);
	if (cluster_finalize(c, a, &d))
		pcc_die("the built-in default cluster is invalid");
	return c;
}

static void *dup_array(Arena *a, const void *p, size_t n, size_t sz)
{
	if (!p)
		return NULL;
	void *q = arena_alloc(a, cap_for(n) * sz);
	memcpy(q, p, n * sz);
	return q;
}

static struct ClusterIx ix_clone(Arena *a, const struct ClusterIx *ix)
{
	if (!ix->cap)
		return (struct ClusterIx){0};
	int *slot = arena_alloc(a, sizeof(int) * ix->cap);
	memcpy(slot, ix->slot, sizeof(int) * ix->cap);
	return (struct ClusterIx){slot, ix->cap};
}

Cluster *cluster_clone(Arena *a, const Cluster *c)
{
	Cluster *n = arena_alloc(a, sizeof *n);
	*n = *c;
	n->name = arena_strdup(a, c->name ? c->name : "");
	n->types = dup_array(a, c->types, (size_t)c->ntypes, sizeof *c->types);
	for (int i = 0; i < c->ntypes; i++) {
		n->types[i].name = arena_strdup(a, c->types[i].name);
		if (c->types[i].gpu == c->types[i].name)
			n->types[i].gpu = n->types[i].name;
	}
	n->machines = dup_array(a, c->machines, (size_t)c->nmachines,
				sizeof *c->machines);
	for (int i = 0; i < c->nmachines; i++)
		n->machines[i].name = arena_strdup(a, c->machines[i].name);
	n->devs = c->devs ? arena_alloc(a, sizeof *c->devs *
					       (size_t)(c->ndevs ? c->ndevs : 1))
			  : NULL;
	for (int i = 0; c->devs && i < c->ndevs; i++) {
		n->devs[i] = c->devs[i];
		n->devs[i].name = arena_strdup(a, c->devs[i].name);
	}
	n->links = dup_array(a, c->links, (size_t)c->nlinks, sizeof *c->links);
	n->type_ix = ix_clone(a, &c->type_ix);
	n->mach_ix = ix_clone(a, &c->mach_ix);
	n->link_ix = ix_clone(a, &c->link_ix);
	n->link_ends = NULL;
	if (c->link_ends) {
		n->link_ends = arena_alloc(a, 2 * cap_for((size_t)c->nlinks) *
						      sizeof(char *));
		for (int i = 0; i < 2 * c->nlinks; i++)
			n->link_ends[i] = arena_strdup(a, c->link_ends[i]);
	}
	return n;
}

static void num_print(FILE *f, double x)
{
	Value v = {.kind = V_FLOAT, .f = x};
	val_print(f, &v);
}

/* Name of an end of link i: from the expanded devices once finalized. */
static const char *link_end(const Cluster *c, int i, int end)
{
	int d = end ? c->links[i].b : c->links[i].a;
	if (d >= 0 && d < c->ndevs && c->devs)
		return c->devs[d].name;
	return c->link_ends ? c->link_ends[2 * i + end] : "?";
}

void cluster_print(FILE *f, const Cluster *c)
{
	fputs("cluster ", f);
	str_print(f, c->name ? c->name : "");
	fputs(" {\n", f);
	for (int i = 0; i < c->ntypes; i++) {
		const DevType *t = &c->types[i];
		fputs("  type ", f);
		str_print(f, t->name);
		fputs(" {flops = ", f);
		qty_print(f, t->flops, UNIT_FLOP_RATE);
		fputs(", memory = ", f);
		qty_print(f, t->memory, UNIT_BYTES);
		if (t->mem_bw != 0) {
			fputs(", mem_bw = ", f);
			qty_print(f, t->mem_bw, UNIT_BYTE_RATE);
		}
		if (t->overhead_given) {
			fputs(", overhead = ", f);
			qty_print(f, t->overhead, UNIT_SECONDS);
		}
		if (t->mem_eff_given) {
			fputs(", mem_efficiency = ", f);
			num_print(f, t->mem_eff);
		}
		if (t->kern_eff_given) {
			fputs(", kernel_efficiency = ", f);
			num_print(f, t->kern_eff);
		}
		if (t->gemm_eff_given) {
			fputs(", gemm_efficiency = ", f);
			num_print(f, t->gemm_eff);
		}
		if (t->coll_blocking)
			fputs(", collectives = \"blocking\"", f);
		if (t->sends_idle)
			fputs(", sends = \"idle\"", f);
		if (t->source_kernels)
			fputs(", kernels = \"source\"", f);
		if (t->launch > 0) {
			fputs(", launch = ", f);
			qty_print(f, t->launch, UNIT_SECONDS);
		}
		if (t->sms > 0)
			fprintf(f, ", sms = %.0f", t->sms);
		if (t->bn_cudnn)
			fputs(", batch_norm = \"cudnn\"", f);
		if (t->cuda_flops > 0) {
			fputs(", cuda_core_flops = ", f);
			qty_print(f, t->cuda_flops, UNIT_FLOP_RATE);
		}
		if (t->tensor_cores)
			fputs(", tensor_cores = true", f);
		if (t->eff_given) {
			fputs(", efficiency = ", f);
			bool same = true;
			for (int k = 1; k < OC_COUNT; k++)
				same = same && t->eff[k] == t->eff[0];
			if (same) {
				num_print(f, t->eff[0]);
			} else {
				fputc('{', f);
				for (int k = 0; k < OC_COUNT; k++) {
					fprintf(f, "%s%s = ", k ? ", " : "",
						opclass_names[k]);
					num_print(f, t->eff[k]);
				}
				fputc('}', f);
			}
		}
		fputs("}\n", f);
	}
	for (int i = 0; i < c->nmachines; i++) {
		const Machine *m = &c->machines[i];
		fputs("  machine ", f);
		str_print(f, m->name);
		fputs(" {type = ", f);
		str_print(f, m->type >= 0 && m->type < c->ntypes
				     ? c->types[m->type].name : "?");
		fprintf(f, ", count = %d, bandwidth = ", m->count);
		qty_print(f, m->bw, UNIT_BYTE_RATE);
		fputs(", latency = ", f);
		qty_print(f, m->lat, UNIT_SECONDS);
		fputs("}\n", f);
	}
	if (c->nmachines > 1 || c->net_bw != 0 || c->net_lat != 0 ||
	    c->dispatch != 0) {
		fputs("  network {bandwidth = ", f);
		qty_print(f, c->net_bw, UNIT_BYTE_RATE);
		fputs(", latency = ", f);
		qty_print(f, c->net_lat, UNIT_SECONDS);
		if (c->coll_bw > 0) {
			fputs(", collective_bandwidth = ", f);
			qty_print(f, c->coll_bw, UNIT_BYTE_RATE);
			fputs(", collective_latency = ", f);
			qty_print(f, c->coll_lat, UNIT_SECONDS);
		}
		if (c->dispatch > 0) {
			fputs(", dispatch_latency = ", f);
			qty_print(f, c->dispatch, UNIT_SECONDS);
		}
		fputs("}\n", f);
	}
	for (int i = 0; i < c->nlinks; i++) {
		const LinkOverride *l = &c->links[i];
		fputs("  link ", f);
		str_print(f, link_end(c, i, 0));
		fputc(' ', f);
		str_print(f, link_end(c, i, 1));
		fputs(" {bandwidth = ", f);
		qty_print(f, l->bw, UNIT_BYTE_RATE);
		if (l->lat >= 0) {
			fputs(", latency = ", f);
			qty_print(f, l->lat, UNIT_SECONDS);
		}
		fputs("}\n", f);
	}
	fputs("}\n", f);
}
