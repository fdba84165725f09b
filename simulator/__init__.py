"""rfqsim: a local simulator of a non-custodial RFQ trading venue."""

__version__ = "0.1.0"
