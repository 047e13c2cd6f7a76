#!/usr/bin/env python3
"""Writes N synthetic lines in the Criteo TSV layout, for trying `rectwin-exec --data FILE`
without the real Criteo data.

Each line is `label <TAB> I1..I13 <TAB> C1..C26` (counts in decimal, categorical hashes as 8
hex digits, some fields empty, a few counts negative, as in the real logs). The label carries a
planted signal that a model can learn, so the loss should fall below that of always predicting
the positive rate:

    score = 1.6 w(C1) + 1.2 w(C2) + 0.8 w(C3) * w(C4) + 0.7 (log1p(I1) - 1.5)
            - 0.5 (log1p(max(I3, 0)) - 2) - 0.6
    label = 1 if score + N(0, noise) > 0 else 0

where w(h) = ((h * 0x9E3779B1 mod 2^32) >> 16) / 32767.5 - 1, in [-1, 1], is a fixed function
of the hash (a missing C field counts as w = 0, a missing I field as 0). C1..C4 draw from small
vocabularies so that every value recurs; the other C fields are noise with vocabularies of 10
to 10^6 values. Output is fully determined by N and --seed.

Usage: gen-criteo-sample.py N [-o FILE] [--seed S] [--noise SD]
"""

import argparse
import math
import random
import sys

N_DENSE = 13
N_CAT = 26
# Vocabulary size and share of missing values per categorical feature: the first four carry
# the signal and are never missing.
CAT_VOCAB = [50, 200, 20, 10] + [10 ** (1 + i % 6) for i in range(N_CAT - 4)]
CAT_MISSING = [0.0] * 4 + [(0.0, 0.02, 0.3, 0.05)[i % 4] for i in range(N_CAT - 4)]
# Log-normal counts per integer feature (mu, sigma of log(1 + count)) and share missing.
DENSE_MU = [1.5, 1.0, 2.0, 0.5, 3.0, 1.0, 2.5, 0.8, 1.8, 0.3, 1.2, 0.2, 1.0]
DENSE_MISSING = [0.05, 0.0, 0.2, 0.2, 0.02, 0.25, 0.05, 0.0, 0.05, 0.4, 0.05, 0.7, 0.2]


def mix32(x):
    """A 32-bit integer hash (the finalizer of MurmurHash3), to turn indices into hashes."""
    x &= 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & 0xFFFFFFFF
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & 0xFFFFFFFF
    x ^= x >> 16
    return x


def weight(h):
    """The fixed [-1, 1] weight of a hash in the planted score."""
    return (((h * 0x9E3779B1) & 0xFFFFFFFF) >> 16) / 32767.5 - 1.0


def cat_hash(seed, c, index):
    return mix32(mix32(seed * 1000003 + c) ^ (index * 0x27D4EB2F))


def generate(n, seed, noise, out):
    rng = random.Random(seed)
    positives = 0
    for _ in range(n):
        counts = []
        for j in range(N_DENSE):
            if rng.random() < DENSE_MISSING[j]:
                counts.append(None)
                continue
            x = int(math.expm1(max(0.0, rng.gauss(DENSE_MU[j], 1.0))))
            # Criteo's I2 holds small negative values now and then.
            if j == 1 and rng.random() < 0.05:
                x = -rng.randint(1, 3)
            counts.append(x)
        hashes = []
        for c in range(N_CAT):
            if rng.random() < CAT_MISSING[c]:
                hashes.append(None)
                continue
            # Log-uniform index: a few values are frequent, most are rare, as in click logs.
            index = int(CAT_VOCAB[c] ** rng.random()) - 1
            hashes.append(cat_hash(seed, c, index))

        def w(c):
            return 0.0 if hashes[c] is None else weight(hashes[c])

        def lc(j):
            return 0.0 if counts[j] is None else math.log1p(max(counts[j], 0))

        score = (1.6 * w(0) + 1.2 * w(1) + 0.8 * w(2) * w(3) + 0.7 * (lc(0) - 1.5)
                 - 0.5 * (lc(2) - 2.0) - 0.6)
        label = 1 if score + rng.gauss(0.0, noise) > 0 else 0
        positives += label
        fields = [str(label)]
        fields += ["" if x is None else str(x) for x in counts]
        fields += ["" if h is None else "%08x" % h for h in hashes]
        out.write("\t".join(fields) + "\n")
    return positives


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, help="lines (samples) to write")
    ap.add_argument("-o", "--output", help="file to write (default: standard output)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--noise", type=float, default=0.3,
                    help="standard deviation of the noise added to the score (default 0.3)")
    args = ap.parse_args()
    if args.n < 1 or args.seed < 0 or args.noise < 0:
        ap.error("N must be positive, --seed and --noise not negative")
    try:
        if args.output:
            with open(args.output, "w", newline="\n", encoding="ascii") as out:
                positives = generate(args.n, args.seed, args.noise, out)
        else:
            positives = generate(args.n, args.seed, args.noise, sys.stdout)
            sys.stdout.flush()
    except OSError as e:
        print("gen-criteo-sample: %s" % e, file=sys.stderr)
        return 1
    print("gen-criteo-sample: %d lines, %.1f%% positive" % (args.n, 100.0 * positives / args.n),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
