"""The ledger: every published number beside the reproduced one, and its verdict."""
