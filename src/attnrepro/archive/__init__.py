"""The archive of a run (manifest, RO-Crate) and `verify`, which checks one."""
