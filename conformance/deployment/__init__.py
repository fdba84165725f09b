"""The deployment under test: the target (a simulator the suite starts, or a URL), its
control when there is one, its venue read from the chain, the clock, funding and loans."""
