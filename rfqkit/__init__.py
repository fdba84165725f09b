"""What every rfqsim process shares (the simulator, the maker fleet, the provider sandbox, the
conformance suite and load tests): wallets, the Anvil runner, the JSON-RPC chain client, task
helpers, webhook signatures and receivers. It imports none of those packages."""
