/* gengraph — synthetic layered training graphs of any size, for scaling
 * benchmarks and tests.
 *
 *   gengraph [--ops N] [--width B] [--batch N] [--hidden H]
 *            [--place K] [-o FILE]
 *
 * Each layer has B parallel branches (MatMul + Relu with its own weight)
 * merged by AddN; the backward pass mirrors it (ReluGrad, two MatMuls per
 * branch, an AddN) and each weight gets an ApplyGradientDescent.  A layer
 * is 7B + 2 ops (the first one 7B + 1: no gradient flows into the input);
 * with the two Placeholders (input and labels, @batch_dim 0) and a softmax
 * cross-entropy loss that closes the forward pass, L layers are
 * L(7B + 2) + 2 ops; layers are added until about N ops.  The output is
 * the same for the same arguments.  With --place K every op gets
 * @device "m0/gpuI" (layer-wise blocks over K devices, so neighbouring
 * layers talk across devices), and a cluster block with K devices is
 * written, so the simulator can run it directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void)
{
	fputs("usage: gengraph [--ops N] [--width B] [--batch N] [--hidden H] "
	      "[--place K] [-o FILE]\n", stderr);
	exit(2);
}

static long num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v <= 0)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	long ops = 10000, width = 4, batch = 32, hidden = 256, place = 0;
	const char *out = "-";
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--ops")) ops = num(argv[++i]);
		else if (!strcmp(argv[i], "--width")) width = num(argv[++i]);
		else if (!strcmp(argv[i], "--batch")) batch = num(argv[++i]);
		else if (!strcmp(argv[i], "--hidden")) hidden = num(argv[++i]);
		else if (!strcmp(argv[i], "--place")) place = num(argv[++i]);
		else if (!strcmp(argv[i], "-o")) out = argv[++i];
		else usage();
	}
	FILE *f = strcmp(out, "-") ? fopen(out, "w") : stdout;
	if (!f) {
		perror(out);
		return 1;
	}
	static char buf[1 << 20];
	setvbuf(f, buf, _IOFBF, sizeof buf);
	long per = 7 * width + 2;
	long layers = (ops - 2) / per;
	if (layers < 1)
		layers = 1;
	fprintf(f, "# synthetic layered training graph: %ld layers x %ld branches, "
		   "%ld ops\n# made by: gengraph --ops %ld --width %ld --batch %ld "
		   "--hidden %ld%s%.0ld\ngir 1\n",
		layers, width, layers * per + 2, ops, width, batch, hidden,
		place ? " --place " : "", place);
	if (place)
		fprintf(f, "cluster \"synthetic-%ld\" {\n"
			   "  type \"V100\" {flops = 15.7TFLOPS, memory = 32GiB, mem_bw = 900GB/s}\n"
			   "  machine \"m0\" {type = \"V100\", count = %ld, bandwidth = 25GB/s, latency = 2us}\n"
			   "}\n", place, place);
	fprintf(f, "graph synthetic {batch = %ld} {\n", batch);
	char dev[64] = "";
	long per_dev = place ? (layers + place - 1) / place : 0;
#define DEV(l) (place ? (snprintf(dev, sizeof dev, " {@device = \"m0/gpu%ld\"}", \
				  (l) / per_dev), dev) : "")
	/* the same, inside an attribute block that is already open */
	char tdev[64] = "";
#define TDEV(l) (place ? (snprintf(tdev, sizeof tdev, ", @device = \"m0/gpu%ld\"", \
				   (l) / per_dev), tdev) : "")
	const char *T = "f32[%ld,%ld]";
	char t_act[64], t_w[64];
	snprintf(t_act, sizeof t_act, T, batch, hidden);
	snprintf(t_w, sizeof t_w, T, hidden, hidden);
	fprintf(f, "  %%x = Placeholder() {@batch_dim = 0%s} : %s\n", TDEV(0L), t_act);
	fprintf(f, "  %%labels = Placeholder() {@batch_dim = 0%s} : i64[%ld]\n", TDEV(0L),
		batch);
	for (long l = 0; l < layers; l++) {
		char prev[32];
		if (l)
			snprintf(prev, sizeof prev, "h%ld", l - 1);
		else
			strcpy(prev, "x");
		for (long b = 0; b < width; b++) {
			fprintf(f, "  %%w%ld_%ld = VariableV2()%s : %s\n", l, b, DEV(l), t_w);
			fprintf(f, "  %%m%ld_%ld = MatMul(%%%s, %%w%ld_%ld)%s : %s\n",
				l, b, prev, l, b, DEV(l), t_act);
			fprintf(f, "  %%r%ld_%ld = Relu(%%m%ld_%ld)%s : %s\n", l, b, l,
				b, DEV(l), t_act);
		}
		fprintf(f, "  %%h%ld = AddN(", l);
		for (long b = 0; b < width; b++)
			fprintf(f, "%s%%r%ld_%ld", b ? ", " : "", l, b);
		fprintf(f, ")%s : %s\n", DEV(l), t_act);
	}
	fprintf(f, "  %%loss, %%dh%ld = SoftmaxCrossEntropyWithLogits(%%h%ld, %%labels)%s"
		   " : (f32[%ld], %s)\n", layers - 1, layers - 1, DEV(layers - 1),
		batch, t_act);
	for (long l = layers - 1; l >= 0; l--) {
		char prev[32];
		if (l)
			snprintf(prev, sizeof prev, "h%ld", l - 1);
		else
			strcpy(prev, "x");
		for (long b = 0; b < width; b++) {
			fprintf(f, "  %%dr%ld_%ld = ReluGrad(%%dh%ld, %%r%ld_%ld)%s : %s\n",
				l, b, l, l, b, DEV(l), t_act);
			fprintf(f, "  %%dw%ld_%ld = MatMul(%%%s, %%dr%ld_%ld) "
				   "{transpose_a = true%s} : %s\n",
				l, b, prev, l, b, TDEV(l), t_w);
			fprintf(f, "  %%dx%ld_%ld = MatMul(%%dr%ld_%ld, %%w%ld_%ld) "
				   "{transpose_b = true%s} : %s\n",
				l, b, l, b, l, b, TDEV(l), t_act);
			fprintf(f, "  %%u%ld_%ld = ApplyGradientDescent(%%w%ld_%ld, "
				   "%%dw%ld_%ld)%s : ()\n", l, b, l, b, l, b, DEV(l));
		}
		if (l) {
			fprintf(f, "  %%dh%ld = AddN(", l - 1);
			for (long b = 0; b < width; b++)
				fprintf(f, "%s%%dx%ld_%ld", b ? ", " : "", l, b);
			fprintf(f, ")%s : %s\n", DEV(l), t_act);
		}
	}
	fputs("}\n", f);
	if (f != stdout)
		fclose(f);
	return 0;
}
