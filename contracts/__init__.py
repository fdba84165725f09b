"""Our Solidity contracts (sources in `src/`, committed build output in `artifacts/`) and the
pure-Python helpers that encode, hash and sign for them (`orders`, `signatures`)."""
