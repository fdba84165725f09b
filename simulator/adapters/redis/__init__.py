"""The shared engine of several instances: a Redis server (started like Anvil, or reached by URL)
and the stores that keep on it the state every instance must see the same."""
