package dataset

// Warning codes of reading datasets back (--from, --history).
const (
	WarnDatasetWithoutContext = "dataset_without_context" // a dataset lacks the analysis context
	WarnSkipStepsDiffer       = "skip_steps_differ"       // datasets were written with other --skip-steps than the others, or than the candidate
	WarnDatasetHardware       = "dataset_hardware"        // a dataset holds GPU metrics or CPU samples, which --from does not read back
)
