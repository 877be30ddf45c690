/* rt.c — the CPU reference runtime's devices, buffers, events, channels
 * and collectives (pcc_rt.h).
 *
 * Every call runs synchronously on the calling thread, which is the
 * device's thread during a step, so "issued" and "done" coincide: an
 * event is a flag set under the run's mutex (record) and waited for on
 * its condition variable (wait); pcc_send memcpys into the destination
 * buffer and then sets the channel's flag; pcc_recv waits for the flag.
 * The mutex gives every waiter a happens-before edge to the writer.
 *
 * AllReduce: every member publishes its input and waits at a barrier
 * until all have; member r then adds up chunk r of the elements over the
 * members' inputs in the order of `devs` (a reduce-scatter), a second
 * barrier, and every member copies the whole sum into its output (an
 * all-gather).  Each element is added once, in one order, so every
 * member gets the same bits, and out may alias in. */
#include "rt_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void rt_fatal(const char *fmt, ...)
{
	va_list ap;
	fputs("pcc_rt: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	/* Other device threads may still run: leave without exit handlers. */
	_Exit(3);
}

void *rt_alloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (!p)
		rt_fatal("out of memory (%zu bytes)", n);
	return p;
}

size_t rt_dtype_size(pcc_dtype dt)
{
	return dt == PCC_I64 ? 8 : dt == PCC_BOOL ? 1 : 4;
}

const char *rt_dtype_name(pcc_dtype dt)
{
	return dt == PCC_F32 ? "f32" : dt == PCC_I32 ? "i32"
	       : dt == PCC_I64 ? "i64" : "bool";
}

static void *track(RtList *l, void *p)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		void **n = realloc(l->items, l->cap * sizeof *n);
		if (!n)
			rt_fatal("out of memory");
		l->items = n;
	}
	l->items[l->n++] = p;
	return p;
}

/* ---- devices ---------------------------------------------------------- */

pcc_rt *pcc_rt_new(int ndevs, const char *const *dev_names)
{
	if (ndevs < 1)
		rt_fatal("a run needs at least one device");
	pcc_rt *rt = rt_alloc(sizeof *rt);
	rt->ndevs = ndevs;
	rt->devs = rt_alloc(sizeof(pcc_dev) * (size_t)ndevs);
	for (int i = 0; i < ndevs; i++)
		rt->devs[i] = (pcc_dev){rt, i, dev_names ? dev_names[i] : "dev"};
	pthread_mutex_init(&rt->mu, NULL);
	pthread_cond_init(&rt->cv, NULL);
	return rt;
}

void pcc_rt_free(pcc_rt *rt)
{
	if (!rt)
		return;
	for (size_t i = 0; i < rt->bufs.n; i++) {
		pcc_buf *b = rt->bufs.items[i];
		free(b->data);
		free(b);
	}
	for (size_t i = 0; i < rt->events.n; i++)
		free(rt->events.items[i]);
	for (size_t i = 0; i < rt->chans.n; i++)
		free(rt->chans.items[i]);
	for (size_t i = 0; i < rt->colls.n; i++) {
		pcc_coll *c = rt->colls.items[i];
		free(c->devs);
		free(c->in);
		free(c->out);
		free(c->sum);
		free(c);
	}
	free(rt->bufs.items);
	free(rt->events.items);
	free(rt->chans.items);
	free(rt->colls.items);
	pthread_mutex_destroy(&rt->mu);
	pthread_cond_destroy(&rt->cv);
	free(rt->devs);
	free(rt);
}

pcc_dev *pcc_rt_dev(pcc_rt *rt, int dev)
{
	if (dev < 0 || dev >= rt->ndevs)
		rt_fatal("no device %d (the run has %d)", dev, rt->ndevs);
	return &rt->devs[dev];
}

int pcc_dev_index(const pcc_dev *d)
{
	return d->index;
}

/* ---- buffers ---------------------------------------------------------- */

pcc_buf *pcc_buf_new(pcc_rt *rt, int dev, const char *name, pcc_dtype dt,
		     int rank, const int64_t *dims)
{
	if (dev < 0 || dev >= rt->ndevs)
		rt_fatal("buffer '%s' on device %d: the run has %d", name, dev,
			 rt->ndevs);
	if (rank < 0 || rank > PCC_MAX_RANK)
		rt_fatal("buffer '%s' has rank %d (at most %d)", name, rank,
			 PCC_MAX_RANK);
	pcc_buf *b = track(&rt->bufs, rt_alloc(sizeof *b));
	b->rt = rt;
	b->dev = dev;
	b->name = name;
	b->dt = dt;
	b->rank = rank;
	b->numel = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || (dims[i] && b->numel > INT64_MAX / 16 / dims[i]))
			rt_fatal("buffer '%s': bad dimension %lld", name,
				 (long long)dims[i]);
		b->dims[i] = dims[i];
		b->numel *= dims[i];
	}
	b->data = rt_alloc((size_t)b->numel * rt_dtype_size(dt));
	return b;
}

pcc_dtype pcc_buf_dtype(const pcc_buf *b) { return b->dt; }
int pcc_buf_rank(const pcc_buf *b) { return b->rank; }
int64_t pcc_buf_numel(const pcc_buf *b) { return b->numel; }

int64_t pcc_buf_dim(const pcc_buf *b, int i)
{
	return i >= 0 && i < b->rank ? b->dims[i] : 1;
}

void pcc_buf_write(pcc_buf *b, const void *host)
{
	memcpy(b->data, host, (size_t)b->numel * rt_dtype_size(b->dt));
}

void pcc_buf_read(const pcc_buf *b, void *host)
{
	memcpy(host, b->data, (size_t)b->numel * rt_dtype_size(b->dt));
}

/* ---- events ----------------------------------------------------------- */

pcc_event *pcc_event_new(pcc_rt *rt)
{
	pcc_event *e = track(&rt->events, rt_alloc(sizeof *e));
	e->rt = rt;
	return e;
}

static void event_set(pcc_event *e)
{
	pthread_mutex_lock(&e->rt->mu);
	e->set = 1;
	pthread_cond_broadcast(&e->rt->cv);
	pthread_mutex_unlock(&e->rt->mu);
}

static void event_wait(pcc_event *e)
{
	pthread_mutex_lock(&e->rt->mu);
	while (!e->set)
		pthread_cond_wait(&e->rt->cv, &e->rt->mu);
	pthread_mutex_unlock(&e->rt->mu);
}

void pcc_event_record(pcc_dev *d, pcc_event *e)
{
	(void)d;
	event_set(e);
}

void pcc_event_wait(pcc_dev *d, pcc_event *e)
{
	(void)d;
	event_wait(e);
}

/* ---- channels --------------------------------------------------------- */

pcc_chan *pcc_chan_new(pcc_rt *rt, int src_dev, pcc_buf *dst)
{
	if (src_dev < 0 || src_dev >= rt->ndevs)
		rt_fatal("channel to '%s' from device %d: the run has %d",
			 dst->name, src_dev, rt->ndevs);
	pcc_chan *c = track(&rt->chans, rt_alloc(sizeof *c));
	c->rt = rt;
	c->src_dev = src_dev;
	c->dst = dst;
	c->done.rt = rt;
	return c;
}

void pcc_send(pcc_dev *d, pcc_chan *c, const pcc_buf *src)
{
	if (d->index != c->src_dev)
		rt_fatal("'%s' sent to '%s' from device %s, not from the channel's",
			 src->name, c->dst->name, d->name);
	if (src->dt != c->dst->dt || src->numel != c->dst->numel)
		rt_fatal("'%s' (%s, %lld elements) cannot be sent into '%s' "
			 "(%s, %lld elements)", src->name, rt_dtype_name(src->dt),
			 (long long)src->numel, c->dst->name,
			 rt_dtype_name(c->dst->dt), (long long)c->dst->numel);
	memcpy(c->dst->data, src->data, (size_t)src->numel * rt_dtype_size(src->dt));
	event_set(&c->done);
}

void pcc_recv(pcc_dev *d, pcc_chan *c)
{
	if (d->index != c->dst->dev)
		rt_fatal("'%s' received on device %s, not on its own", c->dst->name,
			 d->name);
	event_wait(&c->done);
}

/* ---- collectives ------------------------------------------------------ */

pcc_coll *pcc_coll_new(pcc_rt *rt, int64_t key, const char *algo, int n,
		       const int *devs)
{
	(void)algo;
	if (n < 1)
		rt_fatal("collective %lld has no members", (long long)key);
	pcc_coll *c = track(&rt->colls, rt_alloc(sizeof *c));
	c->rt = rt;
	c->key = key;
	c->n = n;
	c->devs = rt_alloc(sizeof(int) * (size_t)n);
	c->in = rt_alloc(sizeof(pcc_buf *) * (size_t)n);
	c->out = rt_alloc(sizeof(pcc_buf *) * (size_t)n);
	c->numel = -1;
	for (int i = 0; i < n; i++) {
		if (devs[i] < 0 || devs[i] >= rt->ndevs)
			rt_fatal("collective %lld: no device %d", (long long)key,
				 devs[i]);
		for (int j = 0; j < i; j++)
			if (devs[j] == devs[i])
				rt_fatal("collective %lld lists device %d twice",
					 (long long)key, devs[i]);
		c->devs[i] = devs[i];
	}
	return c;
}

/* Waits until every member has arrived; the last one first runs `last`
 * (with the mutex held). */
static void barrier(pcc_coll *c, void (*last)(pcc_coll *))
{
	pcc_rt *rt = c->rt;
	pthread_mutex_lock(&rt->mu);
	int gen = c->gen;
	if (++c->arrived == c->n) {
		if (last)
			last(c);
		c->arrived = 0;
		c->gen++;
		pthread_cond_broadcast(&rt->cv);
	} else {
		while (gen == c->gen)
			pthread_cond_wait(&rt->cv, &rt->mu);
	}
	pthread_mutex_unlock(&rt->mu);
}

/* Run by the last member to arrive: every input has the same size. */
static void coll_check(pcc_coll *c)
{
	int64_t n = c->in[0]->numel;
	for (int i = 0; i < c->n; i++)
		if (c->in[i]->numel != n || c->out[i]->numel != n ||
		    c->in[i]->dt != PCC_F32 || c->out[i]->dt != PCC_F32)
			rt_fatal("collective %lld: member '%s' (%lld elements) does "
				 "not match member '%s' (%lld elements, f32)",
				 (long long)c->key, c->in[i]->name,
				 (long long)c->in[i]->numel, c->in[0]->name,
				 (long long)n);
	if (c->numel < 0) {
		c->numel = n;
		c->sum = rt_alloc(sizeof(float) * (size_t)(n ? n : 1));
	}
}

void pcc_allreduce(pcc_dev *d, pcc_coll *c, const pcc_buf *in, pcc_buf *out)
{
	int r = 0;
	while (r < c->n && c->devs[r] != d->index)
		r++;
	if (r == c->n)
		rt_fatal("device %s is not a member of collective %lld", d->name,
			 (long long)c->key);
	pthread_mutex_lock(&c->rt->mu);
	c->in[r] = in;
	c->out[r] = out;
	pthread_mutex_unlock(&c->rt->mu);
	barrier(c, coll_check);
	/* Reduce-scatter: chunk r of the sum, in member order. */
	int64_t n = c->numel, lo = n * r / c->n, hi = n * (r + 1) / c->n;
	for (int64_t i = lo; i < hi; i++) {
		float s = FP(c->in[0])[i];
		for (int m = 1; m < c->n; m++)
			s += FP(c->in[m])[i];
		c->sum[i] = s;
	}
	barrier(c, NULL);
	/* All-gather. */
	memcpy(out->data, c->sum, sizeof(float) * (size_t)n);
	barrier(c, NULL);
}

/* ---- kernels ---------------------------------------------------------- */

static const struct {
	const char *name;
	KernelFn *fn;
} kernels[PCC_K_COUNT] = {
#define PCC_KERNEL(name, fn, stat, doc) {#name, fn},
#include "pcc_kernels.def"
#undef PCC_KERNEL
};

const char *pcc_kernel_name(pcc_kernel k)
{
	return (unsigned)k < PCC_K_COUNT ? kernels[k].name : "?";
}

void pcc_launch(pcc_dev *d, pcc_kernel k, const pcc_attrs *a, int nin,
		pcc_buf *const *in, int nout, pcc_buf *const *out)
{
	static const pcc_attrs none;
	if (!a)
		a = &none;
	if ((unsigned)k >= PCC_K_COUNT)
		rt_fatal("op '%s': no kernel %d", a->op ? a->op : "?", (int)k);
	for (int i = 0; i < nin + nout; i++) {
		const pcc_buf *b = i < nin ? in[i] : out[i - nin];
		if (b->dev != d->index)
			rt_fatal("op '%s' (%s) on device %s: '%s' is on device %s",
				 a->op ? a->op : "?", kernels[k].name, d->name,
				 b->name, d->rt->devs[b->dev].name);
	}
	kernels[k].fn(k, a, nin, in, nout, out);
}
