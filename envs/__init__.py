"""envs subpackage."""
