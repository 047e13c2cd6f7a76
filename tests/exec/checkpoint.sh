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
  grep -m1 -F -- "$msg" "$TMP/$name.log" || {
    cat "$TMP/$name.log"
    fail "$name: no message '$msg'"
  }
  [ "$(grep -c -F -- "$msg" "$TMP/$name.log")" -eq 1 ] || fail "$name: the message is repeated"
  refusals=$((refusals + 1))
}
refusals=0
dumpdir() { mkdir -p "$TMP/$1" && echo "$TMP/$1"; }
passed=0
same() { # same LABEL REF OTHER MODE [semantics.py options]: final tables of two --dump dirs
  local label=$1 ref=$2 other=$3
  shift 3
  python3 "$py" "$TMP/$ref" "$TMP/$other" "$@" --tables-only | sed "s/^/$label: /" ||
    fail "$label: $other differs from $ref"
  passed=$((passed + 1))
}
close=(close --adaptive "$adaptive" --lr 0.05)

# (A) the uninterrupted run; (B) 3 iterations and a checkpoint, then the rest.
ok 4 A --iterations 6 --warmup 0 --dump "$(dumpdir A)"
ok 4 B1 --iterations 3 --warmup 0 --checkpoint "$TMP/C"
for f in meta.json dense.bin shard.0.bin shard.3.bin; do
  [ -f "$TMP/C/$f" ] || fail "checkpoint file $f missing: $(ls "$TMP/C")"
done
[ "$(json "$TMP/C/meta.json" "j['next_iteration']")" = 3 ] || fail "next_iteration is not 3"

# At the same rank count the resumed run is the uninterrupted one, bit for bit: the checkpoint
# holds every value and optimizer state exactly and the run continues with iteration 3's
# batch and Adam step.
ok 4 B4 --resume "$TMP/C" --iterations 3 --warmup 0 --dump "$(dumpdir B4)"
same "4 -> 4 ranks" A B4 bitwise

# At 2 ranks, with the warm-up continuing the sequence (1 warm-up + 2 timed = iterations 3..5).
# Not bitwise: each iteration's dense gradient is now the sum of 2 partial sums of 32 samples
# instead of 4 of 16 (the AllReduce adds in another order), so the dense parameters differ in
# the last bits after the first resumed step and the embedding gradients flowing through them
# too; the adaptive optimizers magnify that for rows whose gradient nearly cancels
# (semantics.py's --adaptive bound), SGD tables must stay within 1e-6 relative.
ok 2 B2 --resume "$TMP/C" --warmup 1 --iterations 2 --dump "$(dumpdir B2)"
same "4 -> 2 ranks" A B2 "${close[@]}"
same "4 -> 2 ranks, SGD tables" A B2 close --skip "$adaptive"
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
print(f"4 -> 2 ranks, adaptive tables: worst absolute difference {w:.2e} (bound 5.00e-06)")
EOF

# At 8 ranks, and at 2 under other plans: FusedRec's hash-routed rows, MTGRBoost's two-stage
# dedup over row-wise shards, and a checkpoint saved by HSP (replicas written once).
ok 8 B8 --resume "$TMP/C" --iterations 3 --warmup 0 --dump "$(dumpdir B8)"
same "4 -> 8 ranks" A B8 "${close[@]}"
ok 2 Bf --resume "$TMP/C" --iterations 3 --warmup 0 --dump "$(dumpdir Bf)" \
  --set plan.name=fused --set plan.sharding=row_wise
same "4 -> 2 ranks, fused row-wise" A Bf "${close[@]}"
ok 2 Bd --resume "$TMP/C" --iterations 3 --warmup 0 --dump "$(dumpdir Bd)" \
  --set plan.sharding=row_wise --set plan.dedup=two_stage
same "4 -> 2 ranks, two-stage dedup row-wise" A Bd "${close[@]}"
ok 4 H1 --iterations 3 --warmup 0 --checkpoint "$TMP/CH" \
  --set plan.name=hsp --set plan.group_size=2 --set plan.sync=sparse
ok 2 H2 --resume "$TMP/CH" --iterations 3 --warmup 0 --dump "$(dumpdir H2)"
same "4 ranks hsp -> 2 ranks flat" A H2 "${close[@]}"

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
same "4 ranks 2 column shards -> 2 ranks whole" K K2 "${close[@]}"
ok 4 K4 --resume "$TMP/CK" --iterations 3 --warmup 0 --dump "$(dumpdir K4)" \
  --set plan.sharding=column_wise --set plan.column_shards=4
same "2 column shards -> 4 column shards" K K4 "${close[@]}"
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
# A well-formed checkpoint that lacks a row (the last row of shard.3.bin's last shard, with
# meta.json's size and checksum made to match) is refused with the table and row named.
rm -r "$TMP/Cbad" && cp -r "$TMP/C" "$TMP/Cbad"
row=$(python3 - "$TMP/Cbad" <<'EOF'
import json, struct, sys
d = sys.argv[1]
b = bytearray(open(d + "/shard.3.bin", "rb").read())
at, last = 24, None
for _ in range(struct.unpack_from("<i", b, 20)[0]):  # shards: header, then rows
    table, col0, width, dtype, opt, _, rows = struct.unpack_from("<6iQ", b, at)
    rec = 8 + width * (4 if dtype == 0 else 2) + 4 * [0, width, 1, 2 * width][opt]
    if rows:
        last = (at, table, rows, rec)
    at += 32 + rows * rec
at, table, rows, rec = last
row = struct.unpack_from("<Q", b, at + 32 + (rows - 1) * rec)[0]
struct.pack_into("<Q", b, at + 24, rows - 1)
del b[at + 32 + (rows - 1) * rec:at + 32 + rows * rec]
open(d + "/shard.3.bin", "wb").write(b)
h = 0xcbf29ce484222325
for x in b:
    h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
m = json.load(open(d + "/meta.json"))
m["files"]["shard.3.bin"] = {"bytes": len(b), "fnv1a64": "%016x" % h}
json.dump(m, open(d + "/meta.json", "w"), indent=2)
print(f"table 'cat_{table}' row {row} (column 0) is in no shard file")
EOF
)
refused 2 missing_row "$row" --resume "$TMP/Cbad" --iterations 1

# A killed save leaves DIR.tmp.<pid> behind: it is no checkpoint, and the next save neither
# uses nor touches it. Resuming from C and saving into C again replaces C whole.
mkdir "$TMP/C.tmp.999999"
head -c 100 "$TMP/C/shard.0.bin" >"$TMP/C.tmp.999999/shard.0.bin"
refused 4 leftover "C.tmp.999999 is not a checkpoint: it has no meta.json" \
  --resume "$TMP/C.tmp.999999" --iterations 1
before=$(json "$TMP/C/meta.json" "j['next_iteration']")
ok 4 again --resume "$TMP/C" --iterations 3 --warmup 0 --checkpoint "$TMP/C"
grep -q "C.tmp.999999 is left over from an interrupted save" "$TMP/again.log" ||
  fail "no note of the leftover"
[ "$(json "$TMP/C/meta.json" "j['next_iteration']")" = $((before + 3)) ] || fail "C not replaced"
[ "$(ls "$TMP/C.tmp.999999")" = shard.0.bin ] || fail "the leftover was touched"
for d in "$TMP"/C.old.* "$TMP"/C.tmp.*; do
  [ ! -e "$d" ] || [ "$d" = "$TMP/C.tmp.999999" ] || fail "the save left $d behind"
done
# A directory that is not a checkpoint is never replaced.
mkdir "$TMP/notckpt" && echo keep >"$TMP/notckpt/notes.txt"
refused 4 foreign "holds 'notes.txt', which no checkpoint writes" --iterations 1 \
  --checkpoint "$TMP/notckpt"
[ "$(cat "$TMP/notckpt/notes.txt")" = keep ] || fail "a foreign directory was touched"
echo "checkpoint: $((passed + refusals + 2)) passed, 0 failed"
