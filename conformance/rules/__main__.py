"""`python -m conformance.rules`: list the spec rules and their ids."""

from conformance.rules import main

raise SystemExit(main())
