#!/bin/bash
# Paper figure vs rectwin's prediction, one plot per section of README.md (issue 11).
# Runs the five scripts of this directory (their printed output is kept as plots/<script>.txt),
# writes one data file per plot (plots/<plot>.dat: predicted values parsed from that output,
# paper values from paper-figures.csv, the papers' published figures) and draws each
# plots/<plot>.gp into plots/<plot>.png with gnuplot (redraw one: cd plots && gnuplot dmt.gp).
# usage: [ENGINE=analytic|simgrid] [REUSE=1] experiments/papers/plots.sh [RECTWIN]
#   REUSE=1 parses the plots/<script>.txt already there instead of running the scripts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-$here/../../build/release/cli/rectwin}
R=$(cd "$(dirname "$R")" && pwd)/$(basename "$R")
export ENGINE=${ENGINE:-analytic}
out=$here/plots
mkdir -p "$out"

for s in dmt fusedrec turbogr mtgrboost-dedup mtgrboost-balance; do
    if [ "${REUSE:-}" = 1 ] && [ -s "$out/$s.txt" ]; then continue; fi
    echo "running $s.sh ($ENGINE)" >&2
    { echo "# engine: $ENGINE"; "$here/$s.sh" "$R"; } > "$out/$s.txt.tmp"
    mv "$out/$s.txt.tmp" "$out/$s.txt"
done

python3 - "$here" <<'PY'
import csv, re, sys
here = sys.argv[1]; out = here + '/plots'

paper = {}  # (section, quantity, config, kind) -> (value, source)
with open(here + '/paper-figures.csv') as f:
    for r in csv.DictReader(l for l in f if not l.startswith('#')):
        paper[(r['section'], r['quantity'], r['config'], r['kind'])] = (float(r['value']), r['source'])
def P(*k): return paper[k][0]

def lines(script):
    with open('%s/%s.txt' % (out, script)) as f:
        t = f.read().splitlines()
    engine = t[0].split(': ', 1)[1]
    return engine, t[1:]

def write(name, engine, script, blocks):
    with open('%s/%s.dat' % (out, name), 'w') as f:
        f.write('# engine: %s\n# predicted: parsed from plots/%s.txt (output of %s.sh); '
                'paper: paper-figures.csv\n' % (engine, script, script))
        f.write('\n\n\n'.join('\n'.join(['# ' + b[0]] + b[1:]) for b in blocks) + '\n')

def rows(t, first_col_re, ncols):
    return [l.split() for l in t if re.match(first_col_re, l) and len(l.split()) == ncols]

# DMT: index 0 predicted per host count, index 1 the paper's bounds
engine, t = lines('dmt')
pred = {(r[0], r[1]): r for r in rows(t, r'^(dlrm|dcn) ', 9)}
b0 = ['hosts dlrm_sptt dcn_sptt dlrm_dmt dcn_dmt dlrm_tm dcn_tm']
for h in ('16', '32', '64'):
    d, c = pred[('dlrm', h)], pred[('dcn', h)]
    b0.append(' '.join([h, d[6], c[6], d[7], c[7], d[8], c[8]]))
b1 = ['panel value label']
b1.append('10 %g "paper Fig. 10, DLRM: up to %gx"' % ((P('dmt', 'dmt_over_flat', 'dlrm', 'up_to'),) * 2))
b1.append('10 %g "paper Fig. 10, DCN: up to %gx"' % ((P('dmt', 'dmt_over_flat', 'dcn', 'up_to'),) * 2))
assert P('dmt', 'tm_over_sptt', 'dlrm', 'up_to') == P('dmt', 'tm_over_sptt', 'dcn', 'up_to')
b1.append('11 %g "paper Fig. 11, DLRM and DCN: up to %gx"' % ((P('dmt', 'tm_over_sptt', 'dlrm', 'up_to'),) * 2))
write('dmt', engine, 'dmt', [b0, b1])

# FusedRec: index 0 Fig. 6 gains per GPU count, index 1 Fig. 7a ratios, index 2 paper averages
engine, t = lines('fusedrec')
b0 = ['gpus vs_tfra_pct vs_tfra_fused_pct']
for r in rows(t, r'^\d+ ', 6):
    b0.append('%s %s %s' % (r[0], r[4].rstrip('%'), r[5].rstrip('%')))
m = [l for l in t if l.startswith('fewer rounds')][0]
rr, ri, re_ = map(float, re.findall(r'([\d.]+)x', m))
b1 = ['quantity paper predicted',
      '"fewer AlltoAll rounds" %g %g' % (P('fusedrec', 'fewer_rounds', '32 GPUs', 'value'), rr),
      '"more IDs per AlltoAll" %g %g' % (P('fusedrec', 'larger_messages', '32 GPUs', 'value'), ri)]
b2 = ['value label',
      '%g "paper Fig. 6: +%g%% over TFRA (average)"' % ((P('fusedrec', 'gain_vs_tfra', '8-128 GPUs', 'average'),) * 2),
      '%g "paper Fig. 6: +%g%% over TFRA-fused (average)"' % ((P('fusedrec', 'gain_vs_tfra_fused', '8-128 GPUs', 'average'),) * 2)]
write('fusedrec', engine, 'fusedrec', [b0, b1, b2])

# TurboGR: index 0 Table 1 MFU per model (predicted NaN + note where refused),
# index 1 Tables 4 and 5 changes (%)
engine, t = lines('turbogr')
b0 = ['model paper_pct predicted_pct note']
for l in t:
    m = re.match(r'^\s+((hstu|fuxi)-\w+)\s+([\d.]+)\s+(\S+)(.*)$', l)
    if not m: continue
    p = P('turbogr', 'mfu', m.group(1), 'value')
    assert abs(p - float(m.group(3))) < 1e-9, (m.group(1), p, m.group(3))
    if m.group(4) == '-':
        gb = re.search(r'needs ([\d.]+) GB', m.group(5)).group(1)
        b0.append('%s %g NaN "refused: %s GB > 64 GB"' % (m.group(1), p, gb))
    else:
        b0.append('%s %g %s ""' % (m.group(1), p, m.group(4)))
def row(name):
    return [float(x.rstrip('%')) for x in [l for l in t if re.match(r'^\s+%s\s' % name, l)][0].split()[1:]]
fl, hs, sy, sa = row('flat'), row('hsp'), row('sync'), row('semi_async')
def chg(a, b): return 100 * (b / a - 1)
b1 = ['quantity paper_pct predicted_pct',
      '"Table 4: AlltoAll time, flat -> hsp" %.1f %.1f' % (chg(P('turbogr', 'a2a_ms', 'flat', 'value'), P('turbogr', 'a2a_ms', 'hsp', 'value')), chg(fl[0], hs[0])),
      '"Table 4: total comm, flat -> hsp" %.1f %.1f' % (chg(P('turbogr', 'comm_ms', 'flat', 'value'), P('turbogr', 'comm_ms', 'hsp', 'value')), chg(fl[1], hs[1])),
      '"Table 5: unmasked comm, sync -> semi-async" %.1f %.1f' % (chg(P('turbogr', 'unmasked_ms', 'sync', 'value'), P('turbogr', 'unmasked_ms', 'semi_async', 'value')), chg(sy[0], sa[0]))]
write('turbogr', engine, 'turbogr', [b0, b1])

# MTGRBoost dedup: index 0 predicted ratios per GPU count, index 1 the paper's range
engine, t = lines('mtgrboost-dedup')
b0 = ['gpus comm_x lookup_x two_stage_x']
for r in rows(t, r'^\d+ ', 8):
    b0.append(' '.join([r[0]] + [x.rstrip('x') for x in r[5:8]]))
lo, hi = P('mtgrboost-dedup', 'two_stage_over_none', '16-128 GPUs', 'range_low'), P('mtgrboost-dedup', 'two_stage_over_none', '16-128 GPUs', 'range_high')
b1 = ['value label', '%g "paper Fig. 16: two-stage / none from %gx"' % (lo, lo), '%g "paper Fig. 16: two-stage / none up to %gx (growing with GPUs)"' % (hi, hi)]
write('mtgrboost-dedup', engine, 'mtgrboost-dedup', [b0, b1])

# MTGRBoost balancing: index 0 predicted gains per GPU count, index 1 the paper's average
engine, t = lines('mtgrboost-balance')
b0 = ['gpus dynamic_batching_pct token_realloc_pct']
for r in rows(t, r'^\d+ ', 6):
    b0.append(' '.join([r[0], r[4].rstrip('%'), r[5].rstrip('%')]))
a = P('mtgrboost-balance', 'balancing_gain', 'GRM 4G 8-64 GPUs', 'average')
b1 = ['value label', '%g "paper Fig. 14: +%g%% on average (GRM 4G, 8-64 GPUs)"' % (a, a)]
write('mtgrboost-balance', engine, 'mtgrboost-balance', [b0, b1])
PY

cd "$out"
for p in dmt fusedrec turbogr mtgrboost-dedup mtgrboost-balance; do gnuplot "$p.gp"; done
ls -1 "$out"/*.png
