"""What a job asks for: its peak memory and its wall time, estimated from its parameters."""
