"""check_untraced.py -- tools/tfprofile's fit_untraced() on numbers worked
out by hand (tests/run-tfprofile.sh): a batch whose traced span exceeds
its untraced step less the step overhead gets its ops scaled to that, in
proportion; the others keep theirs.  Prints "untraced: N passed, N
failed"."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools'))
import tfprofile  # noqa: E402

npass = nfail = 0


def ok(cond, what):
    global npass, nfail
    if cond:
        npass += 1
    else:
        nfail += 1
        print('FAIL untraced: %s' % what)


def close(a, b):
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


# batch 4: span 3 ms of ops (1 + 2), untraced step 2.5 ms, overhead 0.1 ms:
# the ops take 2.4 ms untraced, scaled by 0.8 -> 0.8 and 1.6 ms.
# batch 8: span 5 ms, untraced step 6 ms: left alone (the overhead is the rest).
# batch 16: untraced step 0.05 ms, less than the overhead: left alone.
res = {4: {'times': {'a': 1e-3, 'b': 2e-3}, 'span': 3e-3, 'wall': 2.5e-3},
       8: {'times': {'a': 2e-3, 'b': 3e-3}, 'span': 5e-3, 'wall': 6e-3},
       16: {'times': {'a': 1e-3}, 'span': 1e-3, 'wall': 0.05e-3}}
done = tfprofile.fit_untraced(res, 0.1e-3)
ok(done == [4], 'only batch 4 is scaled: %s' % done)
ok(close(res[4]['span'], 2.4e-3), 'batch 4 span 2.4 ms: %r' % res[4]['span'])
ok(close(res[4]['times']['a'], 0.8e-3) and close(res[4]['times']['b'], 1.6e-3),
   'batch 4 ops 0.8 and 1.6 ms: %r' % res[4]['times'])
ok(res[8]['times'] == {'a': 2e-3, 'b': 3e-3} and res[8]['span'] == 5e-3, 'batch 8 unchanged')
ok(res[16]['times'] == {'a': 1e-3} and res[16]['span'] == 1e-3, 'batch 16 unchanged')
print('untraced: %d passed, %d failed' % (npass, nfail))
sys.exit(1 if nfail else 0)
