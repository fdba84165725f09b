"""rfqsim benchmarks: `just bench` (python -m bench) measures and rewrites docs/performance.md."""
