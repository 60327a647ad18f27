"""The products: tables and figures of the experiments, and how they are written."""
