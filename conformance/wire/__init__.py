"""Talking to a deployment: the HTTP client and its checks of the conventions every answer
follows, the chain, signing, the inputs a QA team gives, the suite's own servers."""
