"""Per-process medians of the host-placement probes (README.md): python3 summarize.py > summary.log"""
import glob, os, re, statistics as st

def times(path, field):
    out = []
    for line in open(path):
        p = line.split()
        if len(p) > field and re.match(r'^[\d.]+$', p[field]):
            out.append(float(p[field]))
    return out

def key(p):
    return int(re.sub(r'\D', '', os.path.basename(p)) or 0)

def per_process(title, pattern, field, skip=0):
    print(f'# {title}')
    slow = n = 0
    for f in sorted(glob.glob(pattern), key=key):
        t = times(f, field)[skip:]
        m = st.median(t)
        n += 1
        slow += m > 6
        print(f'{os.path.basename(f):14s} calls {len(t):3d}  median {m:6.2f} ms  min {min(t):6.2f}  max {max(t):6.2f}')
    print(f'processes with median above 6 ms: {slow} of {n}\n')

per_process('9.5 MB MPI_Allreduce, 2 ranks, copy-in/copy-out (ar_probe.c; both timings)', 'ar/p*.log', 2)
def by_kind(pattern):
    kinds = {}
    for f in glob.glob(pattern):
        for line in open(f):
            p = line.split()
            if len(p) == 3 and p[0].startswith('after_'):
                kinds.setdefault(p[0], []).append(float(p[2]))
    print('# ' + pattern + ', all calls by how the ranks entered: ' + '; '.join(
        '%s %d calls, median %.2f ms' % (k, len(v), st.median(v)) for k, v in sorted(kinds.items())) + '\n')

by_kind('ar/p*.log')
per_process('the same, interleaved with xcore_probe (interleave.log)', 'interleave/q*.log', 2)
per_process('the same with single_copy_mechanism=cma', 'cma/c*.log', 2)
print('# 1-byte MPI round trip and 9.5 MB MPI_Allreduce per call, 2 ranks (ar_xcore.c); calls 3.. (the first two touch the shared memory)')
for f in sorted(glob.glob('xcore-pair-*.log'), key=key):
    rtt, ar = times(f, 1)[2:], times(f, 3)[2:]
    print(f'{os.path.basename(f):18s} rtt median {st.median(rtt):.2f} us  allreduce median {st.median(ar):6.2f} ms')
print()
for name in ('xcore-20s.log',):
    rtt, rd = times(name, 2), times(name, 4)
    print(f'# {name}: {len(rtt)} samples, cache-line round trip median {st.median(rtt):.0f} ns (max {max(rtt):.0f}), '
          f'cross-core read median {st.median(rd):.1f} GB/s (min {min(rd):.1f})')
for name in ('copy-9.5MB.log', 'copy-256MB.log'):
    g = times(name, 1)
    print(f'# {name}: {len(g)} windows of 0.25 s, memcpy median {st.median(g):.1f} GB/s, min {min(g):.1f}, max {max(g):.1f}')
pairs = [tuple(map(float, p.split('/'))) for p in re.findall(r'(\d+/[\d.]+)', open('interleave/interleave.log').read())]
slow = [p for p in pairs if p[1] < 35]
fast = [p for p in pairs if p[1] >= 35]
print(f'# interleave.log: {len(pairs)} xcore_probe samples around the q runs; {len(slow)} with a cross-core read below 35 GB/s: '
      f'round trip {min(p[0] for p in slow):.0f}-{max(p[0] for p in slow):.0f} ns, read {min(p[1] for p in slow):.1f}-{max(p[1] for p in slow):.1f} GB/s; '
      f'the other {len(fast)}: {min(p[0] for p in fast):.0f}-{max(p[0] for p in fast):.0f} ns, {min(p[1] for p in fast):.1f}-{max(p[1] for p in fast):.1f} GB/s')
