#!/usr/bin/env bash
# Draws the README gallery: one image of each `rectwin plot` kind, with its gnuplot script and
# data next to it. Results go to results/gallery/ (not committed); the measured CPU run is the
# committed one in experiments/measurements/cpu/exec-cpu/. From the repository root:
#   bash docs/gallery/make.sh [path/to/rectwin]
set -euo pipefail
R=${1:-build/release/cli/rectwin}
G=docs/gallery
W=results/gallery

# Inputs: four plans of DLRM on 8 DGX H100 nodes, the CPU scenario predicted (its
# measurement is committed), and a sweep over nodes x plan written as a sweep table.
for plan in flat fused sptt hsp; do
  $R sim experiments/dlrm-criteo.yaml --engine analytic --quiet --out $W/$plan --set plan.name=$plan
done
$R sim experiments/dlrm-criteo.yaml --quiet --out $W/pipeline --set plan.overlap=pipeline
$R sim experiments/exec-cpu.yaml --engine analytic --quiet --out $W/exec-cpu
bash $G/sweep.sh "$R" $W/sweep >$G/sweep.csv

$R plot roofline $W/flat -o $G/roofline.png
$R plot bwroofline $W/exec-cpu --measured experiments/measurements/cpu/exec-cpu -o $G/bwroofline.png
$R plot scaling $G/sweep.csv -o $G/scaling.png
$R plot breakdown $W/flat $W/fused $W/sptt $W/hsp -o $G/breakdown.png
$R plot compare $W/exec-cpu experiments/measurements/cpu/exec-cpu -o $G/compare.png
$R plot timeline $W/pipeline --ranks 2 -o $G/timeline.png
