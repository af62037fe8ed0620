// Package analysis runs the pipeline for `nsysphase analyze` and the commands
// built on it: it reads each export (nsys), segments and attributes it
// (phases), merges the files' instances into arms and units, computes the
// statistics (stats) and assembles the JSON contract. Its tables, and the
// Doc rebuilt from them (--from, --history), are package internal/dataset,
// above this one.
//
// Files, in the order data flows:
//
//   - read.go: the inputs (globs, file arms, run manifests) opened and
//     segmented, one FileResult per export;
//   - provenance.go: what each export says about the run that produced it;
//   - units.go: the one adapter from phases to stats (instances placed in
//     units and kept steps) and the one unit-start clock;
//   - build.go: Build merges the files and runs the statistics into a Doc;
//   - contract.go: the JSON contract (Doc and its rows);
//   - warning.go: the warning codes of this stage;
//   - inventory*.go, boundary.go, verdict.go: the commands built on the
//     same reading (inventory, boundary, verdict).
package analysis
