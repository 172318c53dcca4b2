// An empty preload: what merely loading one more library into a process costs.
void lnp_benchmark_empty(void) {}
