/* cluster_yaml.c — reads a cluster description in YAML (docs/cluster.md)
 * with libyaml's document API.  The reader walks the schema, never the
 * document's own shape, so its depth is bounded and aliases (even cyclic
 * ones) cannot make it loop.  Every problem is reported with the line and
 * column of the offending node and reading goes on, so one run shows
 * several errors; the cluster is only built (cluster_finalize) when there
 * were none. */
#include "ir.h"
#include "yamlload.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_COUNT 4096                      /* as in cluster.c */
#define MAX_DEVS 65536

typedef struct Rd {
	Arena *a;
	Cluster *c;
	Diag *d;
	yaml_document_t *doc;
	const char *file;
	int nerr;
	long ndevs;
} Rd;

static Loc loc_of(const Rd *r, const yaml_node_t *n)
{
	return (Loc){r->file, (uint32_t)n->start_mark.line + 1,
		     (uint32_t)n->start_mark.column + 1};
}

__attribute__((format(printf, 3, 4)))
static void err(Rd *r, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_verror(r->d, loc_of(r, n), fmt, ap);
	va_end(ap);
	r->nerr++;
}

static const char *kind_name(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE: return "a scalar";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_MAPPING_NODE: return "a mapping";
	default: return "nothing";
	}
}

static yaml_node_t *node(const Rd *r, int id)
{
	return yaml_document_get_node(r->doc, id);
}

/* The text of a scalar, for messages: at most 60 bytes, stops at NUL. */
#define SHOW(n) (int)strnlen((const char *)(n)->data.scalar.value, \
			     (n)->data.scalar.length < 60 \
				     ? (n)->data.scalar.length : 60), \
		(const char *)(n)->data.scalar.value

static bool want(Rd *r, const yaml_node_t *n, yaml_node_type_t t,
		 const char *what)
{
	if (n->type == t)
		return true;
	err(r, n, "%s must be %s, got %s", what,
	    t == YAML_MAPPING_NODE ? "a mapping"
	    : t == YAML_SEQUENCE_NODE ? "a list" : "a scalar",
	    kind_name(n));
	return false;
}

static bool scalar_is(const yaml_node_t *n, const char *s)
{
	size_t l = strlen(s);
	return n->data.scalar.length == l &&
	       memcmp(n->data.scalar.value, s, l) == 0;
}

/* Splits mapping MAP into the values of KEYS (NULL where absent),
 * reporting unknown and repeated keys.  knodes, if given, receives the
 * key nodes. */
static void fields(Rd *r, const yaml_node_t *map, const char *what,
		   const char *const *keys, int nkeys, yaml_node_t **vals,
		   yaml_node_t **knodes)
{
	for (int i = 0; i < nkeys; i++) {
		vals[i] = NULL;
		if (knodes)
			knodes[i] = NULL;
	}
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(r, p->key), *v = node(r, p->value);
		if (!k || !v)
			continue;
		if (k->type != YAML_SCALAR_NODE) {
			err(r, k, "keys in %s must be scalars, got %s", what,
			    kind_name(k));
			continue;
		}
		int i = 0;
		while (i < nkeys && !scalar_is(k, keys[i]))
			i++;
		if (i == nkeys) {
			char valid[256] = "";
			for (int j = 0; j < nkeys; j++) {
				if (j)
					strcat(valid, ", ");
				strcat(valid, keys[j]);
			}
			err(r, k, "unknown key '%.*s' in %s (valid keys: %s)",
			    SHOW(k), what, valid);
		} else if (vals[i]) {
			err(r, k, "duplicate key '%s' in %s", keys[i], what);
		} else {
			vals[i] = v;
			if (knodes)
				knodes[i] = k;
		}
	}
}

/* A name: a non-empty scalar without control characters. */
static const char *name_of(Rd *r, yaml_node_t *n, const char *what)
{
	if (!want(r, n, YAML_SCALAR_NODE, what))
		return NULL;
	const unsigned char *s = n->data.scalar.value;
	size_t l = n->data.scalar.length;
	if (l == 0) {
		err(r, n, "%s must not be empty", what);
		return NULL;
	}
	for (size_t i = 0; i < l; i++)
		if (s[i] < 0x20 || s[i] == 0x7f) {
			err(r, n, "%s must not contain control characters", what);
			return NULL;
		}
	return arena_strndup(r->a, (const char *)s, l);
}

static const char *unit_example(Unit u)
{
	switch (u) {
	case UNIT_BYTES: return "a size such as 32 GiB";
	case UNIT_SECONDS: return "a time such as 2 us";
	case UNIT_BYTE_RATE: return "a bandwidth such as 12 GB/s or 100 Gbps";
	case UNIT_FLOP_RATE: return "a speed such as 15.7 TFLOPS";
	default: return "a number";
	}
}

/* Parses "NUMBER [UNIT]" with unit kind u (UNIT_NONE: no unit allowed).
 * A bare number is in base units. */
static bool quantity(Rd *r, yaml_node_t *n, Unit u, const char *what,
		     double *out)
{
	if (!want(r, n, YAML_SCALAR_NODE, what))
		return false;
	const char *s = (const char *)n->data.scalar.value;
	size_t l = n->data.scalar.length, i = 0;
	while (i < l && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t b = i;
	if (i < l && (s[i] == '+' || s[i] == '-'))
		i++;
	size_t digits = 0;
	while (i < l && s[i] >= '0' && s[i] <= '9')
		i++, digits++;
	if (i < l && s[i] == '.')
		for (i++; i < l && s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
	if (digits && i < l && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1;
		if (j < l && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j < l && s[j] >= '0' && s[j] <= '9') {
			while (j < l && s[j] >= '0' && s[j] <= '9')
				j++;
			i = j;
		}
	}
	char num[64];
	if (!digits || i - b >= sizeof num) {
		err(r, n, "%s must be %s, got '%.*s'", what, unit_example(u),
		    SHOW(n));
		return false;
	}
	memcpy(num, s + b, i - b);
	num[i - b] = 0;
	double x = strtod(num, NULL);
	size_t ub = i;
	while (ub < l && (s[ub] == ' ' || s[ub] == '\t'))
		ub++;
	size_t ue = l;
	while (ue > ub && (s[ue - 1] == ' ' || s[ue - 1] == '\t'))
		ue--;
	if (ue > ub) {
		Unit got;
		double scale;
		if (!unit_parse(s + ub, ue - ub, &got, &scale)) {
			err(r, n, "unknown unit '%.*s' in %s (%s)",
			    (int)strnlen(s + ub, ue - ub < 30 ? ue - ub : 30),
			    s + ub, what, unit_example(u));
			return false;
		}
		if (got != u) {
			err(r, n, "%s must be %s, got '%.*s' (%s)", what,
			    unit_example(u), SHOW(n), unit_name(got));
			return false;
		}
		x *= scale;
	}
	if (isnan(x) || isinf(x)) {
		err(r, n, "%s is out of range: '%.*s'", what, SHOW(n));
		return false;
	}
	*out = x;
	return true;
}

static bool positive(Rd *r, yaml_node_t *n, Unit u, const char *what,
		     double *out)
{
	if (!quantity(r, n, u, what, out))
		return false;
	if (*out <= 0) {
		err(r, n, "%s must be positive, got '%.*s'", what, SHOW(n));
		return false;
	}
	return true;
}

static bool latency(Rd *r, yaml_node_t *n, double *out)
{
	if (!quantity(r, n, UNIT_SECONDS, "latency", out))
		return false;
	if (*out < 0) {
		err(r, n, "latency must not be negative, got '%.*s'", SHOW(n));
		return false;
	}
	return true;
}

static bool efficiency_num(Rd *r, yaml_node_t *n, double *out)
{
	if (!quantity(r, n, UNIT_NONE, "efficiency", out))
		return false;
	if (!(*out > 0 && *out <= 1)) {
		err(r, n, "efficiency must be in (0, 1], got '%.*s'", SHOW(n));
		return false;
	}
	return true;
}

static void efficiency(Rd *r, yaml_node_t *n, DevType *t)
{
	t->eff_given = true;
	if (n->type == YAML_SCALAR_NODE) {
		double e = 1;
		efficiency_num(r, n, &e);
		for (int k = 0; k < OC_COUNT; k++)
			t->eff[k] = e;
		return;
	}
	if (n->type != YAML_MAPPING_NODE) {
		err(r, n, "efficiency must be a number or a mapping from op "
		    "class to number, got %s", kind_name(n));
		return;
	}
	static const char *const keys[] = {
		"matmul", "conv", "elementwise", "reduce", "data", "other",
		"default",
	};
	yaml_node_t *v[OC_COUNT + 1];
	fields(r, n, "efficiency", keys, OC_COUNT + 1, v, NULL);
	double dflt = 1;
	if (v[OC_COUNT])
		efficiency_num(r, v[OC_COUNT], &dflt);
	for (int k = 0; k < OC_COUNT; k++) {
		t->eff[k] = dflt;
		if (v[k])
			efficiency_num(r, v[k], &t->eff[k]);
	}
}

/* A key of two spellings (collectives: overlap | blocking, tensor_cores:
 * false | true, sends: async | idle, kernels: ops | source), when given:
 * *x becomes whether it is the second; anything else is an error naming
 * both. */
static void choice(Rd *r, yaml_node_t *n, const char *key, const char *no,
		   const char *yes, bool *x)
{
	if (!n || !want(r, n, YAML_SCALAR_NODE, key))
		return;
	const char *v = (const char *)n->data.scalar.value;
	if (strcmp(v, yes) == 0 || strcmp(v, no) == 0)
		*x = strcmp(v, yes) == 0;
	else
		err(r, n, "%s must be '%s' or '%s', got '%.*s'", key, no, yes,
		    SHOW(n));
}

/* A positive plain number scaling the cost model (kernel_efficiency,
 * gemm_efficiency): given when present, even if wrong. */
static void factor(Rd *r, yaml_node_t *n, const char *key, double *x,
		   bool *given)
{
	if (!n)
		return;
	*given = true;
	if (quantity(r, n, UNIT_NONE, key, x) && !(*x > 0))
		err(r, n, "%s must be positive, got '%.*s'", key, SHOW(n));
}

static void device_types(Rd *r, yaml_node_t *n)
{
	if (!want(r, n, YAML_MAPPING_NODE, "device_types"))
		return;
	static const char *const keys[] = {"flops", "memory", "mem_bw",
					   "efficiency", "overhead",
					   "mem_efficiency", "kernel_efficiency",
					   "collectives", "tensor_cores", "sends",
					   "gemm_efficiency", "kernels", "launch",
					   "sms", "batch_norm",
					   "cuda_core_flops"};
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(r, p->key), *v = node(r, p->value);
		if (!k || !v)
			continue;
		const char *name = name_of(r, k, "a device type name");
		if (!name)
			continue;
		if (cluster_find_type(r->c, name) >= 0) {
			err(r, k, "duplicate device type '%s'", name);
			continue;
		}
		/* A named type (docs/cluster.md) supplies what is left out. */
		const DevType *named = devtype_named(name);
		DevType t = {.name = name, .loc = loc_of(r, k)};
		if (named) {
			t = *named;
			t.name = name;
			t.loc = loc_of(r, k);
		}
		for (int i = 0; i < OC_COUNT; i++)
			t.eff[i] = 1;
		if (!want(r, v, YAML_MAPPING_NODE, "a device type")) {
			cluster_add_type(r->c, r->a, &t);
			continue;
		}
		yaml_node_t *f[16];
		fields(r, v, "a device type", keys, 16, f, NULL);
		if (!f[0] && !named)
			err(r, v, "device type '%s' is missing 'flops'", name);
		else if (f[0])
			positive(r, f[0], UNIT_FLOP_RATE, "flops", &t.flops);
		if (!f[1] && !named)
			err(r, v, "device type '%s' is missing 'memory'", name);
		else if (f[1])
			positive(r, f[1], UNIT_BYTES, "memory", &t.memory);
		if (f[2])
			positive(r, f[2], UNIT_BYTE_RATE, "mem_bw", &t.mem_bw);
		if (f[3])
			efficiency(r, f[3], &t);
		if (f[4]) {
			t.overhead_given = true;
			if (quantity(r, f[4], UNIT_SECONDS, "overhead",
				     &t.overhead) && t.overhead < 0)
				err(r, f[4], "overhead must not be negative, "
				    "got '%.*s'", SHOW(f[4]));
		}
		if (f[5]) {
			t.mem_eff_given = true;
			if (quantity(r, f[5], UNIT_NONE, "mem_efficiency",
				     &t.mem_eff) &&
			    !(t.mem_eff > 0 && t.mem_eff <= 1))
				err(r, f[5], "mem_efficiency must be in (0, 1], "
				    "got '%.*s'", SHOW(f[5]));
		}
		factor(r, f[6], "kernel_efficiency", &t.kern_eff,
		       &t.kern_eff_given);
		factor(r, f[10], "gemm_efficiency", &t.gemm_eff,
		       &t.gemm_eff_given);
		choice(r, f[7], "collectives", "overlap", "blocking",
		       &t.coll_blocking);
		choice(r, f[8], "tensor_cores", "false", "true", &t.tensor_cores);
		choice(r, f[9], "sends", "async", "idle", &t.sends_idle);
		choice(r, f[11], "kernels", "ops", "source", &t.source_kernels);
		if (f[12] && quantity(r, f[12], UNIT_SECONDS, "launch", &t.launch) &&
		    t.launch < 0)
			err(r, f[12], "launch must not be negative, got '%.*s'",
			    SHOW(f[12]));
		if (f[13] && quantity(r, f[13], UNIT_NONE, "sms", &t.sms) &&
		    !(t.sms >= 1 && t.sms <= 1e6 && t.sms == (double)(long)t.sms))
			err(r, f[13], "sms must be a whole number of "
			    "multiprocessors, 1 or more, got '%.*s'", SHOW(f[13]));
		choice(r, f[14], "batch_norm", "fused", "cudnn", &t.bn_cudnn);
		if (f[15])
			positive(r, f[15], UNIT_FLOP_RATE, "cuda_core_flops",
				 &t.cuda_flops);
		cluster_add_type(r->c, r->a, &t);
	}
}

/* link: {bandwidth, latency} of a machine or the network. */
static void link_spec(Rd *r, yaml_node_t *n, const char *what, double *bw,
		      double *lat)
{
	if (!want(r, n, YAML_MAPPING_NODE, what))
		return;
	static const char *const keys[] = {"bandwidth", "latency"};
	yaml_node_t *f[2];
	fields(r, n, what, keys, 2, f, NULL);
	if (!f[0])
		err(r, n, "%s is missing 'bandwidth'", what);
	else
		positive(r, f[0], UNIT_BYTE_RATE, "bandwidth", bw);
	if (f[1])
		latency(r, f[1], lat);
}

/* network: a link spec, optionally the figures of a collective's ring
 * step across it (collective_latency defaults to latency) and a step's
 * dispatch latency to the other machines. */
static void network_spec(Rd *r, yaml_node_t *n)
{
	if (!want(r, n, YAML_MAPPING_NODE, "network"))
		return;
	static const char *const keys[] = {"bandwidth", "latency",
					   "collective_bandwidth",
					   "collective_latency",
					   "dispatch_latency"};
	yaml_node_t *f[5];
	fields(r, n, "network", keys, 5, f, NULL);
	Cluster *c = r->c;
	if (!f[0])
		err(r, n, "network is missing 'bandwidth'");
	else
		positive(r, f[0], UNIT_BYTE_RATE, "bandwidth", &c->net_bw);
	if (f[1])
		latency(r, f[1], &c->net_lat);
	double lat = -1;
	if (f[3])
		latency(r, f[3], &lat);
	if (f[2])
		positive(r, f[2], UNIT_BYTE_RATE, "collective_bandwidth",
			 &c->coll_bw);
	else if (f[3])
		err(r, f[3], "collective_latency needs collective_bandwidth");
	if (c->coll_bw > 0)
		c->coll_lat = lat >= 0 ? lat : c->net_lat;
	if (f[4])
		latency(r, f[4], &c->dispatch);
}

static void count_of(Rd *r, yaml_node_t *n, int *count)
{
	if (!want(r, n, YAML_SCALAR_NODE, "count"))
		return;
	const char *s = (const char *)n->data.scalar.value;
	size_t l = n->data.scalar.length, i = 0;
	bool neg = l > 0 && s[0] == '-';
	if (l > 0 && (s[0] == '-' || s[0] == '+'))
		i++;
	long v = 0;
	size_t b = i;
	for (; i < l && s[i] >= '0' && s[i] <= '9'; i++)
		if (v <= MAX_COUNT)
			v = v * 10 + (s[i] - '0');
	if (i == b || i != l || neg || v < 1) {
		err(r, n, "count must be a positive integer, got '%.*s'",
		    SHOW(n));
		return;
	}
	if (v > MAX_COUNT) {
		err(r, n, "count must be at most %d, got '%.*s'", MAX_COUNT,
		    SHOW(n));
		return;
	}
	*count = (int)v;
}

/* Feeds sg the names of c's device types and of the named ones. */
static void suggest_types(Suggest *sg, const Cluster *c)
{
	for (int i = 0; i < c->ntypes; i++)
		suggest_add(sg, c->types[i].name);
	for (const char *q = devtype_names(); *q;) {
		size_t n = strcspn(q, ",");
		suggest_addn(sg, q, n);
		q += n + strspn(q + n, ", ");
	}
}

static void machines(Rd *r, yaml_node_t *n)
{
	if (!want(r, n, YAML_SEQUENCE_NODE, "machines"))
		return;
	static const char *const keys[] = {"name", "type", "count", "link"};
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *m = node(r, *it);
		if (!m || !want(r, m, YAML_MAPPING_NODE, "a machine"))
			continue;
		yaml_node_t *f[4];
		fields(r, m, "a machine", keys, 4, f, NULL);
		Machine mc = {.type = -1, .count = 1, .loc = loc_of(r, m)};
		if (!f[0])
			err(r, m, "machine is missing 'name'");
		else
			mc.name = name_of(r, f[0], "a machine name");
		if (!f[1]) {
			err(r, m, "machine is missing 'type'");
		} else if (want(r, f[1], YAML_SCALAR_NODE, "type")) {
			char *tn = arena_strndup(
				r->a, (const char *)f[1]->data.scalar.value,
				f[1]->data.scalar.length);
			mc.type = cluster_find_type(r->c, tn);
			const DevType *named = devtype_spelled(tn);
			/* another spelling of a named type ("Tesla
			 * V100-SXM2-16GB") is that type, under its name */
			if (mc.type < 0 && named)
				mc.type = cluster_find_type(r->c, named->name);
			if (mc.type < 0 && named) {
				DevType t = *named;
				t.loc = loc_of(r, f[1]);
				mc.type = cluster_add_type(r->c, r->a, &t);
			} else if (mc.type < 0) {
				char known[200] = "";
				size_t kl = 0;
				for (int i = 0; i < r->c->ntypes; i++) {
					const char *t = r->c->types[i].name;
					if (kl + strlen(t) + 8 >= sizeof known) {
						strcpy(known + kl, ", ...");
						break;
					}
					kl += (size_t)sprintf(known + kl, "%s%s",
							      i ? ", " : "", t);
				}
				Suggest sg;
				suggest_init(&sg, tn);
				suggest_types(&sg, r->c);
				err(r, f[1], "unknown device type '%.*s'%s "
				    "(known: %s; named: %s)%s", SHOW(f[1]),
				    suggest_hint(&sg),
				    r->c->ntypes ? known : "none",
				    devtype_names(), suggest_best(&sg) ? "" :
				    "; a GPU not named there is defined under "
				    "'device_types' with its 'flops' and "
				    "'memory' (docs/cluster.md)");
			}
		}
		if (f[2])
			count_of(r, f[2], &mc.count);
		if (f[3])
			link_spec(r, f[3], "link", &mc.bw, &mc.lat);
		else if (mc.count > 1)
			err(r, m, "machine with %d devices is missing 'link' "
			    "(bandwidth and latency between its devices)",
			    mc.count);
		if (!mc.name)
			continue;
		if (r->ndevs + mc.count > MAX_DEVS) {
			err(r, m, "too many devices (at most %d)", MAX_DEVS);
			continue;
		}
		if (cluster_add_machine(r->c, r->a, &mc) < 0) {
			err(r, f[0], "duplicate machine name '%s'", mc.name);
			continue;
		}
		r->ndevs += mc.count;
	}
}

static void links(Rd *r, yaml_node_t *n)
{
	if (!want(r, n, YAML_SEQUENCE_NODE, "links"))
		return;
	static const char *const keys[] = {"between", "bandwidth", "latency"};
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *l = node(r, *it);
		if (!l || !want(r, l, YAML_MAPPING_NODE, "a link"))
			continue;
		yaml_node_t *f[3];
		fields(r, l, "a link", keys, 3, f, NULL);
		bool ok = true;
		const char *end[2] = {NULL, NULL};
		int dev[2] = {-1, -1};
		if (!f[0]) {
			err(r, l, "link is missing 'between'");
			ok = false;
		} else if (f[0]->type != YAML_SEQUENCE_NODE ||
			   f[0]->data.sequence.items.top -
					   f[0]->data.sequence.items.start != 2) {
			err(r, f[0], "'between' must be a list of two device "
			    "names");
			ok = false;
		} else {
			for (int e = 0; e < 2; e++) {
				yaml_node_t *dn = node(
					r, f[0]->data.sequence.items.start[e]);
				if (!dn || !(end[e] = name_of(r, dn,
							      "a device name"))) {
					ok = false;
					continue;
				}
				dev[e] = cluster_find_device(r->c, end[e]);
				if (dev[e] < 0) {
					err(r, dn, "link to unknown device '%s'",
					    end[e]);
					ok = false;
				}
			}
			if (ok && dev[0] == dev[1]) {
				err(r, f[0], "link from device '%s' to itself",
				    end[0]);
				ok = false;
			}
		}
		double bw = 0, lat = -1;
		if (!f[1]) {
			err(r, l, "link is missing 'bandwidth'");
			ok = false;
		} else if (!positive(r, f[1], UNIT_BYTE_RATE, "bandwidth", &bw)) {
			ok = false;
		}
		if (f[2] && !latency(r, f[2], &lat))
			ok = false;
		if (!ok)
			continue;
		Cluster *c = r->c;
		cluster_add_link(c, r->a, end[0], end[1], bw, lat, loc_of(r, l));
		c->links[c->nlinks - 1].a = dev[0];
		c->links[c->nlinks - 1].b = dev[1];
		if (cluster_index_link(c, r->a, c->nlinks - 1) >= 0) {
			err(r, l, "duplicate link between '%s' and '%s'", end[0],
			    end[1]);
			c->nlinks--;
		}
	}
}

/* "dir/tag-testbed.yaml" -> "tag-testbed" */
static const char *base_name(Arena *a, const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	const char *e = strrchr(b, '.');
	return arena_strndup(a, b, e && e > b ? (size_t)(e - b) : strlen(b));
}

/* ---- loading (yamlload.h) ------------------------------------------- */

static Loc yaml_loc(const char *file, yaml_mark_t m)
{
	return (Loc){file, (uint32_t)m.line + 1, (uint32_t)m.column + 1};
}

void yaml_report_error(Diag *d, const char *file, const yaml_parser_t *p)
{
	yaml_mark_t m = p->problem_mark;
	if (p->error == YAML_READER_ERROR || p->error == YAML_MEMORY_ERROR)
		m = p->mark;
	const char *problem = p->problem ? p->problem : "invalid YAML";
	/* libyaml's context_mark is the opening token of the collection
	 * it was parsing ("while parsing a flow mapping"): the place to
	 * fix, when it comes before the point where the problem showed */
	bool opener = p->context && (p->context_mark.line < m.line ||
				     (p->context_mark.line == m.line &&
				      p->context_mark.column < m.column));
	if (opener) {
		diag_error(d, yaml_loc(file, p->context_mark),
			   "YAML syntax error: %s %s that starts here", problem,
			   p->context);
		diag_note(d, yaml_loc(file, m), "where the parser noticed");
	} else if (p->context) {
		diag_error(d, yaml_loc(file, m), "YAML syntax error: %s %s",
			   problem, p->context);
	} else {
		diag_error(d, yaml_loc(file, m), "YAML syntax error: %s", problem);
	}
}

/* Does text nest deeper than YAML_MAX_DEPTH?  Reads its events with a
 * parser of its own, stopping at the first too deep (so the check costs
 * O(len * YAML_MAX_DEPTH) at most) or at a syntax error (left for the
 * load to report). */
static bool too_deep(const char *file, const char *text, size_t len, Diag *d)
{
	yaml_parser_t q;
	if (!yaml_parser_initialize(&q))
		pcc_die("out of memory (libyaml)");
	yaml_parser_set_input_string(&q, (const unsigned char *)text, len);
	int depth = 0;
	bool deep = false, done = false;
	while (!done && !deep) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&q, &ev))
			break;
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > YAML_MAX_DEPTH) {
				diag_error(d, yaml_loc(file, ev.start_mark),
					   "YAML nested more than %d levels deep",
					   YAML_MAX_DEPTH);
				deep = true;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&q);
	return deep;
}

bool yaml_load_checked(yaml_parser_t *p, yaml_document_t *doc, bool first,
		       const char *file, const char *text, size_t len, Diag *d)
{
	if (first && too_deep(file, text, len, d))
		return false;
	if (yaml_parser_load(p, doc))
		return true;
	yaml_report_error(d, file, p);
	return false;
}

static bool load_doc(Rd *r, yaml_parser_t *p, yaml_document_t *doc, bool first,
		     const char *text, size_t len)
{
	if (yaml_load_checked(p, doc, first, r->file, text, len, r->d))
		return true;
	r->nerr++;
	return false;
}

static void top(Rd *r, yaml_node_t *root, const char *path)
{
	r->c->loc = loc_of(r, root);
	if (!want(r, root, YAML_MAPPING_NODE, "a cluster description"))
		return;
	static const char *const keys[] = {"name", "device_types", "machines",
					   "network", "links"};
	yaml_node_t *f[5];
	fields(r, root, "the cluster description", keys, 5, f, NULL);
	if (f[0]) {
		const char *name = name_of(r, f[0], "name");
		if (name)
			r->c->name = name;
	} else {
		r->c->name = base_name(r->a, path);
	}
	if (f[1])
		device_types(r, f[1]);
	if (f[2])
		machines(r, f[2]);
	else
		err(r, root, "missing 'machines'");
	if (f[3]) {
		network_spec(r, f[3]);
	} else if (r->c->nmachines > 1) {
		err(r, root, "network required: the cluster has %d machines "
		    "(add 'network: {bandwidth: ..., latency: ...}')",
		    r->c->nmachines);
	}
	if (f[2] && f[2]->type == YAML_SEQUENCE_NODE && r->c->nmachines == 0 &&
	    r->nerr == 0)
		err(r, f[2], "the cluster has no machines");
	if (f[4])
		links(r, f[4]);
}

Cluster *cluster_parse_yaml(Arena *a, const char *path, const char *text,
			    size_t len, Diag *d)
{
	const char *old_src = d->src, *old_file = d->file;
	size_t old_len = d->srclen;
	if (!d->src) {
		d->src = text;
		d->srclen = len;
	}
	if (!d->file)
		d->file = path;
	Rd r = {.a = a, .d = d, .file = arena_strdup(a, path ? path : "-")};
	r.c = cluster_new(a, "");
	yaml_parser_t p;
	yaml_document_t doc;
	bool have_doc = false;
	if (!yaml_parser_initialize(&p))
		pcc_die("out of memory (libyaml)");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!load_doc(&r, &p, &doc, true, text, len))
		goto out;
	have_doc = true;
	r.doc = &doc;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		diag_error(d, (Loc){r.file, 1, 1}, "empty cluster description");
		r.nerr++;
		goto out;
	}
	top(&r, root, r.file);
	/* a second document is an error (and so is a syntax error in it) */
	yaml_document_t next;
	if (load_doc(&r, &p, &next, false, text, len)) {
		yaml_node_t *n2 = yaml_document_get_root_node(&next);
		if (n2) {
			r.doc = &next;
			err(&r, n2, "a cluster file holds one YAML document");
			r.doc = &doc;
		}
		yaml_document_delete(&next);
	}
	if (!r.nerr && cluster_finalize(r.c, a, d))
		r.nerr++;
out:
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	d->src = old_src;
	d->srclen = old_len;
	d->file = old_file;
	return r.nerr ? NULL : r.c;
}

Cluster *cluster_read_yaml(Arena *a, const char *path, Diag *d)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text) {
		diag_error(d, (Loc){path, 0, 0}, "cannot read '%s': %s", path,
			   read_error(errno));
		return NULL;
	}
	Cluster *c = cluster_parse_yaml(a, path, text, len, d);
	free(text);
	return c;
}
