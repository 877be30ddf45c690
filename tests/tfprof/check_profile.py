"""check_profile.py PROFILE.yaml COSTS.csv COSTS0.csv TYPE BATCH — checks a
profile tools/tfprofile wrote for a graph against the cost table pcc
printed with it (COSTS.csv) and without it (COSTS0.csv), deterministic
facts only (tests/run-tfprofile.sh):

  - the YAML has batch_sizes (two or more, increasing) and ops, and every
    op of the cost table has an entry for TYPE with one time per batch;
  - every time is a number of microseconds >= 0;
  - pcc's time for each op (COSTS.csv, the graph at BATCH) is the least
    squares line a + b*batch through the entry's points, evaluated at
    BATCH, or the smallest measured time where that line is not positive
    (a noisy fit; docs/cost-model.md), to 1e-6 relative;
  - an op whose profiled times differ from the roofline changes the table:
    at least one row of COSTS.csv differs from COSTS0.csv.
Prints one line per failure and "profile: N passed, N failed"."""
import csv
import json
import sys

prof_path, costs_path, costs0_path, dtype, batch = sys.argv[1:6]
batch = float(batch)
npass = nfail = 0


def ok(cond, what):
    global npass, nfail
    if cond:
        npass += 1
    else:
        nfail += 1
        print('FAIL ' + what)
    return cond


def seconds(s):
    s = str(s).strip()
    assert s.endswith(' us'), s
    return float(s[:-3]) * 1e-6


def unquote(k):
    k = k.strip()
    return json.loads(k) if k.startswith('"') else k


def load(path):
    """The subset of YAML tfprofile writes: batch_sizes: [..], ops:, then
    '  NAME:' and '    TYPE: [T, T, ...]' lines (comments after '#')."""
    prof, op = {}, None
    with open(path) as f:
        for line in f:
            if line.lstrip().startswith('#') or not line.strip():
                continue
            body = line.split('  #')[0].rstrip()
            if body.startswith('batch_sizes:'):
                prof['batch_sizes'] = [int(x) for x in body.split('[')[1].rstrip(']').split(',')]
            elif body == 'ops:':
                prof['ops'] = {}
            elif body.startswith('    '):
                k, v = body.strip().split(': ', 1)
                prof['ops'][op][unquote(k)] = [x.strip() for x in v.strip('[]').split(',')]
            elif body.startswith('  ') and body.endswith(':'):
                op = unquote(body.strip()[:-1])
                prof['ops'][op] = {}
            else:
                raise ValueError('unexpected line: ' + line)
    return prof


prof = load(prof_path)
bs = prof.get('batch_sizes') if isinstance(prof, dict) else None
ok(isinstance(bs, list) and len(bs) >= 2 and bs == sorted(set(bs)), 'batch_sizes: two or more, increasing')
ops = prof.get('ops') if isinstance(prof, dict) else None
ok(isinstance(ops, dict) and ops, 'ops: a non-empty mapping')
with open(costs_path) as f:
    rows = [r for r in csv.DictReader(f) if r['device_type'] == dtype]
with open(costs0_path) as f:
    rows0 = {r['op']: r for r in csv.DictReader(f) if r['device_type'] == dtype}
ok(rows, 'the cost table has rows for ' + dtype)
for r in rows:
    e = (ops or {}).get(r['op'])
    if not ok(isinstance(e, dict) and isinstance(e.get(dtype), list) and len(e[dtype]) == len(bs),
              "op %s: an entry for %s with %d times" % (r['op'], dtype, len(bs or []))):
        continue
    ts = [seconds(t) for t in e[dtype]]
    ok(all(t >= 0 for t in ts), 'op %s: times >= 0' % r['op'])
    n = len(bs)
    mx, my = sum(bs) / n, sum(ts) / n
    sxx = sum((x - mx) ** 2 for x in bs)
    b = sum((x - mx) * (y - my) for x, y in zip(bs, ts)) / sxx
    want = my - b * mx + b * batch
    if want <= 0:
        want = min(ts)   # pcc's floor for a fit that goes negative (noise)
    got = float(r['time_s'])
    ok(abs(got - want) <= 1e-6 * max(abs(want), 1e-9) + 1e-12,
       'op %s: pcc costs %.9g s, the fit at batch %g gives %.9g s' % (r['op'], got, batch, want))
ok(any(float(r['time_s']) != float(rows0[r['op']]['time_s']) for r in rows if r['op'] in rows0),
   'the profile changes the cost table')
print('profile: %d passed, %d failed' % (npass, nfail))
sys.exit(1 if nfail else 0)
