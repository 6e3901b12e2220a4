"""Model building blocks, written so tensor parallelism only changes how weights are
split and which collective joins the partial results (``parallel.TensorParallel``)."""
