"""The pytest plugin, its options and `rfqsim conformance`."""
