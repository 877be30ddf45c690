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

Cluster *cluster_new(Arena *a, const char *name)
{
	Cluster *c = arena_alloc(a, sizeof *c);
	c->name = arena_strdup(a, name ? name : "");
	return c;
}

int cluster_find_type(const Cluster *c, const char *name)
{
	for (int i = 0; i < c->ntypes; i++)
		if (strcmp(c->types[i].name, name) == 0)
			return i;
	return -1;
}

int cluster_add_type(Cluster *c, Arena *a, const DevType *t)
{
	if (!t->name || cluster_find_type(c, t->name) >= 0)
		return -1;
	c->types = grow(a, c->types, (size_t)c->ntypes, sizeof *c->types);
	DevType *n = &c->types[c->ntypes];
	*n = *t;
	n->name = arena_strdup(a, t->name);
	if (!t->eff_given)
		for (int i = 0; i < OC_COUNT; i++)
			n->eff[i] = 1.0;
	return c->ntypes++;
}

static int find_machine(const Cluster *c, const char *name)
{
	for (int i = 0; i < c->nmachines; i++)
		if (strcmp(c->machines[i].name, name) == 0)
			return i;
	return -1;
}

int cluster_add_machine(Cluster *c, Arena *a, const Machine *m)
{
	if (!m->name || find_machine(c, m->name) >= 0)
		return -1;
	c->machines = grow(a, c->machines, (size_t)c->nmachines,
			   sizeof *c->machines);
	Machine *n = &c->machines[c->nmachines];
	*n = *m;
	n->name = arena_strdup(a, m->name);
	return c->nmachines++;
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

/* Index of device NAME ("MACHINE/gpuK") from the machines alone, so it
 * works before cluster_finalize has expanded devs. */
int cluster_find_device(const Cluster *c, const char *name)
{
	int base = 0;
	for (int i = 0; i < c->nmachines; i++) {
		const Machine *m = &c->machines[i];
		size_t l = strlen(m->name);
		if (strncmp(name, m->name, l) == 0 &&
		    strncmp(name + l, "/gpu", 4) == 0) {
			const char *p = name + l + 4;
			long k = 0;
			const char *q = p;
			while (*q >= '0' && *q <= '9' && k <= MAX_COUNT)
				k = k * 10 + (*q++ - '0');
			/* digits only, no leading zeros */
			if (q > p && !*q && !(p[0] == '0' && q - p > 1) &&
			    k < m->count)
				return base + (int)k;
		}
		if (m->count > 0 && m->count <= MAX_COUNT)
			base += m->count;
	}
	return -1;
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
		for (int j = 0; j < i && l->a >= 0 && l->b >= 0; j++) {
			const LinkOverride *o = &c->links[j];
			if ((o->a == l->a && o->b == l->b) ||
			    (o->a == l->b && o->b == l->a)) {
				ERR(l->loc, "duplicate link between '%s' and '%s'",
				    na, nb);
				break;
			}
		}
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

void cluster_link(const Cluster *c, int a, int b, double *bw, double *lat)
{
	if (a < 0 || b < 0 || a >= c->ndevs || b >= c->ndevs)
		pcc_die("cluster_link: device %d or %d out of range", a, b);
	if (a == b) {
		*bw = INFINITY;
		*lat = 0;
		return;
	}
	const Device *da = &c->devs[a], *db = &c->devs[b];
	double dbw, dlat;
	if (da->machine == db->machine) {
		dbw = c->machines[da->machine].bw;
		dlat = c->machines[da->machine].lat;
	} else {
		dbw = c->net_bw;
		dlat = c->net_lat;
	}
	for (int i = 0; i < c->nlinks; i++) {
		const LinkOverride *l = &c->links[i];
		if ((l->a == a && l->b == b) || (l->a == b && l->b == a)) {
			*bw = l->bw;
			*lat = l->lat >= 0 ? l->lat : dlat;
			return;
		}
	}
	*bw = dbw;
	*lat = dlat;
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

Cluster *cluster_clone(Arena *a, const Cluster *c)
{
	Cluster *n = arena_alloc(a, sizeof *n);
	*n = *c;
	n->name = arena_strdup(a, c->name ? c->name : "");
	n->types = dup_array(a, c->types, (size_t)c->ntypes, sizeof *c->types);
	for (int i = 0; i < c->ntypes; i++)
		n->types[i].name = arena_strdup(a, c->types[i].name);
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
	if (c->nmachines > 1 || c->net_bw != 0 || c->net_lat != 0) {
		fputs("  network {bandwidth = ", f);
		qty_print(f, c->net_bw, UNIT_BYTE_RATE);
		fputs(", latency = ", f);
		qty_print(f, c->net_lat, UNIT_SECONDS);
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
