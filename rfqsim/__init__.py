"""The `rfqsim` command line and the tools it runs that are not the simulator itself."""
