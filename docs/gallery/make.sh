#!/usr/bin/env bash
# Draws the README gallery: one image of each `rectwin plot` kind, with its gnuplot script and
# data next to it. Results go to results/gallery/ (not committed); the measured CPU run is the
# committed one in experiments/measurements/cpu/exec-cpu/. From the repository root:
#   bash docs/gallery/make.sh [path/to/rectwin]
set -euo pipefail
R=${1:-build/release/cli/rectwin}
G=docs/gallery
W=results/gallery

# Inputs: flat DLRM on 8 DGX H100 nodes, the CPU scenario predicted (its measurement is
# committed), and two sweeps (rectwin sweep; their CSVs are committed next to the images):
# nodes x plan for scaling, the four plans at 64 GPUs for breakdown.
rm -rf $W/scaling $W/breakdown # fresh sweeps (rectwin sweep would resume finished points)
$R sim experiments/dlrm-criteo.yaml --engine analytic --quiet --out $W/flat
$R sim experiments/dlrm-criteo.yaml --quiet --out $W/pipeline --set plan.overlap=pipeline
$R sim experiments/exec-cpu.yaml --engine analytic --quiet --out $W/exec-cpu
$R sweep $G/scaling.yaml --quiet -j 2 --out $W/scaling && cp $W/scaling/sweep.csv $G/scaling.csv
$R sweep $G/breakdown.yaml --quiet -j 2 --out $W/breakdown && cp $W/breakdown/sweep.csv $G/breakdown.csv

$R plot roofline $W/flat -o $G/roofline.png
$R plot bwroofline $W/exec-cpu --measured experiments/measurements/cpu/exec-cpu -o $G/bwroofline.png
$R plot scaling $G/scaling.csv -o $G/scaling.png
$R plot breakdown $G/breakdown.csv --by plan.name -o $G/breakdown.png
$R plot compare $W/exec-cpu experiments/measurements/cpu/exec-cpu -o $G/compare.png
$R plot timeline $W/pipeline --ranks 2 -o $G/timeline.png
