"""Assertions over what a deployment answered: firm quotes, records, reads that must agree."""
