#!/usr/bin/env bash
# Checkpoint and resume on another rank count (MTGRBoost, seed 000, resumes its jobs on another
# GPU count): 6 iterations at 4 ranks against 3 at 4 ranks, a checkpoint, and 3 more resumed at
# 2 (and 8) ranks, on the toy Criteo DLRM (26 tables, every sparse optimizer) with a generated
# Criteo file. The global batch is 64 at every rank count, and --data gives iteration k the
# samples [64k, 64k + 64) whatever the rank count, so every run trains on the same samples.
source "$(dirname "$0")/lib.sh"
CRITEO=$SRC/tests/data/exec-criteo.yaml
DATA=$TMP/criteo.tsv
python3 "$SRC/scripts/gen-criteo-sample.py" 2000 -o "$DATA" --seed 3 2>/dev/null ||
  fail "gen-criteo-sample.py"
py=$(dirname "$0")/semantics.py
# Tables t with t mod 4 = 1, 2, 3 use Adagrad, row-wise Adagrad and Adam (exec-criteo-model.yaml).
adaptive=$(python3 -c "print(','.join(str(t) for t in range(26) if t % 4))")

# lib.sh's MPIRUN starts 4 ranks; NP ranks here.
mpirun_np() { # mpirun_np NP command...
  local np=$1 m=("${MPIRUN[@]}") i
  shift
  for i in "${!m[@]}"; do [ "${m[$i]}" = -np ] && m[i + 1]=$np; done
  timeout -k 10 300 "${m[@]}" "$@"
}
# ck NP NAME [args...]: rectwin-exec on exec-criteo at NP ranks, output in $TMP/NAME.log
ck() {
  local np=$1 name=$2
  shift 2
  mpirun_np "$np" "$EXEC" "$CRITEO" --quiet --out "$TMP/$name.out" --data "$DATA" \
    --set topology.nodes="$np" "$@" >"$TMP/$name.log" 2>&1
}
ok() { # ok NP NAME [args...]: must succeed
  ck "$@" || {
    cat "$TMP/$2.log"
    fail "$2"
  }
}
refused() { # refused NP NAME MESSAGE [args...]: must fail, saying MESSAGE (once)
  local np=$1 name=$2 msg=$3
  shift 3
  if ck "$np" "$name" "$@"; then
    cat "$TMP/$name.log"
    fail "$name: the run succeeded"
  fi
  grep -F -- "$msg" "$TMP/$name.log" | head -1 || {
    cat "$TMP/$name.log"
    fail "$name: no message '$msg'"
  }
  [ "$(grep -c -F -- "$msg" "$TMP/$name.log")" -eq 1 ] || fail "$name: the message is repeated"
}
dumpdir() { mkdir -p "$TMP/$1" && echo "$TMP/$1"; }

# (A) the uninterrupted run; (B) 3 iterations and a checkpoint, then the rest.
ok 4 A --iterations 6 --warmup 0 --dump "$(dumpdir A)"
ok 4 B1 --iterations 3 --warmup 0 --checkpoint "$TMP/C"
[ -f "$TMP/C/meta.json" ] && [ -f "$TMP/C/shard.3.bin" ] && [ -f "$TMP/C/dense.bin" ] ||
  fail "checkpoint files missing: $(ls "$TMP/C")"
[ "$(json "$TMP/C/meta.json" "j['next_iteration']")" = 3 ] || fail "next_iteration is not 3"

# At the same rank count the resumed run is the uninterrupted one, bit for bit: the checkpoint
# holds every value and optimizer state exactly and the run continues with iteration 3's
# batch and Adam step.
ok 4 B4 --resume "$TMP/C" --iterations 3 --warmup 0 --dump "$(dumpdir B4)"
python3 "$py" "$TMP/A" "$TMP/B4" bitwise --tables-only || fail "4-rank resume differs from A"

# At 2 ranks, with the warm-up continuing the sequence (1 warm-up + 2 timed = iterations 3..5).
# Not bitwise: each iteration's dense gradient is now the sum of 2 partial sums of 32 samples
# instead of 4 of 16 (the AllReduce adds in another order), so the dense parameters differ in
# the last bits after the first resumed step and the embedding gradients flowing through them
# too; the adaptive optimizers magnify that for rows whose gradient nearly cancels
# (semantics.py's --adaptive bound), SGD tables must stay within 1e-6 relative.
ok 2 B2 --resume "$TMP/C" --warmup 1 --iterations 2 --dump "$(dumpdir B2)"
python3 "$py" "$TMP/A" "$TMP/B2" close --tables-only --adaptive "$adaptive" --lr 0.05 ||
  fail "2-rank resume differs from A"
python3 "$py" "$TMP/A" "$TMP/B2" close --tables-only --skip "$adaptive" | sed 's/^/sgd /' ||
  fail "2-rank resume: SGD tables differ from A"
python3 - "$TMP/A" "$TMP/B2" "$adaptive" <<'EOF'
import glob, sys
def load(d):
    v = {}
    for p in glob.glob(d + "/table.*.txt"):
        for line in open(p):
            f = line.split()
            for j, x in enumerate(f[3:]):
                v[(int(f[0]), int(f[1]), int(f[2]) + j)] = float(x)
    return v
a, b, ad = load(sys.argv[1]), load(sys.argv[2]), {int(t) for t in sys.argv[3].split(",")}
w = max(abs(x - b[k]) for k, x in a.items() if k[0] in ad)
print(f"adaptive tables: worst absolute difference {w:.2e} (bound 0.05 x 1e-4 = 5.00e-06)")
EOF

# At 8 ranks, and at 2 under other plans: FusedRec's hash-routed rows, MTGRBoost's two-stage
# dedup over row-wise shards, and a checkpoint saved by HSP (replicas written once).
ok 8 B8 --resume "$TMP/C" --iterations 3 --warmup 0 --dump "$(dumpdir B8)"
python3 "$py" "$TMP/A" "$TMP/B8" close --tables-only --adaptive "$adaptive" --lr 0.05 ||
  fail "8-rank resume differs from A"
ok 2 Bf --resume "$TMP/C" --iterations 3 --warmup 0 --dump "$(dumpdir Bf)" \
  --set plan.name=fused --set plan.sharding=row_wise
python3 "$py" "$TMP/A" "$TMP/Bf" close --tables-only --adaptive "$adaptive" --lr 0.05 ||
  fail "fused row-wise resume differs from A"
ok 2 Bd --resume "$TMP/C" --iterations 3 --warmup 0 --dump "$(dumpdir Bd)" \
  --set plan.sharding=row_wise --set plan.dedup=two_stage
python3 "$py" "$TMP/A" "$TMP/Bd" close --tables-only --adaptive "$adaptive" --lr 0.05 ||
  fail "dedup row-wise resume differs from A"
ok 4 H1 --iterations 3 --warmup 0 --checkpoint "$TMP/CH" \
  --set plan.name=hsp --set plan.group_size=2 --set plan.sync=sparse
ok 2 H2 --resume "$TMP/CH" --iterations 3 --warmup 0 --dump "$(dumpdir H2)"
python3 "$py" "$TMP/A" "$TMP/H2" close --tables-only --adaptive "$adaptive" --lr 0.05 ||
  fail "resume of an HSP checkpoint differs from A"

# Column ranges: saved as 2 column shards per table, resumed whole at 2 ranks and as 4 column
# shards at 4. Row-wise Adagrad keeps one state per row of each column shard, which cannot be
# split or merged, so this model replaces it by Adagrad.
sed -e 's/^name: exec-criteo$/name: exec-criteo-cols/' -e 's/rowwise_adagrad/adagrad/' \
  "$SRC/tests/data/exec-criteo-model.yaml" >"$TMP/cols-model.yaml"
sed -e "s|file: exec-criteo-model.yaml|file: $TMP/cols-model.yaml|" \
  -e "s|file: ../../topologies|file: $SRC/topologies|" "$CRITEO" >"$TMP/cols.yaml"
CRITEO=$TMP/cols.yaml
ok 4 K --iterations 6 --warmup 0 --dump "$(dumpdir K)"
ok 4 K1 --iterations 3 --warmup 0 --checkpoint "$TMP/CK" \
  --set plan.sharding=column_wise --set plan.column_shards=2
ok 2 K2 --resume "$TMP/CK" --iterations 3 --warmup 0 --dump "$(dumpdir K2)"
python3 "$py" "$TMP/K" "$TMP/K2" close --tables-only --adaptive "$adaptive" --lr 0.05 ||
  fail "merged column shards differ"
ok 4 K4 --resume "$TMP/CK" --iterations 3 --warmup 0 --dump "$(dumpdir K4)" \
  --set plan.sharding=column_wise --set plan.column_shards=4
python3 "$py" "$TMP/K" "$TMP/K4" close --tables-only --adaptive "$adaptive" --lr 0.05 ||
  fail "split column shards differ"
refused 4 other_model "the checkpoint is of model 'exec-criteo', this run's model is" \
  --resume "$TMP/C" --iterations 1
CRITEO=$SRC/tests/data/exec-criteo.yaml
refused 2 rowwise "table 'cat_2' uses row-wise Adagrad" --resume "$TMP/C" --iterations 1 \
  --set plan.sharding=column_wise --set plan.column_shards=2

# Damaged checkpoints are refused with the file named.
cp -r "$TMP/C" "$TMP/Cbad"
python3 -c "import sys; f = open(sys.argv[1], 'r+b'); f.seek(4000); b = f.read(1); f.seek(4000); \
f.write(bytes([b[0] ^ 1]))" "$TMP/Cbad/shard.1.bin"
refused 2 corrupt "Cbad/shard.1.bin: checksum fnv1a64" --resume "$TMP/Cbad" --iterations 1
rm "$TMP/Cbad/shard.1.bin"
refused 2 missing "cannot open $TMP/Cbad/shard.1.bin" --resume "$TMP/Cbad" --iterations 1

# A killed save leaves DIR.tmp.<pid> behind: it is no checkpoint, and the next save neither
# uses nor touches it. Resuming from C and saving into C again replaces C whole.
mkdir "$TMP/C.tmp.999999"
head -c 100 "$TMP/C/shard.0.bin" >"$TMP/C.tmp.999999/shard.0.bin"
refused 4 leftover "C.tmp.999999/meta.json: cannot open" --resume "$TMP/C.tmp.999999" \
  --iterations 1
before=$(json "$TMP/C/meta.json" "j['next_iteration']")
ok 4 again --resume "$TMP/C" --iterations 3 --warmup 0 --checkpoint "$TMP/C"
grep -q "C.tmp.999999 is left over from an interrupted save" "$TMP/again.log" ||
  fail "no note of the leftover"
[ "$(json "$TMP/C/meta.json" "j['next_iteration']")" = $((before + 3)) ] || fail "C not replaced"
[ "$(ls "$TMP/C.tmp.999999")" = shard.0.bin ] || fail "the leftover was touched"
left=$(ls -d "$TMP"/C.old.* "$TMP"/C.tmp.* 2>/dev/null | grep -v 'C.tmp.999999$' || true)
[ -z "$left" ] || fail "the save left $left behind"
# A directory that is not a checkpoint is never replaced.
mkdir "$TMP/notckpt" && echo keep >"$TMP/notckpt/notes.txt"
refused 4 foreign "holds 'notes.txt', which no checkpoint writes" --iterations 1 \
  --checkpoint "$TMP/notckpt"
[ "$(cat "$TMP/notckpt/notes.txt")" = keep ] || fail "a foreign directory was touched"
echo "checkpoint: 19 passed, 0 failed"
