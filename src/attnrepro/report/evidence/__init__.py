"""The ledger's evidence, evaluated and rendered: numerics sweep, seeds, listings."""
