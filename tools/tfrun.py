"""tools/tfrun's body (run through tools/tfpython): see tools/tfrun and
docs/backends.md.  stdout: NAME SUM L2NORM per original variable after the
steps; stderr: tfrun: step K: X.XXXXXX s, and with --compare the largest
difference.  Several plans run on one local cluster, each in a session of
its own, their steps interleaved in turns of --block steps (round k
starts with plan k mod n), so that a slow minute of the machine falls on
all of them alike: stdout then has a line "# PLAN" before each plan's
variables, stderr "tfrun: PLAN: step K: X.XXXXXX s", with " (after a
switch)" after the first step of every turn (caches and the executor's
state are the previous plan's then: not a step to time).  Exit status:
0; 1 a difference above --tol (or a plan whose replicas of a variable
differ); 2 bad usage or a plan tfrun cannot run;
3 TensorFlow failed running it; 4 --throttle impossible here (no writable
cgroup CPU controller: the message says why)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcctf  # noqa: E402


def log(msg):
    print('tfrun: ' + msg, file=sys.stderr, flush=True)


def positive(s):
    v = int(s)
    if v < 1:
        raise argparse.ArgumentTypeError('must be at least 1')
    return v


def main():
    ap = argparse.ArgumentParser(prog='tfrun', description='Runs a pcc plan (--emit=tf) '
                                 'on a local TensorFlow cluster: init, then N steps.')
    ap.add_argument('plan', nargs='+', help='one plan, or several to measure side by side')
    ap.add_argument('--tasks', type=positive, help='tasks of the local cluster '
                    '(default: as many as the plan uses)')
    ap.add_argument('--steps', type=positive, default=1)
    ap.add_argument('--block', type=positive, default=5,
                    help='with several plans: steps of one plan per turn (default 5)')
    ap.add_argument('--intra', type=positive, default=1, help='intra-op threads per task')
    ap.add_argument('--inter', type=positive, default=1, help='inter-op threads per task')
    ap.add_argument('--seed', type=int, default=0, help='seed of the data and initial values')
    ap.add_argument('--compare', metavar='SINGLE.pbtxt',
                    help='also run this (one-device) plan and print the largest difference')
    ap.add_argument('--tol', type=float, default=1e-4,
                    help='--compare fails above this (relative above 1; default 1e-4)')
    ap.add_argument('--timeline', metavar='FILE', help="Chrome trace of the last step")
    ap.add_argument('--process-per-task', action='store_true',
                    help='each task a process of its own (default: all tasks in this one)')
    ap.add_argument('--throttle', action='append', metavar='TASK=FRACTION',
                    help="run task TASK's process in a cgroup with a CPU quota of FRACTION "
                    "of one CPU (implies --process-per-task; root, cgroup cpu controller; "
                    "repeatable)")
    a = ap.parse_args()
    if a.seed < 0 or a.seed >= 2 ** 64:
        ap.error('--seed must be in [0, 2^64)')
    if a.timeline and len(a.plan) > 1:
        ap.error('--timeline takes one plan')
    try:
        plans = [pcctf.load(p) for p in a.plan]
        if a.compare:
            plans.append(pcctf.load(a.compare))
        need = [pcctf.device_map(gd) for gd in plans]
        ntasks = a.tasks or max(n[1] for n in need)
        ncpu = max(n[2] for n in need)
        for gd in plans:
            pcctf.prepare(gd, ntasks)
        throttle = pcctf.parse_throttle(a.throttle, ntasks)
    except (OSError, pcctf.PlanError) as e:
        log('error: %s' % e)
        return 2
    except Exception as e:  # a malformed GraphDef
        log('error: %s: %s' % (' '.join(a.plan), e))
        return 2
    try:
        cluster = pcctf.Cluster(ntasks, ncpu, a.intra, a.inter, a.process_per_task, throttle)
    except pcctf.QuotaError as e:
        log('error: %s' % e)
        return 4
    except pcctf.PlanError as e:
        log('error: %s' % e)
        return 2
    for t, q in sorted(cluster.quotas.items()):
        log('task %d: CPU quota %d us per %d us (%.3g CPU), cgroup %s'
            % (t, q.quota_us, q.period_us, q.fraction, q.path))
    import tensorflow as tf
    try:
        if len(a.plan) == 1:
            results = [pcctf.run_plan(cluster, plans[0], a.steps, a.seed, a.timeline, log)]
        else:
            results = interleaved(cluster, a.plan, plans[:len(a.plan)], a.steps, a.block,
                                  a.seed)
        ref = pcctf.run_plan(cluster, plans[-1], a.steps, a.seed) if a.compare else None
    except pcctf.PlanError as e:
        log('error: %s' % e)
        return 2
    except (tf.errors.OpError, ValueError) as e:
        log('error: TensorFlow: %s' % pcctf.error_line(e))
        return 3
    status = 0
    for path, r in zip(a.plan, results):
        if len(a.plan) > 1:
            print('# %s' % path)
        print('\n'.join(pcctf.summary_lines(r.values)))
        status = max(status, check(a, path, r, ref))
    return status


def interleaved(cluster, paths, gds, steps, block, seed):
    """Steps of several plans in turns of block steps, each plan in its
    own session; round k starts with plan k mod n.  Their Results, in the
    order of paths."""
    runs = []
    try:
        for gd in gds:
            runs.append(pcctf.PlanRun(cluster, gd, seed))
        n = len(runs)
        for k in range(0, steps, block):
            for j in range(n):
                i = (k // block + j) % n
                for s in range(k, min(k + block, steps)):
                    dt = runs[i].step(s == steps - 1)[0]
                    log('%s: step %d: %.6f s%s' % (paths[i], s + 1, dt,
                                                   ' (after a switch)' if s == k else ''))
        return [r.finish() for r in runs]
    finally:
        for r in runs:
            r.sess.close()


def check(a, path, r, ref):
    """Reports copies that differ and, with --compare, the difference from
    the reference; the exit status this plan asks for."""
    status = 0
    who = '%s: ' % path if len(a.plan) > 1 else ''
    for name, d in sorted(r.copies_differ.items()):
        log('%scopies of %s differ by up to %.3g' % (who, name, d))
    if ref is not None:
        d, where = pcctf.largest_difference(r.values, ref.values)
        missing = sorted(set(ref.values) - set(r.values))
        log('%slargest difference from %s: %.3g (%s)' % (who, a.compare, d, where))
        if missing:
            log('%svariables of %s missing from the plan: %s' % (who, a.compare, ' '.join(missing)))
            status = 1
        if not d <= a.tol:
            log('%sdifference above --tol %g' % (who, a.tol))
            status = 1
    return status

if __name__ == '__main__':
    sys.exit(main())
