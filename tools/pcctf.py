"""pcctf: running pcc's TensorFlow plans (--emit=tf) on real TensorFlow.

Shared by tools/tfrun and tools/tfprofile; run through tools/tfpython.
docs/backends.md ("Running a plan on TensorFlow") describes the scheme:

  * a local cluster: one tf.distribute.Server per task of job "worker",
    all in this process, on 127.0.0.1 with free ports;
  * the device mapping: on each task, the distinct devices the plan names
    (/job:worker/replica:0/task:I/device:TYPE:K), sorted by type then K,
    become that task's virtual CPU devices CPU:0, CPU:1, ... (each server
    gets as many as the busiest task needs), so every device of the plan
    stays a device of its own (collectives need distinct devices);
  * the ConfigProto: collective_group_leader (task 0), the CPU device
    count, intra-op and inter-op thread counts, isolated session state;
  * seeded data for the Placeholders, the C runtime's (backend/runtime/
    seed.c): element i of the whole tensor named N is
    splitmix64(fnv1a64(N) ^ seed*PHI + (i+1)*PHI), f32 U(-1, 1), integers
    hash mod classes; a replica holding rows [begin, begin+size) of the
    batch (@shard, @batch_dim) gets exactly those rows of the whole.
"""
import math
import os
import re
import socket
import sys
import time

import numpy as np

PHI = np.uint64(0x9E3779B97F4A7C15)
DEV_RE = re.compile(r'^/job:([^/]+)/replica:(\d+)/task:(\d+)/device:([A-Za-z_]+):(\d+)$')
VAR_OPS = ('VariableV2', 'Variable', 'VarHandleOp')


class PlanError(Exception):
    """A plan tfrun cannot run (bad device strings, too few tasks...)."""


class QuotaError(PlanError):
    """No CPU quota possible here (no writable cgroup CPU controller)."""


def _tf():
    import tensorflow as tf
    return tf


# ---- seeded values (backend/runtime/seed.c) ------------------------------

def fnv1a64(name):
    h = 0xcbf29ce484222325
    for c in name.encode('utf-8', 'surrogateescape') if isinstance(name, str) else name:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def seed_hash(name, seed, index):
    """pcc_seed_hash for an array of whole-tensor indices (uint64)."""
    with np.errstate(over='ignore'):
        h = np.uint64(fnv1a64(name))
        z = (h ^ (np.uint64(seed) * PHI)) + (index.astype(np.uint64) + np.uint64(1)) * PHI
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
        return z ^ (z >> np.uint64(31))


def seed_uniform(name, seed, index):
    return (seed_hash(name, seed, index) >> np.uint64(11)).astype(np.float64) * 2.0 ** -52 - 1.0


def whole_index(shape, batch_dim, begin, full):
    """Indices in the whole tensor of a tensor holding rows [begin, begin +
    shape[batch_dim]) of a batch of full along batch_dim."""
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    i = np.arange(n, dtype=np.int64)
    if batch_dim is None or batch_dim < 0 or batch_dim >= len(shape):
        return i.astype(np.uint64)
    rows = shape[batch_dim]
    inner = int(np.prod(shape[batch_dim + 1:], dtype=np.int64))
    o, r, k = i // (rows * inner), i // inner % rows, i % inner
    return ((o * full + begin + r) * inner + k).astype(np.uint64)


# ---- the GraphDef ----------------------------------------------------------

def load(path):
    tf = _tf()
    from google.protobuf import text_format
    gd = tf.compat.v1.GraphDef()
    with open(path) as f:
        text = f.read()
    if re.match(r'\s*(#[^\n]*\n\s*)*gir\s', text):
        raise ValueError("a gir graph, not a TensorFlow GraphDef: write the "
                         "plan with pcc --emit=tf first")
    text_format.Parse(text, gd)
    return gd


def _attr_s(node, key):
    if key in node.attr and node.attr[key].s:
        return node.attr[key].s.decode('utf-8', 'surrogateescape')
    return None


def origin(node):
    """The name in pcc's input graph: @origin, else the gir name."""
    return _attr_s(node, '_pcc_origin') or _attr_s(node, '_pcc_name') or node.name


def device_map(gd):
    """{plan device: local device}, tasks needed, CPU devices per task."""
    per_task = {}
    job = None
    for n in gd.node:
        if not n.device:
            continue
        m = DEV_RE.match(n.device)
        if not m:
            raise PlanError("node '%s': device '%s' is not /job:J/replica:R/task:I/device:TYPE:K"
                            % (n.name, n.device))
        if job is None:
            job = m.group(1)
        elif m.group(1) != job:
            raise PlanError("the plan uses two jobs, '%s' and '%s'" % (job, m.group(1)))
        per_task.setdefault(int(m.group(3)), set()).add((m.group(4).upper(), int(m.group(5)), n.device))
    mapping = {}
    ncpu = 1
    for task, devs in per_task.items():
        order = sorted(devs, key=lambda d: (d[0] != 'CPU', d[0], d[1]))
        for j, d in enumerate(order):
            mapping[d[2]] = '/job:worker/replica:0/task:%d/device:CPU:%d' % (task, j)
        ncpu = max(ncpu, len(order))
    ntasks = max(per_task) + 1 if per_task else 1
    return mapping, ntasks, ncpu


_key_base = [0]


# NCHW ops whose CPU kernels refuse NCHW (oneDNN takes only some cases):
# op -> (its NCHW activation inputs, its NCHW shape-vector inputs, whether
# its output is an NCHW activation)
_NCHW_OPS = {
    'MaxPool': ((0,), (), True), 'AvgPool': ((0,), (), True),
    'MaxPoolGrad': ((0, 1, 2), (), True), 'AvgPoolGrad': ((1,), (0,), True),
    'Conv2D': ((0,), (), True), 'Conv2DBackpropInput': ((2,), (0,), True),
    'Conv2DBackpropFilter': ((0, 2), (), False),
    'DepthwiseConv2dNative': ((0,), (), True),
    'DepthwiseConv2dNativeBackpropInput': ((2,), (0,), True),
    'DepthwiseConv2dNativeBackpropFilter': ((0, 2), (), False),
}


def _perm(v, p):
    return [v[i] for i in p]


def nhwc_ops(gd):
    """Every NCHW convolution, pooling op and their gradients becomes the
    NHWC op between Transposes (NAME/nhwc/..., then NAME = the result in
    NCHW), on its device: TensorFlow's CPU kernels refuse most NCHW cases.
    The numbers are the same; only the layout of the kernel's call
    changes.  Returns the names of the nodes rewritten."""
    tf = _tf()
    i32 = tf.int32.as_datatype_enum
    done = []
    for n in list(gd.node):
        spec = _NCHW_OPS.get(n.op)
        if not spec or n.attr['data_format'].s != b'NCHW':
            continue
        acts, shapes, out_act = spec
        dev = n.device

        def const(name, vals):
            c = gd.node.add(name=name, op='Const', device=dev)
            c.attr['dtype'].type = i32
            c.attr['value'].tensor.CopyFrom(tf.make_tensor_proto(vals, tf.int32))
            return name

        to_nhwc = const(n.name + '/nhwc/to', [0, 2, 3, 1])
        inner = gd.node.add()
        inner.CopyFrom(n)
        inner.name = n.name + '/nhwc/op'
        inner.attr['data_format'].s = b'NHWC'
        for k in ('ksize', 'strides', 'dilations'):
            if k in inner.attr and len(inner.attr[k].list.i) == 4:
                v = list(inner.attr[k].list.i)
                del inner.attr[k].list.i[:]
                inner.attr[k].list.i.extend(_perm(v, (0, 2, 3, 1)))
        if 'explicit_paddings' in inner.attr and len(inner.attr['explicit_paddings'].list.i) == 8:
            v = list(inner.attr['explicit_paddings'].list.i)
            pairs = [v[2 * i:2 * i + 2] for i in range(4)]
            del inner.attr['explicit_paddings'].list.i[:]
            for pr in _perm(pairs, (0, 2, 3, 1)):
                inner.attr['explicit_paddings'].list.i.extend(pr)
        data = [i for i in n.input if not i.startswith('^')]
        for k in acts:
            t = gd.node.add(name='%s/nhwc/in%d' % (n.name, k), op='Transpose', device=dev)
            t.input.extend([data[k], to_nhwc])
            t.attr['T'].CopyFrom(n.attr['T'])
            t.attr['Tperm'].type = i32
            inner.input[k] = t.name
        for k in shapes:
            g = gd.node.add(name='%s/nhwc/shape%d' % (n.name, k), op='GatherV2', device=dev)
            g.input.extend([data[k], to_nhwc, const('%s/nhwc/axis%d' % (n.name, k), 0)])
            g.attr['Tparams'].type = i32
            g.attr['Tindices'].type = i32
            g.attr['Taxis'].type = i32
            inner.input[k] = g.name
        ctrl = [i for i in n.input if i.startswith('^')]
        t = n.attr['T'].type
        for k in list(n.attr):
            if not k.startswith('_'):
                del n.attr[k]
        del n.input[:]
        n.attr['T'].type = t
        if out_act:
            n.op = 'Transpose'
            n.input.extend([inner.name, const(n.name + '/nhwc/back', [0, 3, 1, 2])] + ctrl)
            n.attr['Tperm'].type = i32
        else:
            n.op = 'Identity'
            n.input.extend([inner.name] + ctrl)
        done.append(n.name)
    return done


def prepare(gd, ntasks_avail):
    """Maps the devices in place, gives the collectives keys no other plan
    of this process uses; returns (tasks needed, CPUs per task)."""
    nhwc_ops(gd)
    mapping, ntasks, ncpu = device_map(gd)
    if ntasks > ntasks_avail:
        raise PlanError('the plan places ops on %d tasks (task:0 .. task:%d) but the '
                        'cluster has %d (--tasks)' % (ntasks, ntasks - 1, ntasks_avail))
    base = _key_base[0]
    top = 0
    for n in gd.node:
        if n.device:
            n.device = mapping[n.device]
        if n.op == 'CollectiveReduce':
            for k in ('group_key', 'instance_key'):
                top = max(top, n.attr[k].i)
                n.attr[k].i += base
    _key_base[0] = base + top + 1
    return ntasks, ncpu


# ---- ports and the session config ---------------------------------------------

def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(('127.0.0.1', 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def session_config(ncpu, intra=1, inter=1):
    tf = _tf()
    c = tf.compat.v1.ConfigProto()
    c.device_count['CPU'] = ncpu
    c.intra_op_parallelism_threads = intra
    c.inter_op_parallelism_threads = inter
    c.allow_soft_placement = False
    c.isolate_session_state = True
    c.experimental.collective_group_leader = '/job:worker/replica:0/task:0'
    return c


# ---- CPU quotas (cgroups) -------------------------------------------------------

# The CFS quota of a throttled task: QUOTA_US per period of QUOTA_US /
# fraction (fraction < 1), the kernel's smallest quota (1 ms) in the
# shortest period that gives the fraction, so that a step of a few
# milliseconds already runs at the quota's pace instead of at full speed
# until a long period's quota runs out; fraction >= 1: fraction * 1 ms
# per 1 ms.
QUOTA_US = 1000
CGROUP_PREFIX = 'pcc-tfrun.'


def parse_throttle(items, ntasks=None):
    """['TASK=FRACTION', ...] -> {task: fraction of one CPU}."""
    out = {}
    for it in items or ():
        task, eq, frac = it.partition('=')
        try:
            t, f = int(task), float(frac)
        except ValueError:
            t = f = None
        if not eq or t is None or t < 0 or not 0 < f <= 64:
            raise PlanError("--throttle '%s': want TASK=FRACTION, a task index and a "
                            "fraction of one CPU in (0, 64]" % it)
        if ntasks is not None and t >= ntasks:
            raise PlanError("--throttle '%s': the cluster has tasks 0 .. %d" % (it, ntasks - 1))
        out[t] = f
    return out


def cpu_cgroup_parent():
    """The directory of this process's cgroup in the CPU controller where a
    child cgroup with a quota can be made: ('v1', dir) for cgroup v1's cpu
    controller (cpu.cfs_quota_us), ('v2', dir) for the unified hierarchy
    with the cpu controller enabled below it (cpu.max).  Raises PlanError
    saying why not (no such controller, not writable: not root)."""
    mine = {}
    try:
        with open('/proc/self/cgroup') as f:
            for line in f:
                _, ctrls, path = line.rstrip('\n').split(':', 2)
                for c in ctrls.split(',') if ctrls else ['']:
                    mine[c] = path
        with open('/proc/self/mountinfo') as f:
            mounts = [line.split() for line in f]
    except OSError as e:
        raise QuotaError('no cgroups here (%s)' % e)
    why = 'no cgroup CPU controller is mounted'
    for m in mounts:
        sep = m.index('-')
        fstype, opts, mnt, root = m[sep + 1], m[sep + 3].split(','), m[4], m[3]
        if fstype == 'cgroup' and 'cpu' in opts and 'cpu' in mine:
            rel = mine['cpu']
            d = os.path.join(mnt, os.path.relpath(rel, root) if rel.startswith(root) else '.')
            d = os.path.normpath(d)
            if not os.path.exists(os.path.join(d, 'cpu.cfs_quota_us')):
                why = 'cgroup v1 cpu controller at %s has no cpu.cfs_quota_us' % d
            elif not os.access(d, os.W_OK):
                why = 'cgroup v1 cpu controller at %s is not writable (not root?)' % d
            else:
                return 'v1', d
        elif fstype == 'cgroup2' and '' in mine:
            rel = mine['']
            d = os.path.normpath(os.path.join(mnt, os.path.relpath(rel, root)
                                              if rel.startswith(root) else '.'))
            try:
                with open(os.path.join(d, 'cgroup.subtree_control')) as f:
                    enabled = 'cpu' in f.read().split()
            except OSError:
                enabled = False
            if not enabled:
                why = why if why.startswith('cgroup v1') else \
                    'cgroup v2 at %s has no cpu controller enabled for its children' % d
            elif not os.access(d, os.W_OK):
                why = 'cgroup v2 at %s is not writable (not root?)' % d
            else:
                return 'v2', d
    raise QuotaError(why)


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class CpuQuota:
    """A cgroup of its own with a CPU quota of fraction of one CPU (CFS
    bandwidth control, QUOTA_US),
    named pcc-tfrun.PID.TASK under this process's cgroup.  remove() deletes
    it once its processes have ended; cgroups that a killed tfrun left
    (their PID gone, no process inside) are removed when a new one is
    made."""

    def __init__(self, task, fraction):
        self.version, parent = cpu_cgroup_parent()
        self._sweep(parent)
        self.path = os.path.join(parent, '%s%d.%d' % (CGROUP_PREFIX, os.getpid(), task))
        try:
            os.mkdir(self.path)
        except FileExistsError:
            pass
        except OSError as e:
            raise QuotaError('cannot make cgroup %s: %s' % (self.path, e))
        if fraction < 1:
            quota, period = QUOTA_US, min(1000000, int(round(QUOTA_US / fraction)))
        else:
            quota, period = int(round(fraction * QUOTA_US)), QUOTA_US
        try:
            if self.version == 'v1':
                self._write('cpu.cfs_quota_us', -1)   # any period is then allowed
                self._write('cpu.cfs_period_us', period)
                self._write('cpu.cfs_quota_us', quota)
            else:
                self._write('cpu.max', '%d %d' % (quota, period))
        except OSError as e:
            self.remove()
            raise QuotaError('cannot set the CPU quota of %s: %s' % (self.path, e))
        self.quota_us, self.period_us = quota, period
        self.fraction = quota / period

    def _write(self, name, value):
        with open(os.path.join(self.path, name), 'w') as f:
            f.write('%s\n' % value)

    @staticmethod
    def _sweep(parent):
        try:
            names = os.listdir(parent)
        except OSError:
            return
        for n in names:
            if not n.startswith(CGROUP_PREFIX):
                continue
            try:
                pid = int(n[len(CGROUP_PREFIX):].split('.')[0])
            except ValueError:
                continue
            if pid != os.getpid() and not _pid_alive(pid):
                try:
                    os.rmdir(os.path.join(parent, n))
                except OSError:
                    pass

    def enter(self):
        """Moves the calling process (and the threads it starts later)
        into the cgroup: for a child between fork and exec."""
        with open(os.path.join(self.path, 'cgroup.procs'), 'w') as f:
            f.write('%d\n' % os.getpid())

    def remove(self):
        if not self.path:
            return
        for _ in range(50):
            try:
                os.rmdir(self.path)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)   # its last process still exiting
        else:
            print('pcctf: warning: could not remove cgroup %s' % self.path, file=sys.stderr)
        self.path = None


# ---- the cluster -----------------------------------------------------------------

def _set_pdeathsig():
    """In a child before exec: SIGKILL when the parent dies (Linux), so a
    killed tfrun leaves no servers behind."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, 9)   # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass


def serve(argv):
    """The body of one task's process: pcctf.py --serve HOSTS TASK NCPU
    INTRA INTER.  Starts the server, prints 'ready', serves until killed."""
    hosts, task, ncpu, intra, inter = argv[0].split(','), int(argv[1]), *map(int, argv[2:5])
    tf = _tf()
    spec = tf.train.ClusterSpec({'worker': hosts})
    server = tf.distribute.Server(spec, job_name='worker', task_index=task,
                                  config=session_config(ncpu, intra, inter), start=True)
    print('ready %s' % server.target, flush=True)
    server.join()


class Cluster:
    """ntasks tf.distribute.Servers of job worker, each with ncpu CPU
    devices: by default all in this process (servers cannot be stopped:
    start one cluster per process, as large as the largest plan); with
    processes=True (or a throttle) one process per task, each started by
    this one with the same interpreter, the ones in throttle
    ({task: fraction}) in a cgroup of their own with that CPU quota
    (CpuQuota).  close() (also at exit, on SIGTERM, SIGHUP and SIGINT)
    ends the processes and removes the cgroups."""

    def __init__(self, ntasks, ncpu=1, intra=1, inter=1, processes=False, throttle=None):
        tf = _tf()
        throttle = throttle or {}
        if throttle and max(throttle) >= ntasks:
            raise PlanError('--throttle names task %d; the cluster has tasks 0 .. %d'
                            % (max(throttle), ntasks - 1))
        ports = free_ports(ntasks)
        hosts = ['127.0.0.1:%d' % p for p in ports]
        self.spec = tf.train.ClusterSpec({'worker': hosts})
        self.ntasks, self.ncpu = ntasks, ncpu
        self.config = session_config(ncpu, intra, inter)
        self.procs, self.quotas, self.servers = [], {}, []
        self.processes = bool(processes or throttle)
        if not self.processes:
            self.servers = [tf.distribute.Server(self.spec, job_name='worker', task_index=i,
                                                 config=self.config, start=True)
                            for i in range(ntasks)]
            self.target = self.servers[0].target
            return
        import atexit
        import signal
        atexit.register(self.close)
        _live_clusters.append(self)
        for sig, default in ((signal.SIGTERM, signal.SIG_DFL),
                             (signal.SIGHUP, signal.SIG_DFL),
                             (signal.SIGINT, signal.default_int_handler)):
            if signal.getsignal(sig) == default:
                signal.signal(sig, _exit_on_signal)
        try:
            for t, f in sorted(throttle.items()):
                self.quotas[t] = CpuQuota(t, f)
            self._start(hosts, ncpu, intra, inter)
        except BaseException:
            self.close()
            raise
        self.target = 'grpc://' + hosts[0]

    def _start(self, hosts, ncpu, intra, inter):
        import subprocess
        import tempfile
        me = os.path.abspath(__file__)
        for i in range(self.ntasks):
            q = self.quotas.get(i)

            def pre(q=q):
                _set_pdeathsig()
                if q is not None:
                    q.enter()
            err = tempfile.TemporaryFile()
            p = subprocess.Popen([sys.executable, me, '--serve', ','.join(hosts), str(i),
                                  str(ncpu), str(intra), str(inter)],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                                 preexec_fn=pre)
            p.errfile = err
            self.procs.append(p)
        for i, p in enumerate(self.procs):
            line = p.stdout.readline()
            if not line.startswith(b'ready'):
                p.wait()
                p.errfile.seek(0)
                last = [x for x in p.errfile.read().decode('utf-8', 'replace').split('\n')
                        if x.strip()]
                raise PlanError('task %d did not start (exit %s): %s'
                                % (i, p.returncode, last[-1] if last else 'no message'))

    def close(self):
        """Ends the task processes and removes the cgroups (idempotent)."""
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except Exception:
                p.kill()
                p.wait()
            p.errfile.close()
            p.stdout.close()
        self.procs = []
        for q in self.quotas.values():
            q.remove()
        self.quotas = {}
        if self in _live_clusters:
            _live_clusters.remove(self)


# The clusters with task processes, for the signal handler below.
_live_clusters = []


def _exit_on_signal(sig, frame):
    """SIGTERM, SIGHUP or SIGINT: ends every cluster's task processes,
    removes their cgroups and exits 128 + sig at once.  It does not
    unwind: raising SystemExit mid-run sent the exit through TensorFlow's
    session and gRPC teardown, which can crash (a CI run died of SIGSEGV
    there, before atexit's close, and left its cgroup behind)."""
    for c in list(_live_clusters):
        try:
            c.close()
        except Exception:
            pass
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    os._exit(128 + sig)


# ---- running a plan --------------------------------------------------------

def _label_classes(op):
    """The C runtime's classes of an integer Placeholder (backend/c.c)."""
    moves = {'Split', 'SplitV', 'ConcatV2', 'Identity', 'Snapshot', 'StopGradient',
             'Reshape', 'ExpandDims', 'Squeeze'}
    from tensorflow.python.framework import tensor_util
    classes, seen, stack = None, {op.name}, [op]
    while stack:
        x = stack.pop()
        for out in x.outputs:
            for c in out.consumers():
                n = None
                if c.type in ('SparseSoftmaxCrossEntropyWithLogits',
                              'SoftmaxCrossEntropyWithLogits') and c.inputs[1].name == out.name:
                    s = c.inputs[0].shape
                    n = s[1] if s.rank == 2 else -1
                elif c.type == 'GatherV2' and c.inputs[1].name == out.name:
                    ax = tensor_util.constant_value(c.inputs[2])
                    s = c.inputs[0].shape
                    n = s[int(ax)] if ax is not None and s.rank else -1
                elif c.type == 'UnsortedSegmentSum' and c.inputs[1].name == out.name:
                    s = c.outputs[0].shape
                    n = s[0] if s.rank else -1
                elif c.type in moves and c.name not in seen:
                    seen.add(c.name)
                    stack.append(c)
                    continue
                else:
                    continue
                if n is not None and n > 0 and (classes is None or n < classes):
                    classes = n
    return classes or 2


def placeholder_data(graph, gd, seed):
    """{tensor name: seeded numpy array} for every Placeholder."""
    full = {}
    for n in gd.node:
        if n.op == 'Placeholder' and '_pcc_shard' in n.attr:
            b, s = n.attr['_pcc_shard'].list.i[:2]
            full[origin(n)] = max(full.get(origin(n), 0), b + s)
    feeds = {}
    for n in gd.node:
        if n.op != 'Placeholder':
            continue
        op = graph.get_operation_by_name(n.name)
        t = op.outputs[0]
        if not t.shape.is_fully_defined():
            raise PlanError("Placeholder '%s' has no static shape" % n.name)
        shape = [int(d) for d in t.shape]
        name = origin(n)
        bd, begin = None, 0
        if '_pcc_shard' in n.attr:
            begin = n.attr['_pcc_shard'].list.i[0]
            bd = n.attr['_pcc_batch_dim'].i if '_pcc_batch_dim' in n.attr else 0
        idx = whole_index(shape, bd, begin, full.get(name, 0))
        dt = t.dtype.as_numpy_dtype
        if t.dtype.is_floating:
            v = seed_uniform(name, seed, idx).astype(dt)
        else:
            v = (seed_hash(name, seed, idx) % np.uint64(_label_classes(op))).astype(dt)
        feeds[t] = v.reshape(shape)
    return feeds


def step_targets(gd):
    """The nodes nothing reads, but init, save/ and the sources."""
    used = set()
    for n in gd.node:
        for i in n.input:
            used.add(i.lstrip('^').split(':')[0])
    skip = set(VAR_OPS) | {'Placeholder', 'Const', 'PlaceholderWithDefault'}
    return [n.name for n in gd.node
            if n.name not in used and n.name != 'init' and not n.name.startswith('save/')
            and n.op not in skip]


class Result:
    def __init__(self):
        self.values = {}       # original name -> numpy array (first copy)
        self.copies_differ = {}
        self.times = []
        self.fetched = {}


def dropout_masks(gd):
    """The dropout masks of a graph (torch2gir's lowering, docs/models.md):
    {GreaterEqual node reading a RandomUniform: the name of its threshold,
    the rate}."""
    byname = {n.name: n for n in gd.node}
    out = {}
    for n in gd.node:
        if n.op != 'GreaterEqual' or len(n.input) < 2:
            continue
        a, b = (byname.get(i.split(':')[0]) for i in n.input[:2])
        if a is not None and a.op == 'RandomUniform' and b is not None:
            out[n.name] = b.name
    return out


def _outputs(graph, gd):
    """The graph outputs (@output, kept as _pcc_output): {NAME or NAME:k:
    [(tensor, begin, sum?), ...]} over the replicas of each op."""
    out = {}
    for n in gd.node:
        if '_pcc_output' not in n.attr or not n.attr['_pcc_output'].b:
            continue
        op = graph.get_operation_by_name(n.name)
        begin = n.attr['_pcc_shard'].list.i[0] if '_pcc_shard' in n.attr else None
        summed = _attr_s(n, '_pcc_split') == 'sum'
        for k, t in enumerate(op.outputs):
            name = origin(n) if k == 0 else '%s:%d' % (origin(n), k)
            out.setdefault(name, []).append((t, begin, summed,
                                             n.attr['_pcc_shard'].list.i[1] if begin is not None else 0))
    return out


def _assemble(parts):
    """An output from its replicas' values, as the C runtime assembles
    them (docs/backends.md, "Results"): summed when the op's split category
    is sum, else concatenated in the order of @shard's begin along the
    dimension that is their shard size; copies (@dup, no @shard) are one."""
    if len(parts) == 1:
        return parts[0][0]
    if parts[0][2]:
        return np.sum([p[0].astype(np.float64) for p in parts], axis=0).astype(parts[0][0].dtype)
    if any(p[1] is None for p in parts):
        return parts[0][0]
    parts = sorted(parts, key=lambda p: p[1])
    rank = parts[0][0].ndim
    for d in range(rank):
        if all(p[0].shape[d] == p[3] for p in parts):
            return np.concatenate([p[0] for p in parts], axis=d)
    return parts[0][0]


class PlanRun:
    """One prepared GraphDef (prepare()) in a session of its own on
    cluster: __init__ runs init (then, with restore, save/restore_all from
    that checkpoint prefix); step() runs one training step and returns its
    wall time; finish() (then, with save, save/control_dependency to that
    prefix) closes the session and returns a Result with every original
    variable's value, the step times, and in fetched the values of the
    tensors named in fetch during the last step.  Several PlanRuns may
    share one cluster (the session config isolates their state), so that
    their steps can interleave (tools/tfrun with several plans)."""

    def __init__(self, cluster, gd, seed=0, fetch=(), restore=None):
        tf = _tf()
        self.gd, self.fetch = gd, fetch
        self.graph = graph = tf.Graph()
        with graph.as_default():
            tf.graph_util.import_graph_def(gd, name='')
            self.reads = {}
            for n in gd.node:
                if n.op in VAR_OPS:
                    op = graph.get_operation_by_name(n.name)
                    if n.op == 'VarHandleOp':
                        with tf.device(n.device or None):
                            t = tf.raw_ops.ReadVariableOp(resource=op.outputs[0],
                                                          dtype=n.attr['dtype'].type)
                    else:
                        t = op.outputs[0]
                    self.reads.setdefault(origin(n), []).append(t)
        self.feeds = placeholder_data(graph, gd, seed)
        self.outs = _outputs(graph, gd)
        self.onames = sorted(self.outs)
        self.targets = [graph.get_operation_by_name(x) for x in step_targets(gd)]
        self.res = Result()
        self.has_save = any(n.name == 'save/restore_all' for n in gd.node)
        self.sess = tf.compat.v1.Session(cluster.target, graph=graph, config=cluster.config)
        try:
            init_feed = {}
            try:
                init_feed[graph.get_tensor_by_name('init/seed:0')] = np.uint64(seed)
            except KeyError:
                pass
            self.sess.run(graph.get_operation_by_name('init'), init_feed)
            if restore and self.has_save:
                self.sess.run(graph.get_operation_by_name('save/restore_all'),
                              {graph.get_tensor_by_name('save/Const:0'): restore})
        except BaseException:
            self.sess.close()
            raise

    def step(self, last=False, trace=False, timeline=None):
        """One step; last: fetch the outputs (and fetch's tensors); trace:
        FULL_TRACE, returning its RunMetadata beside the time; timeline: a
        Chrome trace of this step to that file.  Returns (seconds, meta)."""
        tf = _tf()
        graph, outs = self.graph, self.outs
        opts = meta = None
        if trace or timeline:
            opts = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
            meta = tf.compat.v1.RunMetadata()
        fetches = [graph.get_tensor_by_name(x if ':' in x else x + ':0')
                   for x in self.fetch] if last else []
        t0 = time.perf_counter()
        otens = [[p[0] for p in outs[x]] for x in self.onames] if last else []
        got, ovals = self.sess.run([self.targets, fetches, otens], self.feeds,
                                   options=opts, run_metadata=meta)[1:]
        dt = time.perf_counter() - t0
        if last:
            self.res.fetched = dict(zip(self.fetch, got))
            for x, vals in zip(self.onames, ovals):
                self.res.values[x] = _assemble([(v,) + p[1:] for v, p in zip(vals, outs[x])])
        self.res.times.append(dt)
        if timeline:
            from tensorflow.python.client import timeline as tl
            with open(timeline, 'w') as f:
                f.write(tl.Timeline(meta.step_stats).generate_chrome_trace_format())
        return dt, meta

    def finish(self, save=None):
        graph, res = self.graph, self.res
        try:
            if save and self.has_save:
                self.sess.run(graph.get_tensor_by_name('save/control_dependency:0'),
                              {graph.get_tensor_by_name('save/Const:0'): save})
            names = sorted(self.reads)
            vals = self.sess.run([self.reads[n] for n in names])
        finally:
            self.sess.close()
        for name, copies in zip(names, vals):
            res.values[name] = copies[0]
            d = max(max_difference(c, copies[0]) for c in copies)
            if d > 0:
                res.copies_differ[name] = d
        return res


def run_plan(cluster, gd, steps=1, seed=0, timeline=None, log=None, fetch=(),
             restore=None, save=None, traces=None):
    """Runs a prepared GraphDef (prepare()) on cluster: init (then, with
    restore, save/restore_all from that checkpoint prefix), then steps
    steps (then, with save, save/control_dependency to that prefix);
    returns PlanRun.finish()'s Result.  With a list traces, every step
    runs with FULL_TRACE and appends its RunMetadata (tools/tfprofile)."""
    r = PlanRun(cluster, gd, seed, fetch, restore)
    try:
        for k in range(steps):
            last = k == steps - 1
            dt, meta = r.step(last, traces is not None, timeline if last else None)
            if traces is not None:
                traces.append(meta)
            if log:
                log('step %d: %.6f s' % (k + 1, dt))
    except BaseException:
        r.sess.close()
        raise
    return r.finish(save)


def summary_lines(values):
    """NAME SUM L2NORM, as the C runtime prints them (%.9g, double sums)."""
    out = []
    for name in sorted(values):
        v = values[name].reshape(-1)
        sm = sq = 0.0
        for i in range(0, v.size, CHUNK):
            c = v[i:i + CHUNK].astype(np.float64)
            sm += float(np.sum(c))
            sq += float(np.dot(c, c))
        out.append('%s %.9g %.9g' % (name, sm, math.sqrt(sq)))
    return out


CHUNK = 1 << 22   # elements compared at a time: VGG-19's 103 M-element weight
#                  would need GBs of float64 temporaries at once


def max_difference(x, y, relative=False):
    """max |x - y| (over max(1, |y|) when relative) in float64, over
    chunks of the flattened arrays (same shape), 0 when empty."""
    x, y = x.reshape(-1), y.reshape(-1)
    worst = 0.0
    for i in range(0, x.size, CHUNK):
        a = x[i:i + CHUNK].astype(np.float64)
        b = y[i:i + CHUNK].astype(np.float64)
        d = np.abs(a - b)
        if relative:
            d /= np.maximum(1.0, np.abs(b))
        worst = max(worst, float(np.max(d)))
    return worst


def largest_difference(a, b):
    """Largest element difference of the variables both have, relative
    above 1 (as tests/run-ctests.sh): (difference, name)."""
    worst, where = 0.0, None
    for name in sorted(set(a) & set(b)):
        x, y = a[name], b[name]
        if x.shape != y.shape:
            return math.inf, name + ' (shapes differ)'
        if not x.size:
            continue
        d = max_difference(x, y, relative=True)
        if d > worst or where is None:
            worst, where = d, name
    return worst, where


def error_line(e):
    """The informative line of a TensorFlow error (not 'Graph execution
    error:' nor the Python traceback TensorFlow quotes)."""
    msg = getattr(e, 'message', None) or str(e)
    lines = [x.strip() for x in msg.split('\n') if x.strip()]
    for x in lines:
        if x.startswith(('Graph execution error', 'Detected at node', 'File ', 'Node:')):
            continue
        if re.match(r'^\w+Error|^[A-Z][a-z]+.*: ', x) or 'node' in x:
            return x
    return lines[0] if lines else type(e).__name__


if __name__ == '__main__' and sys.argv[1:2] == ['--serve']:
    serve(sys.argv[2:])
