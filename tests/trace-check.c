/* trace-check — checks a file written by `pcc --emit=trace` the way the
 * viewers read it (tests/run-viz.sh runs it on every trace it makes):
 *
 *   - strict JSON (json-c's strict mode, the whole file one value);
 *   - an object with a traceEvents array and otherData.simulated = true;
 *   - every event has a string ph and an integer pid; every complete
 *     event ("X") a string name and cat, an integer tid, numbers ts and
 *     dur >= 0, and a thread_name metadata event for its (pid, tid);
 *   - on each track, complete events nest properly (Perfetto rejects
 *     partial overlaps): sorted by start, each event ends before the
 *     enclosing open one does.
 *
 *   usage: trace-check FILE.json    prints "trace-check: ok, N events"
 * Exit status 0 when the file passes, 1 with the reason otherwise. */
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Slice {
	long long pid, tid, t0, t1;   /* nanoseconds */
} Slice;

static int slice_cmp(const void *pa, const void *pb)
{
	const Slice *a = pa, *b = pb;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	return a->t1 > b->t1 ? -1 : a->t1 < b->t1;  /* longer first */
}

static int fail(const char *path, size_t i, const char *why)
{
	if (i == (size_t)-1)
		fprintf(stderr, "trace-check: %s: %s\n", path, why);
	else
		fprintf(stderr, "trace-check: %s: event %zu: %s\n", path, i, why);
	return 1;
}

static json_object *get(json_object *o, const char *key, json_type t)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, t))
		return NULL;
	return v;
}

static bool is_number(json_object *o)
{
	return json_object_is_type(o, json_type_int) ||
	       json_object_is_type(o, json_type_double);
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16;
	char *buf = malloc(cap);
	*n = 0;
	size_t r;
	while (buf && (r = fread(buf + *n, 1, cap - *n, f)) > 0) {
		*n += r;
		if (*n == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	return buf;
}

static int check(const char *path, json_object *root)
{
	json_object *ev = get(root, "traceEvents", json_type_array);
	json_object *other = get(root, "otherData", json_type_object);
	json_object *sim = other ? get(other, "simulated", json_type_boolean) : NULL;
	if (!ev)
		return fail(path, (size_t)-1, "no traceEvents array");
	if (!sim || !json_object_get_boolean(sim))
		return fail(path, (size_t)-1, "otherData.simulated is not true");
	size_t n = json_object_array_length(ev), ns = 0, nnames = 0;
	Slice *s = malloc(sizeof(Slice) * (n + 1));
	Slice *names = malloc(sizeof(Slice) * (n + 1));
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		json_object *e = json_object_array_get_idx(ev, i);
		json_object *ph = get(e, "ph", json_type_string);
		json_object *pid = get(e, "pid", json_type_int);
		json_object *name = get(e, "name", json_type_string);
		if (!ph || !pid || !name) {
			rc = fail(path, i, "needs string ph and name, integer pid");
			break;
		}
		const char *p = json_object_get_string(ph);
		json_object *tid = get(e, "tid", json_type_int);
		if (strcmp(p, "M") == 0) {
			if (strcmp(json_object_get_string(name), "thread_name") == 0 && tid)
				names[nnames++] = (Slice){json_object_get_int64(pid),
							  json_object_get_int64(tid), 0, 0};
			continue;
		}
		if (strcmp(p, "X") != 0) {
			rc = fail(path, i, "an event other than M or X");
			break;
		}
		json_object *ts = NULL, *dur = NULL;
		json_object_object_get_ex(e, "ts", &ts);
		json_object_object_get_ex(e, "dur", &dur);
		if (!tid || !get(e, "cat", json_type_string) || !is_number(ts) ||
		    !is_number(dur) || json_object_get_double(ts) < 0 ||
		    json_object_get_double(dur) < 0) {
			rc = fail(path, i, "X needs cat, integer tid, ts and dur >= 0");
			break;
		}
		long long t0 = llround(json_object_get_double(ts) * 1000);
		s[ns++] = (Slice){json_object_get_int64(pid), json_object_get_int64(tid), t0,
				  t0 + llround(json_object_get_double(dur) * 1000)};
	}
	qsort(s, ns, sizeof *s, slice_cmp);
	qsort(names, nnames, sizeof *names, slice_cmp);
	/* Proper nesting per track: a stack of the ends of open slices. */
	long long *open = malloc(sizeof(long long) * (ns + 1));
	size_t depth = 0;
	for (size_t i = 0; i < ns && !rc; i++) {
		if (i == 0 || s[i].pid != s[i - 1].pid || s[i].tid != s[i - 1].tid) {
			depth = 0;
			Slice k = {s[i].pid, s[i].tid, 0, 0};
			if (!bsearch(&k, names, nnames, sizeof *names, slice_cmp)) {
				char msg[96];
				snprintf(msg, sizeof msg, "track pid %lld tid %lld has no thread_name",
					 s[i].pid, s[i].tid);
				rc = fail(path, (size_t)-1, msg);
			}
		}
		while (depth && open[depth - 1] <= s[i].t0)
			depth--;
		if (depth && s[i].t1 > open[depth - 1]) {
			char msg[128];
			snprintf(msg, sizeof msg, "pid %lld tid %lld: a slice at %lld ns overlaps "
				 "one ending at %lld ns", s[i].pid, s[i].tid, s[i].t0, open[depth - 1]);
			rc = fail(path, (size_t)-1, msg);
		}
		open[depth++] = s[i].t1;
	}
	if (!rc)
		printf("trace-check: ok, %zu events\n", n);
	free(open);
	free(names);
	free(s);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: trace-check FILE.json\n", stderr);
		return 2;
	}
	size_t n;
	char *text = slurp(argv[1], &n);
	if (!text)
		return fail(argv[1], (size_t)-1, "cannot read");
	json_tokener *tok = json_tokener_new();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	json_object *root = json_tokener_parse_ex(tok, text, (int)n);
	enum json_tokener_error err = json_tokener_get_error(tok);
	size_t used = json_tokener_get_parse_end(tok);
	int rc;
	if (!root || err != json_tokener_success) {
		rc = fail(argv[1], (size_t)-1, json_tokener_error_desc(err));
	} else {
		while (used < n && strchr(" \t\r\n", text[used]))
			used++;
		rc = used < n ? fail(argv[1], (size_t)-1, "text after the JSON value")
		     : !json_object_is_type(root, json_type_object)
			     ? fail(argv[1], (size_t)-1, "not a JSON object")
			     : check(argv[1], root);
	}
	json_object_put(root);
	json_tokener_free(tok);
	free(text);
	return rc;
}
