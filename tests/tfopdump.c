/* tfopdump — writes the OpDef table of backend/tfops.def, as pcc parses it
 * (tfopdef.c), as JSON on stdout, for tests/tf/check_opdefs.py to hold
 * against the installed TensorFlow's op registry (tests/run-tfops.sh).
 *
 *   {"ops": [{"name": "Conv2D",
 *             "in":  [{"name": "input", "type_attr": "T"}, ...],
 *             "out": [...],
 *             "attrs": [{"name": "T", "kind": "type", "list": false,
 *                        "types": ["DT_HALF", ...], "strs": null,
 *                        "min": null, "default": "DT_FLOAT"}, ...]}]}
 *
 * An arg has "type_attr" (a type or list(type) attr), "num_attr" (N of
 * `N * T`), "fixed" (a DT_ name) and "ref".  "types" is null for any type;
 * "default" is the text of tfops.def (true, 1, 'NHWC', [1, 1], DT_FLOAT,
 * unknown), parsed by the checker.
 *   usage: tfopdump > table.json */
#include "backend/tf.h"

#include <json-c/json.h>
#include <stdio.h>

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *args_json(const TfArgDef *a, int n)
{
	json_object *arr = json_object_new_array();
	for (int i = 0; i < n; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(a[i].name));
		json_object_object_add(o, "type_attr", str_or_null(a[i].type_attr));
		json_object_object_add(o, "num_attr", str_or_null(a[i].num_attr));
		json_object_object_add(o, "fixed", str_or_null(tfdt_enum(a[i].fixed)));
		json_object_object_add(o, "ref", json_object_new_boolean(a[i].ref));
		json_object_array_add(arr, o);
	}
	return arr;
}

static json_object *attr_json(const TfAttrDef *d)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(d->name));
	json_object_object_add(o, "kind", json_object_new_string(tk_name(d->kind, false)));
	json_object_object_add(o, "list", json_object_new_boolean(d->list));
	json_object *types = NULL;
	if (d->types) {
		types = json_object_new_array();
		for (int dt = 1; dt < TFDT_COUNT; dt++)
			if (d->types & (1u << dt))
				json_object_array_add(types, json_object_new_string(tfdt_enum(dt)));
	}
	json_object_object_add(o, "types", types);
	json_object *strs = NULL;
	if (d->strs) {
		strs = json_object_new_array();
		for (int i = 0; i < d->nstrs; i++)
			json_object_array_add(strs, json_object_new_string(d->strs[i]));
	}
	json_object_object_add(o, "strs", strs);
	json_object_object_add(o, "min", d->has_min ? json_object_new_int64(d->min) : NULL);
	json_object_object_add(o, "default", str_or_null(d->dflt));
	return o;
}

int main(void)
{
	TfOpDefs t;
	tf_opdefs_init(&t);
	json_object *ops = json_object_new_array();
	for (int i = 0; i < tf_opdef_count(); i++) {
		const TfOpDef *d = tf_opdef(&t, tf_opdef_name(i));
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(d->name));
		json_object_object_add(o, "in", args_json(d->in, d->nin));
		json_object_object_add(o, "out", args_json(d->out, d->nout));
		json_object *attrs = json_object_new_array();
		for (int k = 0; k < d->nattrs; k++)
			json_object_array_add(attrs, attr_json(&d->attrs[k]));
		json_object_object_add(o, "attrs", attrs);
		json_object_array_add(ops, o);
	}
	json_object *root = json_object_new_object();
	json_object_object_add(root, "ops", ops);
	fputs(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
					     JSON_C_TO_STRING_NOSLASHESCAPE), stdout);
	putchar('\n');
	json_object_put(root);
	tf_opdefs_free(&t);
	return ferror(stdout) ? 1 : 0;
}
