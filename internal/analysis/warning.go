package analysis

// Warning codes of merging inputs and of the commands built on them (the
// inputs' codes are package nsys's Warn*, the statistics' package stats',
// reading datasets back internal/dataset's).
const (
	WarnStepDiffers  = "step_differs"  // inputs use different step ranges
	WarnNoKeptSteps  = "no_kept_steps" // boundary: no step left after --skip-steps
	WarnPhasesFolded = "phases_folded" // more distinct phases than MaxPhases: the rest are one phase
	WarnArmsFolded   = "arms_folded"   // more arms than budget.Arms: the rest are one arm
	// analyze --within-run on inputs of one arm: nothing to compare
	WarnWithinRunOneArm = "within_run_one_arm"
)
