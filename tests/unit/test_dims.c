/* test_dims.c — ops.def's dimension map (SDIMS, BATCH, PART; ir/dims.def)
 * checked against shape inference for every op of the table.
 *
 * SAMPLE holds one instance of every op (a new op without one fails
 * test_every_op_has_a_sample).  For each:
 *   - batch: where batch_analyze replicates it, a replica is built with
 *     its batch-carrying inputs halved along the dimension batch.c slices
 *     (the shape input rewritten); op_infer's shapes must be the whole
 *     op's halved along the output's batch dimension (split outputs: the
 *     op's split category concat) or the whole shapes (partial sums: sum);
 *   - part: for every dimension op_part_dims offers and op_part_inputs
 *     maps, a part with the mapped inputs halved must infer the whole
 *     output halved along that dimension;
 *   - agreement: an output 0 split over the batch at dimension q with a
 *     concat category is one of op_split_dims, and PART slices the
 *     batch-carrying inputs where batch.c does;
 *   - none: BATCH none never replicates, SDIMS none offers no dimension,
 *     PART none maps none. */
#include <CUnit/CUnit.h>
#include <stdlib.h>

#include "passes/plan.h"
#include "testutil.h"

#define CLUSTER1 \
	"gir 1\n" \
	"cluster c {\n" \
	"  type GPU {flops = 10TFLOPS, memory = 16GiB, mem_bw = 900GB/s}\n" \
	"  machine m0 {type = GPU, count = 1, bandwidth = 10GB/s, latency = 1us}\n" \
	"}\n"

static const char SAMPLE[] =
	"graph dims {batch = 4} {\n"
	"  %x    = Placeholder() {@batch_dim = 0} : f32[4,6,6,8]\n"
	"  %v    = Placeholder() {@batch_dim = 0} : f32[4,8]\n"
	"  %t    = Placeholder() {@batch_dim = 0} : f32[4,6,8]\n"
	"  %lab  = Placeholder() {@batch_dim = 0} : i32[4]\n"
	"  %ohl  = Placeholder() {@batch_dim = 0} : f32[4,8]\n"
	"  %w    = VariableV2() : f32[8,8]\n"
	"  %vh   = VarHandleOp() : f32[8]\n"
	"  %var1 = Variable() : f32[8]\n"
	"  %noop = NoOp(^%v) : ()\n"
	"  %f    = Const() : f32[3,3,8,4]\n"
	"  %dwf  = Const() : f32[3,3,8,1]\n"
	"  %b4   = Const() : f32[4]\n"
	"  %b8   = Const() : f32[8]\n"
	"  %zero = Const() {value = 0.0} : f32[]\n"
	"  %i0   = Const() {value = 0} : i32[]\n"
	"  %i1   = Const() {value = 1} : i32[]\n"
	"  %i2   = Const() {value = 2} : i32[]\n"
	"  %ax0  = Const() {value = [0]} : i32[1]\n"
	"  %ax1  = Const() {value = [1]} : i32[1]\n"
	"  %abs  = Abs(%v)\n"
	"  %ceil = Ceil(%v)\n"
	"  %cos  = Cos(%v)\n"
	"  %elu  = Elu(%v)\n"
	"  %erf  = Erf(%v)\n"
	"  %exp  = Exp(%v)\n"
	"  %flo  = Floor(%v)\n"
	"  %lre  = LeakyRelu(%v) {alpha = 0.2}\n"
	"  %log  = Log(%v)\n"
	"  %neg  = Neg(%v)\n"
	"  %one  = OnesLike(%v)\n"
	"  %rec  = Reciprocal(%v)\n"
	"  %relu = Relu(%v)\n"
	"  %r6   = Relu6(%v)\n"
	"  %rnd  = Round(%v)\n"
	"  %rsq  = Rsqrt(%v)\n"
	"  %sig  = Sigmoid(%v)\n"
	"  %sgn  = Sign(%v)\n"
	"  %sin  = Sin(%v)\n"
	"  %sqrt = Sqrt(%v)\n"
	"  %sq   = Square(%v)\n"
	"  %tanh = Tanh(%v)\n"
	"  %zl   = ZerosLike(%v)\n"
	"  %cast = Cast(%v) {DstT = \"f16\"}\n"
	"  %id   = Identity(%v)\n"
	"  %pg   = PreventGradient(%v)\n"
	"  %snap = Snapshot(%v)\n"
	"  %stop = StopGradient(%v)\n"
	"  %idn  = IdentityN(%v, %x)\n"
	"  %add  = Add(%v, %b8)\n"
	"  %addv = AddV2(%v, %v)\n"
	"  %atan = Atan2(%v, %v)\n"
	"  %fdiv = FloorDiv(%v, %v)\n"
	"  %fmod = FloorMod(%v, %v)\n"
	"  %max2 = Maximum(%v, %v)\n"
	"  %min2 = Minimum(%v, %v)\n"
	"  %mul  = Mul(%v, %zero)\n"
	"  %pow  = Pow(%v, %v)\n"
	"  %prelu = Prelu(%v, %b8)\n"
	"  %div  = RealDiv(%v, %v)\n"
	"  %sqd  = SquaredDifference(%v, %v)\n"
	"  %sub  = Sub(%v, %v)\n"
	"  %addn = AddN(%v, %v, %v)\n"
	"  %r6g  = Relu6Grad(%v, %v)\n"
	"  %rg   = ReluGrad(%v, %v)\n"
	"  %sgg  = SigmoidGrad(%v, %v)\n"
	"  %thg  = TanhGrad(%v, %v)\n"
	"  %eq   = Equal(%v, %v)\n"
	"  %gt   = Greater(%v, %v)\n"
	"  %ge   = GreaterEqual(%v, %v)\n"
	"  %lt   = Less(%v, %v)\n"
	"  %le   = LessEqual(%v, %v)\n"
	"  %ne   = NotEqual(%v, %v)\n"
	"  %land = LogicalAnd(%gt, %lt)\n"
	"  %lor  = LogicalOr(%gt, %lt)\n"
	"  %lnot = LogicalNot(%gt)\n"
	"  %sel  = SelectV2(%gt, %v, %zero)\n"
	"  %leq  = Equal(%lab, %lab)\n"
	"  %sel1 = Select(%leq, %v, %v)\n"
	"  %mm   = MatMul(%v, %w)\n"
	"  %mmt  = MatMul(%v, %ohl) {transpose_a = true}\n"
	"  %bmm  = BatchMatMul(%t, %t) {adj_y = true}\n"
	"  %bmm2 = BatchMatMulV2(%t, %w)\n"
	"  %fmm  = _FusedMatMul(%v, %w, %b8) {fused_ops = [\"BiasAdd\"], num_args = 1}\n"
	"  %conv = Conv2D(%x, %f) {strides = [1, 1, 1, 1], padding = SAME}\n"
	"  %dw   = DepthwiseConv2dNative(%x, %dwf) {strides = [1, 1, 1, 1], padding = SAME}\n"
	"  %fcv  = _FusedConv2D(%x, %f, %b4) {strides = [1, 1, 1, 1], padding = SAME, fused_ops = [\"BiasAdd\"], num_args = 1}\n"
	"  %fdw  = FusedDepthwiseConv2dNative(%x, %dwf, %b8) {strides = [1, 1, 1, 1], padding = SAME, fused_ops = [\"BiasAdd\"]}\n"
	"  %mp   = MaxPool(%x) {ksize = [1, 2, 2, 1], strides = [1, 2, 2, 1], padding = VALID}\n"
	"  %ap   = AvgPool(%x) {ksize = [1, 2, 2, 1], strides = [1, 2, 2, 1], padding = VALID}\n"
	"  %mpg  = MaxPoolGrad(%x, %mp, %mp) {ksize = [1, 2, 2, 1], strides = [1, 2, 2, 1], padding = VALID}\n"
	"  %xs   = Const() {value = [4, 6, 6, 8]} : i32[4]\n"
	"  %apg  = AvgPoolGrad(%xs, %ap) {ksize = [1, 2, 2, 1], strides = [1, 2, 2, 1], padding = VALID}\n"
	"  %cbi  = Conv2DBackpropInput(%xs, %f, %conv) {strides = [1, 1, 1, 1], padding = SAME}\n"
	"  %fs   = Const() {value = [3, 3, 8, 4]} : i32[4]\n"
	"  %cbf  = Conv2DBackpropFilter(%x, %fs, %conv) {strides = [1, 1, 1, 1], padding = SAME}\n"
	"  %dwfs = Const() {value = [3, 3, 8, 1]} : i32[4]\n"
	"  %dbi  = DepthwiseConv2dNativeBackpropInput(%xs, %dwf, %dw) {strides = [1, 1, 1, 1], padding = SAME}\n"
	"  %dbf  = DepthwiseConv2dNativeBackpropFilter(%x, %dwfs, %dw) {strides = [1, 1, 1, 1], padding = SAME}\n"
	"  %ba   = BiasAdd(%x, %b8)\n"
	"  %bag  = BiasAddGrad(%x)\n"
	"  %bn   = FusedBatchNormV3(%x, %b8, %b8, %b8, %b8) {is_training = true}\n"
	"  %bng  = FusedBatchNormGradV3(%x, %x, %b8, %bn:3, %bn:4, %bn:5) {is_training = true}\n"
	"  %xent = SoftmaxCrossEntropyWithLogits(%v, %ohl)\n"
	"  %sxent = SparseSoftmaxCrossEntropyWithLogits(%v, %lab)\n"
	"  %sm   = Softmax(%v)\n"
	"  %lsm  = LogSoftmax(%v)\n"
	"  %sum  = Sum(%v, %ax1)\n"
	"  %sum0 = Sum(%v, %ax0)\n"
	"  %mean = Mean(%v, %ax1)\n"
	"  %max  = Max(%v, %ax1)\n"
	"  %min  = Min(%v, %ax1)\n"
	"  %prod = Prod(%v, %ax1)\n"
	"  %amax = ArgMax(%v, %i1)\n"
	"  %shp  = Const() {value = [4, 288]} : i32[2]\n"
	"  %rs   = Reshape(%x, %shp)\n"
	"  %shape = Shape(%x)\n"
	"  %rank = Rank(%x)\n"
	"  %size = Size(%x)\n"
	"  %perm = Const() {value = [0, 3, 1, 2]} : i32[4]\n"
	"  %tr   = Transpose(%x, %perm)\n"
	"  %ed   = ExpandDims(%v, %i1)\n"
	"  %sqz  = Squeeze(%ed) {squeeze_dims = [1]}\n"
	"  %cat  = ConcatV2(%v, %v, %i1)\n"
	"  %pk   = Pack(%v, %v) {axis = 1}\n"
	"  %upk  = Unpack(%pk) {axis = 1, num = 2}\n"
	"  %spl  = Split(%i1, %v) {num_split = 2}\n"
	"  %szs  = Const() {value = [2, 6]} : i32[2]\n"
	"  %splv = SplitV(%v, %szs, %i1) {num_split = 2}\n"
	"  %sb   = Const() {value = [0, 2]} : i32[2]\n"
	"  %ss   = Const() {value = [-1, 4]} : i32[2]\n"
	"  %sl   = Slice(%v, %sb, %ss)\n"
	"  %pads = Const() {value = [0, 0, 1, 1]} : i32[2,2]\n"
	"  %pad  = Pad(%v, %pads)\n"
	"  %pad2 = PadV2(%v, %pads, %zero)\n"
	"  %mpad = MirrorPad(%v, %pads) {mode = \"REFLECT\"}\n"
	"  %mult = Const() {value = [1, 2]} : i32[2]\n"
	"  %tile = Tile(%v, %mult)\n"
	"  %rsh  = Const() {value = [3, -2, 1]} : i32[3]\n"
	"  %rax  = Const() {value = [1, -1, 1]} : i32[3]\n"
	"  %roll = Roll(%v, %rsh, %rax)\n"
	"  %b0   = Const() {value = [0, 0]} : i32[2]\n"
	"  %e0   = Const() {value = [4, 4]} : i32[2]\n"
	"  %s1   = Const() {value = [1, 1]} : i32[2]\n"
	"  %ssl  = StridedSlice(%v, %b0, %e0, %s1)\n"
	"  %gat  = GatherV2(%w, %lab, %i0)\n"
	"  %kd   = Sum(%v, %ax1) {keep_dims = true}\n"
	"  %bsh  = Const() {value = [4, 8]} : i32[2]\n"
	"  %bct  = BroadcastTo(%kd, %bsh)\n"
	"  %topk = TopKV2(%v, %i2)\n"
	"  %nseg = Const() {value = 5} : i32[]\n"
	"  %uss  = UnsortedSegmentSum(%v, %lab, %nseg)\n"
	"  %blk  = Const() {value = [2, 2]} : i32[2]\n"
	"  %bpad = Const() {value = [0, 0, 0, 0]} : i32[2,2]\n"
	"  %s2b  = SpaceToBatchND(%x, %blk, %bpad)\n"
	"  %b2s  = BatchToSpaceND(%s2b, %blk, %bpad)\n"
	"  %d2s  = DepthToSpace(%x) {block_size = 2}\n"
	"  %s2d  = SpaceToDepth(%x) {block_size = 2}\n"
	"  %rsz  = Const() {value = [12, 12]} : i32[2]\n"
	"  %rbl  = ResizeBilinear(%x, %rsz)\n"
	"  %rnn  = ResizeNearestNeighbor(%x, %rsz)\n"
	"  %gix  = Const() {value = [1, 2, 3, 0]} : i32[4,1]\n"
	"  %gnd  = GatherNd(%w, %gix)\n"
	"  %fill = Fill(%bsh, %zero)\n"
	"  %r8   = Const() {value = 8} : i32[]\n"
	"  %rng  = Range(%i0, %r8, %i1)\n"
	"  %rnd8 = RandomUniform(%bsh) {dtype = \"f32\"}\n"
	"  %spi  = Const() {value = [1, 3]} : i32[2,1]\n"
	"  %osh  = Const() {value = [8]} : i32[1]\n"
	"  %spv  = Const() : f32[2]\n"
	"  %s2dn = SparseToDense(%spi, %osh, %spv, %zero)\n"
	"  %tra  = Transfer(%v)\n"
	"  %ar   = AllReduce(%v) {key = 1, algo = ring, devices = [\"m0/gpu0\"], @device = \"m0/gpu0\"}\n"
	"  %gd   = ApplyGradientDescent(%w, %mmt) : ()\n"
	"  %adam = ApplyAdam(%w, %mmt) : ()\n"
	"  %mom  = ApplyMomentum(%w, %mmt) : ()\n"
	"  %rgd  = ResourceApplyGradientDescent(%vh, %bag) : ()\n"
	"  %radm = ResourceApplyAdam(%vh, %bag) : ()\n"
	"  %rmom = ResourceApplyMomentum(%vh, %bag) : ()\n"
	"}\n";

static Graph *sample(void)
{
	char *src = xmalloc(sizeof CLUSTER1 + sizeof SAMPLE);
	strcpy(src, CLUSTER1);
	strcat(src, SAMPLE);
	Graph *g = tu_parse(src);
	free(src);
	return g;
}

/* The first live op of opcode opc in g, or NULL. */
static Op *of_type(const Graph *g, int opc)
{
	for (uint32_t i = 0; i < g->nops; i++)
		if (!g->ops[i]->dead && g->ops[i]->opcode == opc)
			return g->ops[i];
	return NULL;
}

static bool same_shape(const Type *a, const Type *b)
{
	return a->rank == b->rank &&
	       memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* A Placeholder of t's type halved along dimension d. */
static Op *halved(Graph *g, const Type *t, int d)
{
	Op *p = graph_add_op(g, graph_fresh_name(g, "half"), "Placeholder", 0, 1);
	p->out[0] = type_make(g->arena, t->dt, t->rank, t->dims);
	if (d >= 0)
		p->out[0].dims[d] /= 2;
	p->types_given = true;
	return p;
}

/* An i32 vector Const of t's dims with dimension d halved. */
static Op *shape_const(Graph *g, const Type *t, int d)
{
	Op *c = graph_add_op(g, graph_fresh_name(g, "shape"), "Const", 0, 1);
	int64_t n = t->rank;
	c->out[0] = type_make(g->arena, DT_I32, 1, &n);
	c->types_given = true;
	Value *v = val_list(g->arena, (uint32_t)t->rank);
	for (int i = 0; i < t->rank; i++)
		v->list.items[i] = val_int(g->arena, t->dims[i] / (i == d ? 2 : 1));
	op_set(g, c, "value", v);
	return c;
}

/* A copy of op whose input i is a halved copy along in_dim[i] (>= 0), and
 * input shape a Const of output 0 halved along q; its inferred output
 * types in out (returns false if inference fails). */
static bool infer_part(Graph *g, const Op *op, const int *in_dim, int shape,
		       int q, Type *out)
{
	Op *x = graph_add_op(g, graph_fresh_name(g, "part"), op->type, op->nin,
			     op->nout);
	for (uint32_t a = 0; a < op->nattr; a++)
		if (op->attrs[a].key[0] != '@')
			op_set(g, x, op->attrs[a].key, op->attrs[a].val);
	for (uint32_t i = 0; i < op->nin; i++) {
		const Input *in = &op->in[i];
		x->in[i] = *in;
		if ((int)i == shape)
			x->in[i] = (Input){shape_const(g, &op->out[0], q), 0, false};
		else if (in_dim[i] >= 0 && !in->ctrl)
			x->in[i] = (Input){halved(g, &in->src->out[in->idx], in_dim[i]),
					   0, false};
	}
	char msg[256] = "";
	int rc = op_infer(g, x, out, op->nout, g->arena, msg, sizeof msg);
	if (rc != 0)
		fprintf(stderr, "\n  %s: a part does not infer: %s", op->type, msg);
	graph_remove_op(g, x);
	return rc == 0;
}

/* op's outputs halved along dim (-1: whole) must equal got[k]. */
static bool expect_out(const Op *op, uint32_t k, int dim, const Type *got)
{
	Type want = op->out[k];
	int64_t d[64];
	memcpy(d, want.dims, sizeof(int64_t) * (size_t)want.rank);
	if (dim >= 0)
		d[dim] /= 2;
	want.dims = d;
	if (same_shape(&want, got))
		return true;
	char a[128], b[128];
	fprintf(stderr, "\n  %s output %u: part is %s, expected %s", op->type, k,
		type_str(got, a, sizeof a), type_str(&want, b, sizeof b));
	return false;
}

static void test_every_op_has_a_sample(void)
{
	Graph *g = sample();
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	for (int i = 0; i < op_table_size(); i++) {
		if (!of_type(g, i))
			fprintf(stderr, "\n  op %s: no instance in test_dims.c's SAMPLE",
				op_info(i)->name);
		CU_ASSERT_PTR_NOT_NULL(of_type(g, i));
	}
	graph_free(g);
}

/* The batch rule of op (batch_analyze's result b) against op_infer. */
static void check_batch(Graph *g, const BatchInfo *b, const Op *op)
{
	const OpInfo *info = op_info(op->opcode);
	uint32_t ib = b->inbase[op->id], ob = b->outbase[op->id];
	bool carried = false, view = false;
	int in_dim[64];
	for (uint32_t i = 0; i < op->nin; i++) {
		in_dim[i] = b->idim[ib + i];
		carried |= in_dim[i] >= 0;
		view |= b->iview[ib + i] != NULL;
	}
	for (uint32_t k = 0; k < op->nout; k++)
		view |= b->view[ob + k] != NULL;
	if (info->batch == BR_NONE) {
		/* Slices reach it: they are gathered. */
		for (uint32_t i = 0; i < op->nin; i++) {
			const Input *in = &op->in[i];
			if (!in->ctrl &&
			    b->okind[b->outbase[in->src->id] + in->idx] == OK_SPLIT)
				CU_ASSERT_FALSE(b->replicable[op->id]);
		}
		return;
	}
	if (!b->replicable[op->id] || !carried || view)
		return;
	int q = b->okind[ob] == OK_SPLIT ? b->odim[ob] : -1;
	Type out[8];
	CU_ASSERT_FATAL(op->nout <= 8 && op->nin <= 64);
	if (!infer_part(g, op, in_dim, b->shape_in[op->id], q, out)) {
		CU_FAIL("batch replica does not infer");
		return;
	}
	for (uint32_t k = 0; k < op->nout; k++) {
		SplitCat sc = op_split_output(g, op, k);
		if (b->okind[ob + k] == OK_SPLIT) {
			CU_ASSERT(expect_out(op, k, b->odim[ob + k], &out[k]));
			if (sc != SPLIT_CONCAT)
				fprintf(stderr, "\n  %s output %u: batch slices, "
					"category %s", op->type, k, splitcat_name(sc));
			CU_ASSERT_EQUAL(sc, SPLIT_CONCAT);
		} else if (b->okind[ob + k] == OK_PARTIAL) {
			CU_ASSERT(expect_out(op, k, -1, &out[k]));
			if (sc != SPLIT_SUM)
				fprintf(stderr, "\n  %s output %u: partial sums, "
					"category %s", op->type, k, splitcat_name(sc));
			CU_ASSERT_EQUAL(sc, SPLIT_SUM);
		}
	}
	/* Agreement with SDIMS and PART for output 0. */
	if (q < 0 || op_split_output(g, op, 0) != SPLIT_CONCAT)
		return;
	int dims[16], n = op_split_dims(g, op, dims, 16);
	bool listed = false;
	for (int i = 0; i < n; i++)
		listed |= dims[i] == q;
	if (!listed)
		fprintf(stderr, "\n  %s: batch at output dimension %d, not in "
			"op_split_dims", op->type, q);
	CU_ASSERT(listed);
	int pd[64], shape;
	if (info->part == PT_NONE || !op_part_inputs(g, op, q, pd, &shape))
		return;
	for (uint32_t i = 0; i < op->nin; i++)
		if (in_dim[i] >= 0 && (int)i != shape) {
			if (pd[i] != in_dim[i])
				fprintf(stderr, "\n  %s input %u: PART slices %d, "
					"batch %d", op->type, i, pd[i], in_dim[i]);
			CU_ASSERT_EQUAL(pd[i], in_dim[i]);
		}
}

/* The part rule of op against op_infer, for every dimension offered;
 * returns how many it maps. */
static int check_parts(Graph *g, const Op *op)
{
	const OpInfo *info = op_info(op->opcode);
	int dims[16], n = op_part_dims(g, op, dims, 16), in_dim[64], shape;
	int mapped = 0;
	for (int j = 0; j < n; j++) {
		int p = dims[j];
		if (!op_part_inputs(g, op, p, in_dim, &shape))
			continue;
		CU_ASSERT_NOT_EQUAL(info->part, PT_NONE);
		mapped++;
		Type out[8];
		CU_ASSERT_EQUAL(op->out[0].dims[p] % 2, 0);
		if (!infer_part(g, op, in_dim, shape, p, out)) {
			CU_FAIL("part does not infer");
			continue;
		}
		CU_ASSERT(expect_out(op, 0, p, &out[0]));
	}
	return mapped;
}

static void test_dims_against_shapes(void)
{
	Graph *g = sample();
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	BatchInfo b;
	batch_analyze(g, &b);
	uint32_t n = g->nops;
	for (int i = 0; i < op_table_size(); i++) {
		int mapped = 0;
		for (uint32_t j = 0; j < n; j++) {
			Op *op = g->ops[j];
			if (op->dead || op->opcode != i)
				continue;
			check_batch(g, &b, op);
			mapped += check_parts(g, op);
		}
		/* A PART rule maps some dimension of SAMPLE's instances. */
		if (op_info(i)->part != PT_NONE && mapped == 0)
			fprintf(stderr, "\n  %s: PART maps no dimension of SAMPLE's",
				op_info(i)->name);
		CU_ASSERT(op_info(i)->part == PT_NONE || mapped > 0);
	}
	batch_free(&b);
	graph_free(g);
}

/* Spot checks of the map's verdicts, worked out by hand. */
static void test_dims_known_answers(void)
{
	Graph *g = sample();
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	BatchInfo b;
	batch_analyze(g, &b);
	int in_dim[64], shape, dims[16];
	/* MatMul x[4,8] * w[8,8] along the columns: w's columns. */
	Op *mm = tu_op(g, "mm");
	CU_ASSERT_TRUE(op_part_inputs(g, mm, 1, in_dim, &shape));
	CU_ASSERT_EQUAL(in_dim[0], -1);
	CU_ASSERT_EQUAL(in_dim[1], 1);
	/* Conv2DBackpropFilter: filter channels 2 and 3; 3 slices dy's. */
	Op *cbf = tu_op(g, "cbf");
	CU_ASSERT_EQUAL(op_part_dims(g, cbf, dims, 16), 2);
	CU_ASSERT_TRUE(op_part_inputs(g, cbf, 3, in_dim, &shape));
	CU_ASSERT_EQUAL(in_dim[2], 3);
	CU_ASSERT_EQUAL(shape, 1);
	/* TF1 Select's vector condition [4] slices with the rows. */
	Op *sel = tu_op(g, "sel1");
	CU_ASSERT_TRUE(op_part_inputs(g, sel, 0, in_dim, &shape));
	CU_ASSERT_EQUAL(in_dim[0], 0);
	CU_ASSERT_TRUE(op_part_inputs(g, sel, 1, in_dim, &shape));
	CU_ASSERT_EQUAL(in_dim[0], -1);
	/* Sum over the batch: partial sums; MatMul^T contracting it too. */
	CU_ASSERT_EQUAL(batch_okind(&b, tu_op(g, "sum0"), 0), OK_PARTIAL);
	CU_ASSERT_EQUAL(batch_okind(&b, tu_op(g, "mmt"), 0), OK_PARTIAL);
	/* A depthwise convolution's channel is offered but not partitioned. */
	Op *dw = tu_op(g, "dw");
	CU_ASSERT_EQUAL(op_split_dims(g, dw, dims, 16), 2);
	CU_ASSERT_FALSE(op_part_inputs(g, dw, 3, in_dim, &shape));
	CU_ASSERT_STRING_EQUAL(batch_rule_name(O_Transfer), "none");
	CU_ASSERT_STRING_EQUAL(batch_rule_name(O_MaxPool), "batch0");
	batch_free(&b);
	graph_free(g);
}

void suite_dims(void)
{
	CU_pSuite s = CU_add_suite("dims", NULL, NULL);
	CU_add_test(s, "every op has a sample", test_every_op_has_a_sample);
	CU_add_test(s, "dimension map against shapes", test_dims_against_shapes);
	CU_add_test(s, "dimension map known answers", test_dims_known_answers);
}
