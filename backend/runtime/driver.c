/* driver.c — pcc_main: runs one training step of a generated program
 * and prints its results.
 *
 * Set-up is single-threaded: every buffer is allocated on its device and
 * initialised from its seed description, then channels, collectives and
 * events are made.  The step starts one thread per device, each running
 * the device's generated function; the driver joins them all.  Results
 * are gathered on the host: a parameter's copies must hold identical
 * bits (one line), a graph output's replicas are concatenated along
 * their batch axis or summed.  Every line is "NAME SUM L2" with 9
 * significant digits; --values prints no summary but one line per element
 * (--values=N: N elements evenly spaced, for tensors of millions). */
#include "rt_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Run {
	const pcc_program *p;
	pcc_rt *rt;
	pcc_buf **buf;
	pcc_chan **chan;
	pcc_coll **coll;
	pcc_event **event;
	pcc_handles h;
} Run;

typedef struct DevArg {
	Run *run;
	int dev;
} DevArg;

static void *dev_main(void *arg)
{
	DevArg *da = arg;
	Run *r = da->run;
	r->p->run[da->dev](pcc_rt_dev(r->rt, da->dev), &r->h);
	return NULL;
}

static void setup(Run *r, const pcc_program *p)
{
	memset(r, 0, sizeof *r);
	r->p = p;
	r->rt = pcc_rt_new(p->ndevs, p->dev_names);
	r->buf = rt_alloc(sizeof(pcc_buf *) * (size_t)(p->nbufs + 1));
	r->chan = rt_alloc(sizeof(pcc_chan *) * (size_t)(p->nchans + 1));
	r->coll = rt_alloc(sizeof(pcc_coll *) * (size_t)(p->ncolls + 1));
	r->event = rt_alloc(sizeof(pcc_event *) * (size_t)(p->nevents + 1));
	for (int i = 0; i < p->nbufs; i++) {
		const pcc_buf_info *bi = &p->bufs[i];
		r->buf[i] = pcc_buf_new(r->rt, bi->dev, bi->name, bi->dt, bi->rank,
					bi->dims);
		pcc_buf_init(r->buf[i], &bi->init, p->seed);
	}
	for (int i = 0; i < p->nchans; i++) {
		if (p->chans[i].dst < 0 || p->chans[i].dst >= p->nbufs)
			rt_fatal("channel %d has no buffer %d", i, p->chans[i].dst);
		r->chan[i] = pcc_chan_new(r->rt, p->chans[i].src_dev,
					  r->buf[p->chans[i].dst]);
	}
	for (int i = 0; i < p->ncolls; i++)
		r->coll[i] = pcc_coll_new(r->rt, p->colls[i].key, p->colls[i].algo,
					  p->colls[i].n, p->colls[i].devs);
	for (int i = 0; i < p->nevents; i++)
		r->event[i] = pcc_event_new(r->rt);
	r->h = (pcc_handles){r->buf, r->chan, r->coll, r->event};
}

static void teardown(Run *r)
{
	pcc_rt_free(r->rt);
	free(r->buf);
	free(r->chan);
	free(r->coll);
	free(r->event);
}

static void step(Run *r)
{
	int n = r->p->ndevs;
	pthread_t *t = rt_alloc(sizeof(pthread_t) * (size_t)n);
	DevArg *args = rt_alloc(sizeof(DevArg) * (size_t)n);
	for (int i = 0; i < n; i++) {
		args[i] = (DevArg){r, i};
		if (pthread_create(&t[i], NULL, dev_main, &args[i]) != 0)
			rt_fatal("cannot start the thread of device %s",
				 r->p->dev_names[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	free(args);
}

/* The buffer's elements as doubles (malloc'd). */
static double *host_values(const pcc_buf *b)
{
	size_t n = (size_t)b->numel;
	void *raw = rt_alloc(n * rt_dtype_size(b->dt));
	double *v = rt_alloc(sizeof(double) * (n ? n : 1));
	pcc_buf_read(b, raw);
	for (size_t i = 0; i < n; i++)
		v[i] = b->dt == PCC_F32 ? ((float *)raw)[i]
		       : b->dt == PCC_I32 ? ((int32_t *)raw)[i]
		       : b->dt == PCC_BOOL ? ((uint8_t *)raw)[i]
		       : (double)((int64_t *)raw)[i];
	free(raw);
	return v;
}

/* The whole value of result res (malloc'd, *n elements); 1 when copies
 * of a parameter differ (reported on stderr). */
static int gather(const Run *r, const pcc_result_info *res, double **out,
		  int64_t *n)
{
	const pcc_buf *b0 = r->buf[res->bufs[0]];
	int status = 0;
	if (res->kind == PCC_RES_COPIES || res->n == 1) {
		*n = b0->numel;
		*out = host_values(b0);
		for (int i = 1; i < res->n; i++) {
			const pcc_buf *b = r->buf[res->bufs[i]];
			if (b->numel != b0->numel)
				rt_fatal("'%s': copies '%s' and '%s' differ in size",
					 res->name, b0->name, b->name);
			double *v = host_values(b), worst = 0;
			for (int64_t e = 0; e < b->numel; e++)
				if (fabs(v[e] - (*out)[e]) > worst)
					worst = fabs(v[e] - (*out)[e]);
			if (memcmp(v, *out, sizeof(double) * (size_t)b->numel)) {
				fprintf(stderr, "pcc_rt: error: the copies of '%s' differ "
					"after the step: '%s' and '%s' (largest "
					"difference %.9g): the plan does not keep them "
					"in sync\n", res->name, b0->name, b->name, worst);
				status = 1;
			}
			free(v);
		}
		return status;
	}
	if (res->kind == PCC_RES_SUM) {
		*n = b0->numel;
		*out = host_values(b0);
		for (int i = 1; i < res->n; i++) {
			const pcc_buf *b = r->buf[res->bufs[i]];
			if (b->numel != b0->numel)
				rt_fatal("'%s': parts '%s' and '%s' differ in size",
					 res->name, b0->name, b->name);
			double *v = host_values(b);
			for (int64_t e = 0; e < b->numel; e++)
				(*out)[e] = (float)((float)(*out)[e] + (float)v[e]);
			free(v);
		}
		return 0;
	}
	/* CONCAT along axis, each piece at its begin. */
	int ax = res->axis;
	if (ax < 0 || ax >= b0->rank)
		rt_fatal("'%s': no axis %d to concatenate along", res->name, ax);
	int64_t full = 0, outer = 1, inner = 1;
	for (int i = 0; i < res->n; i++) {
		const pcc_buf *b = r->buf[res->bufs[i]];
		bool ok = b->rank == b0->rank;
		for (int d = 0; ok && d < b->rank; d++)
			ok = d == ax || b->dims[d] == b0->dims[d];
		if (!ok || res->begins[i] < 0)
			rt_fatal("'%s': replica '%s' does not fit beside '%s'",
				 res->name, b->name, b0->name);
		if (res->begins[i] + b->dims[ax] > full)
			full = res->begins[i] + b->dims[ax];
	}
	for (int d = 0; d < ax; d++)
		outer *= b0->dims[d];
	for (int d = ax + 1; d < b0->rank; d++)
		inner *= b0->dims[d];
	*n = outer * full * inner;
	*out = rt_alloc(sizeof(double) * (size_t)(*n ? *n : 1));
	for (int i = 0; i < res->n; i++) {
		const pcc_buf *b = r->buf[res->bufs[i]];
		double *v = host_values(b);
		int64_t rows = b->dims[ax];
		for (int64_t o = 0; o < outer; o++)
			memcpy(*out + (o * full + res->begins[i]) * inner,
			       v + o * rows * inner,
			       sizeof(double) * (size_t)(rows * inner));
		free(v);
	}
	return 0;
}

int pcc_program_run(const pcc_program *p, int do_step, int64_t values,
		    FILE *out)
{
	if (p->api_version != PCC_RT_API_VERSION)
		rt_fatal("the program was generated for runtime API %d; this "
			 "runtime implements %d", p->api_version,
			 PCC_RT_API_VERSION);
	Run r;
	setup(&r, p);
	if (do_step)
		step(&r);
	int status = 0;
	for (int i = 0; i < p->nresults; i++) {
		const pcc_result_info *res = &p->results[i];
		if (!do_step && !res->is_param)
			continue;
		double *v;
		int64_t n;
		status |= gather(&r, res, &v, &n);
		if (values) {
			/* all n elements, or `values` of them evenly spaced */
			int64_t m = values < 0 || values >= n ? n : values;
			for (int64_t k = 0; k < m; k++) {
				int64_t e = m == n ? k : k * (n / m) + k * (n % m) / m;
				fprintf(out, "%s %lld %.9g\n", res->name, (long long)e,
					v[e]);
			}
		} else {
			double s = 0, q = 0;
			for (int64_t e = 0; e < n; e++) {
				s += v[e];
				q += v[e] * v[e];
			}
			fprintf(out, "%s %.9g %.9g\n", res->name, s, sqrt(q));
		}
		free(v);
	}
	teardown(&r);
	return status;
}

int pcc_main(const pcc_program *p, int argc, char **argv)
{
	int64_t values = 0;
	int do_step = 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--values") == 0)
			values = -1;
		else if (strncmp(argv[i], "--values=", 9) == 0) {
			char *end;
			errno = 0;
			long long v = strtoll(argv[i] + 9, &end, 10);
			if (errno || end == argv[i] + 9 || *end || v < 1) {
				fprintf(stderr, "%s: --values=N: expected a positive "
					"number, not '%s'\n", argv[0], argv[i] + 9);
				return 2;
			}
			values = v;
		} else if (strcmp(argv[i], "--init") == 0)
			do_step = 0;
		else if (strcmp(argv[i], "--help") == 0) {
			printf("usage: %s [--values[=N]] [--init]\n"
			       "Runs one training step of graph '%s' (generated by "
			       "pcc from %s) on %d devices\nand prints each updated "
			       "parameter and graph output: NAME SUM L2.\n"
			       "  --values  every element instead: NAME INDEX VALUE\n"
			       "  --values=N  at most N elements of each, evenly "
			       "spaced\n"
			       "  --init    the parameters' initial values (no step)\n",
			       argv[0], p->graph, p->source, p->ndevs);
			return 0;
		} else {
			fprintf(stderr, "%s: unknown option '%s' (try --help)\n",
				argv[0], argv[i]);
			return 2;
		}
	}
	int status = pcc_program_run(p, do_step, values, stdout);
	if (fflush(stdout) != 0)
		return 3;
	return status;
}
